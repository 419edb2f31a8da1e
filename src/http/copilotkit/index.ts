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

/** Where CopilotKit's runtime routes are, for a 404 under its base path. */
export function copilotkitRouteHint(basePath: string) {
  return {
    prefix: basePath,
    routes: `CopilotKit's runtime is served here: GET ${basePath}/info, POST ${basePath}/agent/{agent}/run, /connect and /stop/{threadId}, and ${basePath}/threads; set your app's runtimeUrl to ${basePath}`,
  };
}
