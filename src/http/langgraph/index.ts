import { facePlugin } from "../face-plugin.js";
import { PLUGIN } from "../plugins/names.js";
import { assistantRoutes } from "./assistants.js";
import { answerErrorsAsLangGraph, sendDetail } from "./errors.js";
import { metaRoutes } from "./meta.js";
import { runRoutes } from "./runs.js";
import { threadCommandRoutes } from "./thread-commands.js";
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
        face.setNotFoundHandler((request, reply) =>
          sendDetail(reply, 404, `no route for ${request.method} ${request.url.split("?", 1)[0]}`),
        );
        await face.register(metaRoutes);
        await face.register(assistantRoutes);
        await face.register(threadRoutes);
        await face.register(runRoutes);
        await face.register(threadCommandRoutes);
      },
      { prefix: basePath },
    );
  },
);
