import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { PLUGIN } from "./names.js";

export interface RateLimitOptions {
  /** Requests per window and client; 0 = off. */
  max: number;
  windowSeconds: number;
  /** Paths never limited (health and readiness probes). */
  openPaths: ReadonlySet<string>;
}

/**
 * Requests per client and time window: a client is its API key when it presented one, else its
 * IP address. Registered after the API key check, so the key is known. Beyond the limit: 429
 * with `retry-after` and an ACP string error (through the root error handler; the A2A face
 * answers it in its binding's shape).
 */
async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  if (options.max <= 0) return;
  // Imported only when on (the default is off): it brings ip-address and its own caches.
  const { default: rateLimit } = await import("@fastify/rate-limit");
  await app.register(rateLimit, {
    global: true,
    max: options.max,
    timeWindow: Math.round(options.windowSeconds * 1000),
    keyGenerator: (request) => request.caller?.id ?? `ip:${request.ip}`,
    allowList: (request) => options.openPaths.has(request.url.split("?")[0]!),
    errorResponseBuilder: (_request, context) =>
      Object.assign(
        new Error(
          `rate limit of ${context.max} requests per ${options.windowSeconds} s exceeded; retry in ${context.after}`,
        ),
        { statusCode: context.statusCode },
      ),
  });
}

/** Keys on the caller the key check found, so it comes after it. */
export const rateLimitPlugin = fp<RateLimitOptions>(registerRateLimit, {
  name: PLUGIN.rateLimit,
  fastify: "5.x",
  dependencies: [PLUGIN.httpConventions, PLUGIN.auth],
});
