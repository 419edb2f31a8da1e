import type { RunAgentInput } from "@ag-ui/core";
import type { FastifyPluginAsync } from "fastify";
import type { Principal } from "../../auth/principal.js";
import type { RegisteredAgent } from "../../config/registry.js";
import { invalid, notFound } from "../../util/errors.js";
import { AguiRuns, callerThreadId } from "../agui-runs/agui-runs.js";
import { stopRuns } from "../agui-runs/stop-runs.js";
import { agentIdParams } from "../params.js";

/** Bodies are checked by the precompiled AG-UI `RunAgentInput` validator (see validator-compiler). */
const runAgentInput = { $id: "agui:RunAgentInput", type: "object" } as const;
/**
 * `?on_disconnect=continue` keeps the run going when the client goes away (a page reload), for
 * it to `connect` again; by default an AG-UI client closing its request cancels the run.
 */
const runQuery = {
  type: "object",
  properties: { on_disconnect: { type: "string", enum: ["cancel", "continue"] } },
  additionalProperties: false,
} as const;
type RunQuery = { on_disconnect?: "cancel" | "continue" };
const clientThread = { type: "string", minLength: 1, maxLength: 1000 } as const;
const stopByIdParams = {
  type: "object",
  properties: { ...agentIdParams.properties, thread: clientThread },
  required: ["agent_id", "thread"],
} as const;
const stopByNameParams = {
  type: "object",
  properties: {
    agent_name: { type: "string", minLength: 1, maxLength: 200 },
    thread: clientThread,
  },
  required: ["agent_name", "thread"],
} as const;
const agentNameParams = {
  type: "object",
  properties: { agent_name: { type: "string", minLength: 1, maxLength: 200 } },
  required: ["agent_name"],
} as const;

/**
 * The AG-UI face: every agent is also an AG-UI endpoint (by id under ACP's `/agents/{id}`, and
 * by name under `basePath` for clients such as CopilotKit that are configured with one URL per
 * agent). Runs through it are ACP runs.
 */
export const aguiRoutes: FastifyPluginAsync<{ basePath: string }> = async (app, { basePath }) => {
  const { registry, runs, threads, engine, settings } = app.deps;
  const face = new AguiRuns({
    runs,
    threads,
    keepAliveSeconds: settings.keepAliveSeconds,
    face: "agui",
  });

  const byId = (id: string): RegisteredAgent => {
    const agent = registry.get(id);
    if (!agent) throw notFound("agent", id);
    return agent;
  };
  const byName = (name: string): RegisteredAgent => {
    const agent = registry.getByName(name);
    if (!agent) throw notFound("agent named", name);
    return agent;
  };
  const capabilities = (agent: RegisteredAgent) => {
    const supplied = engine.capabilitiesOf(agent.agentId);
    return {
      identity: {
        name: agent.name,
        version: agent.version,
        description: agent.descriptor.metadata.description,
        type: agent.config.adapter.type,
      },
      ...supplied,
      // Every run's events are stored: a client can rejoin a thread and its run in progress.
      transport: { ...(supplied.transport as object), resumable: true },
      custom: {
        ...(supplied.custom as object),
        connect: { method: "POST", path: `${basePath}/${encodeURIComponent(agent.name)}/connect` },
        stop: {
          method: "POST",
          path: `${basePath}/${encodeURIComponent(agent.name)}/stop/{threadId}`,
        },
      },
    };
  };
  const connectInput = (body: RunAgentInput) => ({
    threadId: body.threadId,
    protocolVersion: body.protocolVersion,
  });

  app.post<{ Params: { agent_id: string }; Body: RunAgentInput; Querystring: RunQuery }>(
    "/agents/:agent_id/ag-ui",
    {
      schema: { params: agentIdParams, body: runAgentInput, querystring: runQuery },
      config: { longRequest: "stream" },
    },
    async (request, reply) =>
      face.serve(request, reply, byId(request.params.agent_id), request.body, {
        onDisconnect: request.query.on_disconnect,
      }),
  );
  app.post<{ Params: { agent_name: string }; Body: RunAgentInput; Querystring: RunQuery }>(
    `${basePath}/:agent_name`,
    {
      schema: { params: agentNameParams, body: runAgentInput, querystring: runQuery },
      config: { longRequest: "stream" },
    },
    async (request, reply) =>
      face.serve(request, reply, byName(request.params.agent_name), request.body, {
        onDisconnect: request.query.on_disconnect,
      }),
  );
  // Reconnect: the thread's history, then its run in progress live (see thread-replay).
  app.post<{ Params: { agent_id: string }; Body: RunAgentInput }>(
    "/agents/:agent_id/ag-ui/connect",
    { schema: { params: agentIdParams, body: runAgentInput }, config: { longRequest: "stream" } },
    async (request, reply) => {
      byId(request.params.agent_id);
      await face.connect(request, reply, connectInput(request.body));
    },
  );
  app.post<{ Params: { agent_name: string }; Body: RunAgentInput }>(
    `${basePath}/:agent_name/connect`,
    { schema: { params: agentNameParams, body: runAgentInput }, config: { longRequest: "stream" } },
    async (request, reply) => {
      byName(request.params.agent_name);
      await face.connect(request, reply, connectInput(request.body));
    },
  );
  // Stop by thread, or by the run's AG-UI runId in the body: as ACP's cancel, waited for.
  const stop = async (who: Principal, threadId: string, body: unknown) => {
    const runId = (body as { runId?: unknown } | undefined)?.runId;
    if (body !== undefined && (typeof body !== "object" || body === null || Array.isArray(body))) {
      throw invalid('body must be an object such as {"runId": "…"}, or absent');
    }
    if (runId !== undefined && (typeof runId !== "string" || runId === "")) {
      throw invalid("body/runId must be a non-empty string");
    }
    const stopped = await stopRuns(
      runs,
      who,
      await callerThreadId(threads, who, threadId),
      runId as string | undefined,
    );
    return { stopped: stopped.length > 0, runs: stopped.map((run) => run.run_id) };
  };
  app.post<{ Params: { agent_id: string; thread: string } }>(
    "/agents/:agent_id/ag-ui/stop/:thread",
    { schema: { params: stopByIdParams } },
    async (request) => {
      byId(request.params.agent_id);
      return stop(request.caller, request.params.thread, request.body);
    },
  );
  app.post<{ Params: { agent_name: string; thread: string } }>(
    `${basePath}/:agent_name/stop/:thread`,
    { schema: { params: stopByNameParams } },
    async (request) => {
      byName(request.params.agent_name);
      return stop(request.caller, request.params.thread, request.body);
    },
  );
  app.get<{ Params: { agent_id: string } }>(
    "/agents/:agent_id/ag-ui/capabilities",
    { schema: { params: agentIdParams } },
    async (request) => capabilities(byId(request.params.agent_id)),
  );
  app.get<{ Params: { agent_name: string } }>(
    `${basePath}/:agent_name/capabilities`,
    { schema: { params: agentNameParams } },
    async (request) => capabilities(byName(request.params.agent_name)),
  );
};
