import type { RunAgentInput } from "@ag-ui/core";
import type { FastifyPluginAsync } from "fastify";
import type { RegisteredAgent } from "../../config/registry.js";
import { notFound } from "../../errors.js";
import { AguiFace } from "../agui-face.js";
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
const agentNameParams = {
  type: "object",
  properties: { agent_name: { type: "string", minLength: 1, maxLength: 200 } },
  required: ["agent_name"],
} as const;

/**
 * The AG-UI face: every agent is also an AG-UI endpoint (by id, and by name for clients such
 * as CopilotKit that are configured with one URL per agent). Runs through it are ACP runs.
 */
export const aguiRoutes: FastifyPluginAsync = async (app) => {
  const { registry, runs, engine } = app.deps;
  const face = new AguiFace(runs);

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
        description: agent.config.description,
        type: agent.config.adapter.type,
      },
      ...supplied,
      // Every run's events are stored: a client can rejoin a thread and its run in progress.
      transport: { ...(supplied.transport as object), resumable: true },
      custom: {
        ...(supplied.custom as object),
        connect: { method: "POST", path: `/ag-ui/${encodeURIComponent(agent.name)}/connect` },
      },
    };
  };
  const connectInput = (body: RunAgentInput) => ({
    threadId: body.threadId,
    protocolVersion: body.protocolVersion,
  });

  app.post<{ Params: { agent_id: string }; Body: RunAgentInput; Querystring: RunQuery }>(
    "/agents/:agent_id/ag-ui",
    { schema: { params: agentIdParams, body: runAgentInput, querystring: runQuery } },
    async (request, reply) =>
      face.serve(request, reply, byId(request.params.agent_id), request.body, {
        onDisconnect: request.query.on_disconnect,
      }),
  );
  app.post<{ Params: { agent_name: string }; Body: RunAgentInput; Querystring: RunQuery }>(
    "/ag-ui/:agent_name",
    { schema: { params: agentNameParams, body: runAgentInput, querystring: runQuery } },
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
    "/ag-ui/:agent_name/connect",
    { schema: { params: agentNameParams, body: runAgentInput }, config: { longRequest: "stream" } },
    async (request, reply) => {
      byName(request.params.agent_name);
      await face.connect(request, reply, connectInput(request.body));
    },
  );
  app.get<{ Params: { agent_id: string } }>(
    "/agents/:agent_id/ag-ui/capabilities",
    { schema: { params: agentIdParams } },
    async (request) => capabilities(byId(request.params.agent_id)),
  );
  app.get<{ Params: { agent_name: string } }>(
    "/ag-ui/:agent_name/capabilities",
    { schema: { params: agentNameParams } },
    async (request) => capabilities(byName(request.params.agent_name)),
  );
};
