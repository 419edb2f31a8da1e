import type { AgentRegistry } from "../../config/registry.js";
import { facePlugin } from "../face-plugin.js";
import { PLUGIN } from "../plugins/names.js";
import { callHooks } from "./call-hooks.js";
import { serveModern } from "./modern.js";
import { mcpRefusal } from "./refusals.js";
import {
  challengeOf,
  registerResourceMetadata,
  resourceMetadataPaths,
} from "./resource-metadata.js";
import { resumeFromRun } from "./resume.js";
import { mcpRoutes } from "./routes.js";
import { McpSessions } from "./sessions.js";
import { ToolCalls } from "./tool-calls.js";
import { toolServer } from "./tool-server.js";

export { sendMcpFrameworkError } from "./refusals.js";

/**
 * Every agent as an MCP tool (see docs/mcp.md): `{basePath}` serves a tool for each agent the
 * caller may use, `{basePath}/{agent}` that agent alone, on Streamable HTTP with the official
 * SDK's server. Each call is a run of the agent, stored as every run is.
 */
export const mcpFace = facePlugin<{ basePath: string; allowedOrigins: readonly string[] }>(
  PLUGIN.mcpFace,
  async (app, { basePath, allowedOrigins }) => {
    const { runs, threads, settings, registry } = app.deps;
    const jwt = settings.auth.jwt;
    if (jwt) registerResourceMetadata(app, basePath, agentNames(registry), jwt.issuer);
    const store = app.deps.engine.storage.mcpSessions();
    const sessions = new McpSessions(store);
    app.addHook("onClose", () => sessions.closeAll());
    const calls = new ToolCalls(runs, threads);
    await app.register(mcpRoutes, {
      prefix: basePath,
      basePath,
      allowedOrigins,
      sessions,
      serveModern: (request, reply, scope) =>
        serveModern(
          {
            runs,
            calls,
            finishedStatelessRuns: settings.retention.finishedStatelessRuns,
            expiries: app.deps.runExpiries,
          },
          request,
          reply,
          scope,
        ),
      resumeFromRun: (request, reply, session, lastEventId) =>
        resumeFromRun(
          { runs, registry, store },
          request,
          reply,
          session,
          lastEventId,
          request.caller,
        ),
      serverFor: (who, scope) =>
        toolServer({
          scope,
          calls,
          runs,
          who,
          finishedStatelessRuns: settings.retention.finishedStatelessRuns,
          expiries: app.deps.runExpiries,
          hooksFor: (server, extra, agent, progressToken, resumable) =>
            callHooks(
              { runs, store, log: app.log },
              { server, extra, agent, progressToken, resumable },
            ),
        }),
    });
  },
);

/** The auth plugin's refusals under the MCP base path, in JSON-RPC's shape. */
export function mcpRefusals(basePath: string, tokens: boolean) {
  return {
    prefix: basePath,
    send: mcpRefusal(tokens ? (request) => challengeOf(request, basePath) : undefined),
  };
}

/** Served without credentials: the endpoints' protected-resource metadata, with users' tokens. */
export function mcpOpenPaths(basePath: string, tokens: boolean, registry: AgentRegistry): string[] {
  return tokens ? resourceMetadataPaths(basePath, agentNames(registry)) : [];
}

const agentNames = (registry: AgentRegistry) => [
  ...new Set(registry.list().map((agent) => agent.name)),
];
