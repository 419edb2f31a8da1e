import cors from "@fastify/cors";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { PLUGIN } from "./names.js";

/** Headers a browser client may read: where the run is, and when to try again. */
const EXPOSED_HEADERS = ["content-location", "x-acp-run-id", "retry-after", "www-authenticate"];
const ALLOWED_HEADERS = [
  "content-type",
  "authorization",
  "x-api-key",
  "last-event-id",
  "accept",
  "cache-control",
];

/**
 * CORS for browser clients (an AG-UI web app calling the AG-UI face or ACP directly). Off when
 * no origin is configured; `"*"` allows every origin. Preflights are answered before the API
 * key check: browsers send them without credentials.
 */
async function registerCors(
  app: FastifyInstance,
  options: { origins: readonly string[] },
): Promise<void> {
  if (options.origins.length === 0) return;
  await app.register(cors, {
    origin: options.origins.includes("*") ? "*" : [...options.origins],
    methods: ["GET", "HEAD", "POST", "PATCH", "DELETE"],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 600,
  });
  // Streams are written on the raw response (the reply is hijacked), which never sees headers
  // set on the reply: copy the CORS ones over, or browsers would refuse every SSE stream.
  app.addHook("onRequest", async (_request, reply) => {
    for (const [name, value] of Object.entries(reply.getHeaders())) {
      if ((name.startsWith("access-control-") || name === "vary") && value !== undefined) {
        reply.raw.setHeader(name, value as string);
      }
    }
  });
}

/** Registered before the key check, which depends on it: preflights carry no credentials. */
export const corsPlugin = fp<{ origins: readonly string[] }>(registerCors, {
  name: PLUGIN.cors,
  fastify: "5.x",
});
