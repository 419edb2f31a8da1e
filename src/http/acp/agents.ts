import type { FastifyPluginAsyncJsonSchemaToTs } from "@fastify/type-provider-json-schema-to-ts";
import { notFound } from "../../util/errors.js";
import type { AcpAgentWire, AcpDescriptorWire } from "../../validation/acp-types.js";
import { acpSchemas } from "../../validation/index.js";
import { agentIdParams } from "../params.js";

const errors = { 404: acpSchemas.ErrorResponse, 422: acpSchemas.ErrorResponse } as const;

/** ACP "Agents" tag: search, get, descriptor. Agents come from the config file, read-only. */
export const agentRoutes: FastifyPluginAsyncJsonSchemaToTs = async (app) => {
  const { registry } = app.deps;

  app.post(
    "/agents/search",
    {
      schema: {
        body: acpSchemas.AgentSearchRequest,
        response: { 200: acpSchemas.AgentList, 422: acpSchemas.ErrorResponse },
      },
    },
    async (request) => {
      const { name, version, limit = 10, offset = 0 } = request.body;
      const agentIds = request.caller.agentIds ?? undefined;
      return registry
        .search({ name, version, agentIds, limit, offset })
        .map((agent) => agent.agent as AcpAgentWire);
    },
  );

  app.get(
    "/agents/:agent_id",
    { schema: { params: agentIdParams, response: { 200: acpSchemas.Agent, ...errors } } },
    async (request) => {
      const agent = registry.get(request.params.agent_id);
      if (!agent) throw notFound("agent", request.params.agent_id);
      return agent.agent as AcpAgentWire;
    },
  );

  app.get(
    "/agents/:agent_id/descriptor",
    {
      schema: {
        params: agentIdParams,
        response: { 200: acpSchemas.AgentACPDescriptor, ...errors },
      },
    },
    async (request) => {
      const agent = registry.get(request.params.agent_id);
      if (!agent) throw notFound("agent", request.params.agent_id);
      return agent.descriptor as AcpDescriptorWire;
    },
  );
};
