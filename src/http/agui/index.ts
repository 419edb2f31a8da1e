import { facePlugin } from "../face-plugin.js";
import { PLUGIN } from "../plugins/names.js";
import { aguiRoutes } from "./routes.js";

/** Every agent as an AG-UI endpoint, by id and by name under `basePath` (`server.agui`). */
export const aguiFace = facePlugin<{ basePath: string }>(
  PLUGIN.aguiFace,
  async (app, { basePath }) => {
    await app.register(aguiRoutes, { basePath });
  },
);

/** Where the AG-UI face's routes are, for a 404 under its base path. */
export function aguiRouteHint(basePath: string) {
  return {
    prefix: basePath,
    routes: `the AG-UI face serves POST ${basePath}/{agent} (a run), POST ${basePath}/{agent}/connect, POST ${basePath}/{agent}/stop/{threadId} and GET ${basePath}/{agent}/capabilities`,
  };
}
