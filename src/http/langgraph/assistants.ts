import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import type { RegisteredAgent } from "../../config/registry.js";
import { invalid } from "../../util/errors.js";
import { toAssistant, toGraph, toSchemas } from "./records.js";
import { assistantAgent } from "./run-handlers.js";

type Rec = Record<string, unknown>;

const assistantParams = {
  type: "object",
  properties: { assistant_id: { type: "string", minLength: 1, maxLength: 500 } },
  required: ["assistant_id"],
} as const;

/**
 * Assistants: each configured agent the caller may use is one, named by the agent's name (its
 * assistant id and graph id). They come from the config file, so they are read-only here.
 */
export const assistantRoutes: FastifyPluginAsync = async (app) => {
  const { registry } = app.deps;

  const matching = (request: FastifyRequest): RegisteredAgent[] => {
    const body = (request.body ?? {}) as Rec;
    if (typeof body !== "object" || Array.isArray(body)) {
      throw invalid("the request body must be a JSON object");
    }
    const { graph_id, name, metadata } = body;
    for (const [field, value] of [
      ["graph_id", graph_id],
      ["name", name],
    ] as const) {
      if (value != null && typeof value !== "string") throw invalid(`${field} must be a string`);
    }
    if (metadata != null && (typeof metadata !== "object" || Array.isArray(metadata))) {
      throw invalid("metadata must be an object");
    }
    const allowed = request.caller.agentIds;
    return registry.list().filter((agent) => {
      if (allowed && !allowed.has(agent.agentId)) return false;
      if (graph_id != null && agent.name !== graph_id) return false;
      if (name != null && !agent.name.includes(name as string)) return false;
      const own = toAssistant(agent).metadata as Rec;
      return Object.entries((metadata ?? {}) as Rec).every(
        ([key, value]) => JSON.stringify(own[key]) === JSON.stringify(value),
      );
    });
  };

  app.post("/assistants/search", async (request, reply) => {
    const { limit = 10, offset = 0 } = (request.body ?? {}) as {
      limit?: unknown;
      offset?: unknown;
    };
    if (!isPage(limit, 1000) || !isPage(offset)) {
      throw invalid("limit (1 to 1000) and offset must be non-negative integers");
    }
    const found = matching(request);
    const page = found.slice(offset, offset + limit);
    if (offset + limit < found.length) reply.header("x-pagination-next", String(offset + limit));
    reply.header("x-pagination-total", String(found.length));
    return page.map(toAssistant);
  });

  app.post("/assistants/count", async (request) => matching(request).length);

  app.get<{ Params: { assistant_id: string } }>(
    "/assistants/:assistant_id",
    { schema: { params: assistantParams } },
    async (request) =>
      toAssistant(assistantAgent(registry, request.caller, request.params.assistant_id)),
  );

  app.get<{ Params: { assistant_id: string } }>(
    "/assistants/:assistant_id/schemas",
    { schema: { params: assistantParams } },
    async (request) =>
      toSchemas(assistantAgent(registry, request.caller, request.params.assistant_id)),
  );

  app.get<{ Params: { assistant_id: string } }>(
    "/assistants/:assistant_id/graph",
    { schema: { params: assistantParams } },
    async (request) =>
      toGraph(assistantAgent(registry, request.caller, request.params.assistant_id)),
  );

  app.get<{ Params: { assistant_id: string } }>(
    "/assistants/:assistant_id/subgraphs",
    { schema: { params: assistantParams } },
    async (request) => {
      assistantAgent(registry, request.caller, request.params.assistant_id);
      return {};
    },
  );
};

function isPage(value: unknown, max = Number.MAX_SAFE_INTEGER): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 && value <= max;
}
