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
