import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { Principal } from "../../auth/principal.js";
import { isModernMessage } from "../../bridge/mcp/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { McpSessionRecord } from "../../storage/types.js";
import { isDomainError } from "../../util/errors.js";
import { registerJsonBodyParser } from "../json-body.js";
import { refuseModernNonPost } from "./modern.js";
import { originAllowed, REFUSAL_CODE, sendRpcRefusal } from "./refusals.js";
import type { InitializeParams, McpSession, McpSessions } from "./sessions.js";
import { ToolScope } from "./tool-scope.js";

export interface McpRoutesOptions {
  basePath: string;
  allowedOrigins: readonly string[];
  sessions: McpSessions;
  /** A session's MCP server for `who` with those tools. */
  serverFor(who: Principal, scope: ToolScope): Server;
  /** Answers a request of the stateless revision (2026-07-28), which has no session. */
  serveModern(request: FastifyRequest, reply: FastifyReply, scope: ToolScope): Promise<unknown>;
  /** Resumes a tools/call's stream from its run, for a session held here or not (resume.ts). */
  resumeFromRun(
    request: FastifyRequest,
    reply: FastifyReply,
    session: McpSessionRecord,
    lastEventId: string,
  ): Promise<unknown>;
}

const agentParams = {
  type: "object",
  properties: { agent: { type: "string", minLength: 1, maxLength: 300 } },
  required: ["agent"],
} as const;

/**
 * The MCP endpoint on Streamable HTTP: `{basePath}` (every agent the caller may use, a tool
 * each) and `{basePath}/{agent}` (that agent alone; `name@version` too). POST carries JSON-RPC
 * messages, GET opens the session's stream, DELETE ends the session: the official SDK's
 * transport answers each (version negotiation, Accept and protocol-version headers, SSE).
 */
export const mcpRoutes: FastifyPluginAsync<McpRoutesOptions> = async (app, options) => {
  const { settings, registry } = app.deps;
  const { sessions, basePath } = options;
  registerJsonBodyParser(app, settings.limits, { allowEmpty: true });
  const everyAgent = new ToolScope(registry);

  app.addHook("onRequest", async (request, reply) => {
    const origin = request.headers.origin;
    if (!originAllowed(origin, options.allowedOrigins)) {
      return sendRpcRefusal(
        reply,
        403,
        REFUSAL_CODE.invalidRequest,
        `origin ${JSON.stringify(origin?.slice(0, 200))} may not use this MCP server (server.mcp.allowedOrigins)`,
      );
    }
  });

  app.setErrorHandler((err: FastifyError, request, reply) => {
    // The stream limit (too many open streams) and the queues: try again shortly.
    if (isDomainError(err)) {
      if (err.code === "overloaded") reply.header("retry-after", "1");
      const status = err.code === "overloaded" ? 429 : 400;
      return sendRpcRefusal(reply, status, REFUSAL_CODE.session, err.message);
    }
    const status = typeof err.statusCode === "number" ? err.statusCode : 500;
    if (status === 429 || status === 503) {
      return sendRpcRefusal(reply, status, REFUSAL_CODE.session, err.message);
    }
    if (status >= 500) {
      request.log.error({ err }, "MCP request failed");
      return sendRpcRefusal(reply, 500, -32603, "internal error");
    }
    const code = status === 400 ? REFUSAL_CODE.parse : REFUSAL_CODE.invalidRequest;
    return sendRpcRefusal(reply, status, code, err.message);
  });

  app.setNotFoundHandler((request, reply) =>
    sendRpcRefusal(
      reply,
      404,
      REFUSAL_CODE.invalidRequest,
      `${request.method} ${request.url.split("?")[0]!.slice(0, 200)} is not an MCP endpoint: MCP is at ${basePath} and ${basePath}/{agent}`,
    ),
  );

  /** The agent `{agent}` names for the caller (name, or name@version); undefined for none. */
  const agentOf = (ref: string, who: Principal): RegisteredAgent | undefined => {
    const at = ref.indexOf("@");
    const agent =
      at === -1 ? registry.getByName(ref) : registry.getByName(ref.slice(0, at), ref.slice(at + 1));
    if (!agent || (who.agentIds && !who.agentIds.has(agent.agentId))) return undefined;
    return agent;
  };

  const serve = async (
    request: FastifyRequest,
    reply: FastifyReply,
    scopeKey: string,
    scope: ToolScope,
  ) => {
    const who = request.caller;
    if (request.method === "POST" && request.body === undefined) {
      return sendRpcRefusal(
        reply,
        400,
        REFUSAL_CODE.parse,
        "body is empty: send a JSON-RPC message",
      );
    }
    const sessionId = request.headers["mcp-session-id"];
    // 2026-07-28 has no sessions: its requests carry their version in `_meta` and headers.
    if (
      request.method === "POST" &&
      sessionId === undefined &&
      isModernMessage(request.body, request.headers["mcp-method"])
    ) {
      return options.serveModern(request, reply, scope);
    }
    const notFound = () =>
      sendRpcRefusal(
        reply,
        404,
        REFUSAL_CODE.notFound,
        "session not found (it ended, expired or was never opened): initialize again",
      );
    const lastEventId = request.headers["last-event-id"];
    if (
      request.method === "GET" &&
      typeof sessionId === "string" &&
      typeof lastEventId === "string"
    ) {
      // The replica that holds the stream resumes it from its log while the call goes on
      // (an elicitation it asked is asked again); otherwise any replica does, from the run.
      const held = sessions.held(sessionId, who, scopeKey);
      if (!held?.events.resumable(lastEventId)) {
        const record = await sessions.recordOf(sessionId, who, scopeKey);
        if (!record) return notFound();
        return options.resumeFromRun(request, reply, record, lastEventId);
      }
    }
    const makeServer = () => options.serverFor(who, scope);
    let session: McpSession | undefined;
    if (typeof sessionId === "string") {
      session = await sessions.get(sessionId, who, scopeKey, makeServer);
      // Another caller's session is answered as one that does not exist.
      if (!session) return notFound();
    } else if (request.method === "POST" && isInitializeRequest(request.body)) {
      const asked = request.body.params as unknown as InitializeParams;
      session = await sessions.open(who, scopeKey, asked, makeServer);
    } else {
      return (
        refuseModernNonPost(request, reply) ??
        sendRpcRefusal(
          reply,
          400,
          REFUSAL_CODE.session,
          "no Mcp-Session-Id header: begin with an initialize request, then send its session id",
        )
      );
    }
    reply.hijack();
    await session.transport.handleRequest(request.raw, reply.raw, request.body);
  };

  // The server's trailing-slash setting serves `{basePath}/` here too.
  for (const method of ["POST", "GET", "DELETE"] as const) {
    app.route({
      method,
      url: "",
      config: { longRequest: method === "DELETE" ? undefined : "stream" },
      handler: (request, reply) => serve(request, reply, basePath, everyAgent),
    });
  }
  for (const method of ["POST", "GET", "DELETE"] as const) {
    app.route({
      method,
      url: "/:agent",
      schema: { params: agentParams },
      config: { longRequest: method === "DELETE" ? undefined : "stream" },
      handler: (request, reply) => {
        const ref = (request.params as { agent: string }).agent;
        const agent = agentOf(ref, request.caller);
        if (!agent) {
          return sendRpcRefusal(
            reply,
            404,
            REFUSAL_CODE.invalidRequest,
            `agent ${JSON.stringify(ref.slice(0, 300))} not found`,
          );
        }
        return serve(
          request,
          reply,
          `${basePath}/${agent.agentId}`,
          new ToolScope(registry, agent),
        );
      },
    });
  }
};
