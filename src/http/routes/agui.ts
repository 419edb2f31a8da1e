import type { RunAgentInput } from "@ag-ui/core";
import type { FastifyPluginAsync } from "fastify";
import type { RegisteredAgent } from "../../config/registry.js";
import { notFound } from "../../errors.js";
import { AguiFace } from "../agui-face.js";
import { agentIdParams } from "../params.js";

/** Bodies are checked by the precompiled AG-UI `RunAgentInput` validator (see validator-compiler). */
const runAgentInput = { $id: "agui:RunAgentInput", type: "object" } as const;
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
  const capabilities = (agent: RegisteredAgent) => ({
    identity: {
      name: agent.name,
      version: agent.version,
      description: agent.config.description,
      type: agent.config.adapter.type,
    },
    ...engine.capabilitiesOf(agent.agentId),
  });

  app.post<{ Params: { agent_id: string }; Body: RunAgentInput }>(
    "/agents/:agent_id/ag-ui",
    { schema: { params: agentIdParams, body: runAgentInput } },
    async (request, reply) =>
      face.serve(request, reply, byId(request.params.agent_id), request.body),
  );
  app.post<{ Params: { agent_name: string }; Body: RunAgentInput }>(
    "/ag-ui/:agent_name",
    { schema: { params: agentNameParams, body: runAgentInput } },
    async (request, reply) =>
      face.serve(request, reply, byName(request.params.agent_name), request.body),
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
