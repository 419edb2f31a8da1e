import { facePlugin } from "../face-plugin.js";
import { PLUGIN } from "../plugins/names.js";
import { agentRoutes } from "./agents.js";
import { statelessRunRoutes } from "./stateless-runs.js";
import { threadRunRoutes } from "./thread-runs.js";
import { threadRoutes } from "./threads.js";

/** ACP 0.2.1 at the root: agents, threads, thread runs, stateless runs (`server.acp`). */
export const acpFace = facePlugin(PLUGIN.acpRoutes, async (app) => {
  await app.register(agentRoutes);
  await app.register(threadRoutes);
  await app.register(threadRunRoutes);
  await app.register(statelessRunRoutes);
});
