import type { FastifyPluginAsync } from "fastify";
import { packageVersion } from "../../util/paths.js";

/**
 * What LangGraph's server says about itself: `GET /info`, which agent-chat-ui asks before
 * anything else (a failure there shows "Failed to connect to LangGraph server"), and `GET /ok`.
 * The flags say what this face serves: assistants, no crons, no LangSmith tracing.
 */
export const metaRoutes: FastifyPluginAsync = async (app) => {
  app.get("/info", async () => ({
    version: packageVersion(),
    context: "js",
    flags: { assistants: true, crons: false, langsmith: false },
  }));
  app.get("/ok", async () => ({ ok: true }));
};
