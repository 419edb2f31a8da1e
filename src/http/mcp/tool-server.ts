import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../../auth/principal.js";
import { toolOf } from "../../bridge/mcp/index.js";
import type { AgentRegistry, RegisteredAgent } from "../../config/registry.js";
import { RPC, type ToolCalls } from "./tool-calls.js";

/** The package's name and version, as the server names itself in `initialize`. */
export const SERVER_INFO = { name: "acp-agui", version: "0.2.0" };

/**
 * The agents a session serves as tools: every agent its caller may use (one tool per agent
 * name, its highest version), or the one agent of `{basePath}/{agent}`.
 */
export class ToolScope {
  constructor(
    private readonly registry: AgentRegistry,
    /** The one agent (`{basePath}/{agent}`); undefined: every agent. */
    private readonly only?: RegisteredAgent,
  ) {}

  /** The caller's tools, by tool name. */
  agentsFor(who: Principal): Map<string, RegisteredAgent> {
    const candidates = this.only ? [this.only] : this.highestVersions();
    const tools = new Map<string, RegisteredAgent>();
    for (const agent of candidates) {
      if (who.agentIds && !who.agentIds.has(agent.agentId)) continue;
      tools.set(toolOf(agent).name, agent);
    }
    return tools;
  }

  private highestVersions(): RegisteredAgent[] {
    const names = new Set(this.registry.list().map((agent) => agent.name));
    return [...names].flatMap((name) => this.registry.getByName(name) ?? []);
  }
}

/** What a session's server needs: the tools, their calls, and the session's caller. */
export interface ToolServerContext {
  scope: ToolScope;
  calls: ToolCalls;
  /** The session's caller: every request of the session is checked to come from it. */
  who: Principal;
  /** What a call may do besides waiting for its run (progress, elicitation): see session.ts. */
  hooksFor: (
    server: Server,
    extra: Parameters<Parameters<Server["setRequestHandler"]>[1]>[1],
    request: { params: { _meta?: Record<string, unknown> } },
  ) => Omit<import("./tool-calls.js").CallHooks, "signal">;
}

/**
 * An MCP server (the official SDK's: negotiation, framing, capabilities) whose tools are the
 * session's agents, each call a run.
 */
export function toolServer(context: ToolServerContext): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false } },
    instructions:
      "Each tool is an agent. Pass `message` (and `context` to keep a conversation going); " +
      "the result is the agent's reply.",
  });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...context.scope.agentsFor(context.who).values()].map(toolOf),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const agent = context.scope.agentsFor(context.who).get(request.params.name);
    if (!agent) {
      throw new McpError(
        RPC.invalidParams,
        `unknown tool ${JSON.stringify(request.params.name.slice(0, 200))}: tools/list names the tools`,
      );
    }
    const hooks = context.hooksFor(server, extra, request);
    return context.calls.call(context.who, agent, request.params.arguments, {
      ...hooks,
      signal: extra.signal,
    });
  });
  return server;
}
