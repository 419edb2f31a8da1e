import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { ROUTE_PREREQUISITES } from "./plugins/names.js";

/**
 * A face as a named plugin: it declares what must be registered before it (the key check,
 * limits, long-request accounting) and that it reads `app.deps`, so registering it in the wrong
 * order refuses to start. The routes inside stay encapsulated contexts of their own: hooks,
 * parsers and error handlers a face sets apply to its routes only.
 */
export function facePlugin<Options extends Record<string, unknown> = Record<never, never>>(
  name: string,
  register: FastifyPluginAsync<Options>,
) {
  return fp<Options>(register, {
    name,
    fastify: "5.x",
    dependencies: ROUTE_PREREQUISITES,
    decorators: { fastify: ["deps"] },
  });
}
