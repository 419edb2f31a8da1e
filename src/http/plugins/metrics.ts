import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { NOBODY } from "../../auth/principal.js";
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
    const caller = request.caller;
    // NOBODY only gets here when the endpoint is public. End users never: metrics describe
    // every principal's traffic.
    if (caller !== NOBODY && (caller.agentIds || caller.id?.startsWith("user:"))) {
      throw new DomainError(
        "forbidden",
        `${caller.label} ${caller.agentIds ? "is restricted to some agents" : "is an end user"}; metrics need an unrestricted key`,
      );
    }
    const { contentType, body } = await metrics.render();
    return reply.type(contentType).send(body);
  });
}
