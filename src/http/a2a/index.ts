import { facePlugin } from "../face-plugin.js";
import { PLUGIN } from "../plugins/names.js";
import { a2aRoutes } from "./routes.js";

export { sendA2aRefusal } from "./refusals.js";
export { a2aCardPaths } from "./routes.js";

/** Every agent as an A2A agent under `basePath` (its own body parsers and error answers). */
export const a2aFace = facePlugin<{ basePath: string }>(
  PLUGIN.a2aFace,
  async (app, { basePath }) => {
    await app.register(a2aRoutes, { prefix: basePath, basePath });
  },
);

/** Where A2A agents are, for a 404 under the A2A base path. */
export function a2aRouteHint(basePath: string) {
  return {
    prefix: basePath,
    routes: `A2A agents are at ${basePath}/{agent} (JSON-RPC, and HTTP+JSON under it), their cards at ${basePath}/{agent}/.well-known/agent-card.json`,
  };
}
