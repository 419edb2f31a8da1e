import fp from "fastify-plugin";
import { a2aRoutes } from "../a2a/routes.js";
import { PLUGIN, ROUTE_PREREQUISITES } from "../plugins/names.js";
import { agentRoutes } from "./agents.js";
import { aguiRoutes } from "./agui.js";
import { copilotkitRoutes } from "./copilotkit.js";
import { metaRoutes } from "./meta.js";
import { statelessRunRoutes } from "./stateless-runs.js";
import { threadRunRoutes } from "./thread-runs.js";
import { threadRoutes } from "./threads.js";

/**
 * The route groups, each a named plugin that declares what must be registered before it (the
 * key check, limits, long-request accounting) and that it reads `app.deps`. Each route file
 * stays its own encapsulated context, as before: hooks and handlers it sets stay inside it.
 */
const prerequisites = {
  fastify: "5.x",
  dependencies: ROUTE_PREREQUISITES,
  decorators: { fastify: ["deps"] },
};

/** The ACP API: health and protocol documents, agents, threads, thread runs, stateless runs. */
export const acpApi = fp(
  async (app) => {
    await app.register(metaRoutes);
    await app.register(agentRoutes);
    await app.register(threadRoutes);
    await app.register(threadRunRoutes);
    await app.register(statelessRunRoutes);
  },
  { name: PLUGIN.acpRoutes, ...prerequisites },
);

/** Every agent as an AG-UI endpoint, by id and by name. */
export const aguiFace = fp(
  async (app) => {
    await app.register(aguiRoutes);
  },
  { name: PLUGIN.aguiFace, ...prerequisites },
);

/** CopilotKit's runtime protocol under `basePath` (its own body parser and error handler). */
export const copilotkit = fp<{ basePath: string }>(
  async (app, { basePath }) => {
    await app.register(copilotkitRoutes, { prefix: basePath });
  },
  { name: PLUGIN.copilotkit, ...prerequisites },
);

/** Every agent as an A2A agent under `basePath` (its own body parsers and error answers). */
export const a2aFace = fp<{ basePath: string }>(
  async (app, { basePath }) => {
    await app.register(a2aRoutes, { prefix: basePath, basePath });
  },
  { name: PLUGIN.a2aFace, ...prerequisites },
);
