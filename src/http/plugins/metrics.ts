import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { NOBODY, type Principal } from "../../auth/principal.js";
import type { Metrics } from "../../metrics/metrics.js";
import { DomainError } from "../../util/errors.js";
import { PLUGIN } from "./names.js";

/**
 * `GET /metrics` (Prometheus text format) and the HTTP latency of every request. When API keys
 * are on and the endpoint is not public, it takes a key without an agent restriction: the
 * metrics name every agent.
 */
async function registerMetrics(app: FastifyInstance, { metrics }: { metrics: Metrics }) {
  app.addHook("onResponse", async (request: FastifyRequest, reply: FastifyReply) => {
    // The route template, never the raw URL: ids in paths would make a series per request.
    const route = request.is404 ? "unmatched" : (request.routeOptions.url ?? "unmatched");
    metrics.httpRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });

  app.get("/metrics", async (request, reply) => {
    const caller = request.caller;
    // NOBODY only gets here when the endpoint is public.
    const refusal = caller === NOBODY ? undefined : metricsRefusal(caller);
    if (refusal) throw new DomainError("forbidden", refusal);
    const { contentType, body } = await metrics.render();
    return reply.type(contentType).send(body);
  });
}

/** `GET /metrics` names every agent: it takes a caller the key check found. */
export const metricsPlugin = fp<{ metrics: Metrics }>(registerMetrics, {
  name: PLUGIN.metrics,
  fastify: "5.x",
  dependencies: [PLUGIN.httpConventions, PLUGIN.auth],
});

/**
 * Why `caller` may not read the metrics, or undefined. They name every agent and describe every
 * principal's traffic: not for a key restricted to some agents, nor for an end user.
 */
export function metricsRefusal(caller: Principal): string | undefined {
  if (!caller.agentIds && !caller.id?.startsWith("user:")) return undefined;
  const why = caller.agentIds ? "is restricted to some agents" : "is an end user";
  return `${caller.label} ${why}; metrics need an unrestricted key`;
}
