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
