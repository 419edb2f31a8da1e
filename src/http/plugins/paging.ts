import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { invalid } from "../../util/errors.js";
import { PLUGIN } from "./names.js";

const PAGING_KEYS = ["limit", "offset"] as const;

/**
 * The spec bounds `offset` only by being an integer, and 1e308 is one. Storage cannot address
 * a row past 2^53 (SQLite refuses anything past 2^63 outright), so such a page is refused here
 * with a 422 instead of failing in the database as a 500.
 */
async function registerPagingBounds(app: FastifyInstance): Promise<void> {
  app.addHook("preHandler", async (request: FastifyRequest) => {
    for (const [part, data] of [
      ["body", request.body],
      ["querystring", request.query],
    ] as const) {
      if (typeof data !== "object" || data === null) continue;
      for (const key of PAGING_KEYS) {
        const value = (data as Record<string, unknown>)[key];
        if (typeof value === "number" && !Number.isSafeInteger(value)) {
          throw invalid(`${part}/${key} must be <= ${Number.MAX_SAFE_INTEGER}`);
        }
      }
    }
  });
}

export const pagingBoundsPlugin = fp(registerPagingBounds, {
  name: PLUGIN.pagingBounds,
  fastify: "5.x",
  dependencies: [PLUGIN.httpConventions],
});
