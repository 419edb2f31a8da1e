import { facePlugin } from "../face-plugin.js";
import { PLUGIN } from "../plugins/names.js";
import type { A2aAgents } from "./agents.js";
import { serveA2aGrpc } from "./grpc/server.js";
import { createA2aAgents } from "./layer.js";
import { a2aRoutes } from "./routes.js";

declare module "fastify" {
  interface FastifyInstance {
    /** The A2A operations layer (every agent's face), for any binding to call. */
    a2aAgents: A2aAgents;
  }
}

export type { A2aAgents } from "./agents.js";
export { operationsFor, V1_OPERATIONS, V03_OPERATIONS } from "./operations.js";

export { sendA2aFrameworkError, sendA2aRefusal } from "./refusals.js";
export { a2aCardPaths } from "./routes.js";

/**
 * Every agent as an A2A agent under `basePath` (its own body parsers and error answers); the
 * operations layer behind it is `app.a2aAgents`, which another binding calls the same way.
 */
export const a2aFace = facePlugin<{ basePath: string }>(
  PLUGIN.a2aFace,
  async (app, { basePath }) => {
    const agents = createA2aAgents(app);
    app.decorate("a2aAgents", agents);
    // The gRPC binding (off by default) listens on a port of its own; the cards declare it.
    const grpc = app.deps.settings.a2a.grpc.enabled ? serveA2aGrpc(app, agents, basePath) : null;
    await app.register(a2aRoutes, {
      prefix: basePath,
      basePath,
      agents,
      grpcAddress: grpc?.addressFor,
    });
  },
);

/** Where A2A agents are, for a 404 under the A2A base path. */
export function a2aRouteHint(basePath: string) {
  return {
    prefix: basePath,
    routes: `A2A agents are at ${basePath}/{agent} (JSON-RPC, and HTTP+JSON under it), their cards at ${basePath}/{agent}/.well-known/agent-card.json`,
  };
}
