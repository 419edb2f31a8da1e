import { facePlugin } from "../face-plugin.js";
import { PLUGIN } from "../plugins/names.js";
import { aguiRoutes } from "./routes.js";

/** Every agent as an AG-UI endpoint, by id and by name (`server.agui`). */
export const aguiFace = facePlugin(PLUGIN.aguiFace, async (app) => {
  await app.register(aguiRoutes);
});
