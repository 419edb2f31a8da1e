import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../../auth/principal.js";
import { type McpTask, toolOf } from "../../bridge/mcp/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunExpiries } from "../../retention/run-expiries.js";
import { withMessageTraceContext } from "../../telemetry/index.js";
import { answerBadParamsAsInvalidParams } from "./bad-params.js";
import { McpTasks, TASK_CAPABILITIES } from "./tasks.js";
import { type CallHooks, RPC, type ToolCalls } from "./tool-calls.js";
import type { ToolScope } from "./tool-scope.js";

/** The package's name and version, as the server names itself in `initialize`. */
export const SERVER_INFO = { name: "acp-agui", version: "0.2.0" };

/** A request handler's `extra` (the SDK's RequestHandlerExtra). */
export type HandlerExtra = Parameters<Parameters<Server["setRequestHandler"]>[1]>[1];

/** What a session's server needs: the tools, their calls, and the session's caller. */
export interface ToolServerContext {
  scope: ToolScope;
  calls: ToolCalls;
  runs: RunService;
  /** `server.retention.finishedStatelessRuns` (a task's ttl). */
  finishedStatelessRuns: number | null;
  /** The lifetimes granted to tasks whose client asks for a ttl (tasks.ts). */
  expiries: RunExpiries;
  /** The session's caller: every request of the session is checked to come from it. */
  who: Principal;
  /**
   * What a call of `agent` may do besides waiting for its run, on the request `extra` is of:
   * ask the caller (elicitation), tell progress for `progressToken`; `resumable` for a
   * tools/call answered on its own stream, which any replica can resume from its run.
   */
  hooksFor(
    server: Server,
    extra: HandlerExtra,
    agent: RegisteredAgent,
    progressToken: unknown,
    resumable: boolean,
  ): Omit<CallHooks, "signal">;
}

/**
 * An MCP server (the official SDK's: negotiation, framing, capabilities) whose tools are the
 * session's agents, each call a run; a call made as a task answers its task at once (tasks.ts).
 */
export function toolServer(context: ToolServerContext): Server {
  const { scope, calls, who } = context;
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: false }, tasks: TASK_CAPABILITIES },
    instructions:
      "Each tool is an agent. Pass `message` (and `context` to keep a conversation going); " +
      "the result is the agent's reply.",
  });
  // Ended with the session: what waits to tell its client something stops.
  const closed = new AbortController();
  server.onclose = () => closed.abort();
  const tasks = new McpTasks({
    runs: context.runs,
    calls,
    scope,
    who,
    finishedStatelessRuns: context.finishedStatelessRuns,
    expiries: context.expiries,
    hooksFor: (extra, agent) =>
      context.hooksFor(server, extra as HandlerExtra, agent, undefined, false),
  });
  tasks.register(server);
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: [...scope.agentsFor(who).values()].map((agent) => ({
      ...toolOf(agent),
      execution: { taskSupport: "optional" as const },
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const agent = scope.agentsFor(who).get(request.params.name);
    if (!agent) {
      throw new McpError(
        RPC.invalidParams,
        `unknown tool ${JSON.stringify(request.params.name.slice(0, 200))}: tools/list names the tools`,
      );
    }
    // A `_meta.traceparent` (MCP's way to pass trace context in a message) wins over the
    // request's header: the run continues the caller's trace.
    return withMessageTraceContext(request.params._meta, () => {
      if (request.params.task) {
        const notify = (task: McpTask) =>
          server.notification({ method: "notifications/tasks/status", params: { ...task } });
        const { arguments: args, task } = request.params;
        return tasks.create(agent, args, notify, closed.signal, task.ttl);
      }
      const progressToken = request.params._meta?.progressToken;
      const hooks = context.hooksFor(server, extra, agent, progressToken, true);
      return calls.call(who, agent, request.params.arguments, { ...hooks, signal: extra.signal });
    });
  });
  answerBadParamsAsInvalidParams(server);
  return server;
}
