import { facePlugin } from "../face-plugin.js";
import { PLUGIN } from "../plugins/names.js";
import { copilotkitRoutes } from "./routes.js";

/** CopilotKit's runtime protocol under `basePath` (its own body parser and error handler). */
export const copilotkitFace = facePlugin<{ basePath: string }>(
  PLUGIN.copilotkit,
  async (app, { basePath }) => {
    await app.register(copilotkitRoutes, { prefix: basePath });
  },
);
