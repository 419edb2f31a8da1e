import { facePlugin } from "../face-plugin.js";
import { PLUGIN } from "../plugins/names.js";
import { aguiRoutes } from "./routes.js";

/** Every agent as an AG-UI endpoint, by id and by name (`server.agui`). */
export const aguiFace = facePlugin(PLUGIN.aguiFace, async (app) => {
  await app.register(aguiRoutes);
});

/** Where the AG-UI face's routes are, for a 404 under `/ag-ui`. */
export const aguiRouteHint = {
  prefix: "/ag-ui",
  routes:
    "the AG-UI face serves POST /ag-ui/{agent} (a run), POST /ag-ui/{agent}/connect, POST /ag-ui/{agent}/stop/{threadId} and GET /ag-ui/{agent}/capabilities",
};
