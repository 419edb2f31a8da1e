import { facePlugin } from "../face-plugin.js";
import { PLUGIN } from "../plugins/names.js";
import { assistantRoutes } from "./assistants.js";
import { answerErrorsAsLangGraph } from "./errors.js";
import { runRoutes } from "./runs.js";
import { threadRoutes } from "./threads.js";

export { sendDetail } from "./errors.js";

/**
 * LangGraph's API (the paths `@langchain/langgraph-sdk`'s `Client` calls) under `basePath`
 * (`server.langgraph`): every agent is an assistant, threads and runs are ours. See
 * docs/langgraph.md.
 */
export const langgraphFace = facePlugin<{ basePath: string }>(
  PLUGIN.langgraphFace,
  async (app, { basePath }) => {
    await app.register(
      async (face) => {
        answerErrorsAsLangGraph(face);
        await face.register(assistantRoutes);
        await face.register(threadRoutes);
        await face.register(runRoutes);
      },
      { prefix: basePath },
    );
  },
);
