import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { DomainError } from "../../errors.js";
import type { Metrics } from "../../metrics/metrics.js";

/**
 * `GET /metrics` (Prometheus text format) and the HTTP latency of every request. When API keys
 * are on and the endpoint is not public, it takes a key without an agent restriction: the
 * metrics name every agent.
 */
export function registerMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook("onResponse", async (request: FastifyRequest, reply: FastifyReply) => {
    // The route template, never the raw URL: ids in paths would make a series per request.
    const route = request.is404 ? "unmatched" : (request.routeOptions.url ?? "unmatched");
    metrics.httpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });

  app.get("/metrics", async (request, reply) => {
    if (request.caller?.agentIds) {
      throw new DomainError(
        "forbidden",
        `API key "${request.caller.name}" is restricted to some agents; metrics need an unrestricted key`,
      );
    }
    const { contentType, body } = await metrics.render();
    return reply.type(contentType).send(body);
  });
}
