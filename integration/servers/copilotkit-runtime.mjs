/**
 * A CopilotKit runtime (`@copilotkit/runtime` v2 API) as a user would deploy it, serving one
 * Vercel AI SDK agent (CopilotKit's BuiltInAgent, which runs the AI SDK's `streamText`) at
 * `POST /api/copilotkit/agent/assistant/run`: an AG-UI endpoint that takes a RunAgentInput and
 * answers with AG-UI events over SSE. The agent has a server-side tool, an interrupt tool
 * (CopilotKit's `interrupt: true`), and CopilotKit's built-in state tools. Its model is the AI
 * SDK's MockLanguageModelV3 playing `agents/script.mjs`.
 *
 * Prints `{"listening": "<base url>"}` once it serves.
 */
import { createServer } from "node:http";
import {
  BuiltInAgent,
  CopilotRuntime,
  createCopilotRuntimeHandler,
  defineTool,
} from "@copilotkit/runtime/v2";
import { createCopilotNodeHandler } from "@copilotkit/runtime/v2/node";
import { z } from "zod";
import { notesIn, scriptedModel } from "../agents/ai-sdk-model.mjs";
import { getWeather } from "../agents/script.mjs";

const assistant = new BuiltInAgent({
  model: scriptedModel({
    name: "copilotkit",
    remember: (note, system) => ({
      name: "AGUISendStateSnapshot",
      args: { snapshot: { ...stateIn(system), notes: [...notesIn(system), note] } },
    }),
  }),
  maxSteps: 5,
  tools: [
    defineTool({
      name: "get_weather",
      description: "The weather forecast for a city",
      parameters: z.object({ city: z.string() }),
      execute: async ({ city }) => getWeather({ city }),
    }),
    defineTool({
      name: "approve_deploy",
      description: "Asks a human to approve a deployment",
      parameters: z.object({ target: z.string() }),
      interrupt: true,
      interruptReason: "approval",
      interruptMessage: "Approve the deployment?",
    }),
  ],
});

/** The application state CopilotKit shows the model, a JSON block in the system prompt. */
function stateIn(system) {
  const block = /## Application State[\s\S]*?```json\n([\s\S]*?)\n```/.exec(system);
  if (!block) return {};
  try {
    return JSON.parse(block[1]);
  } catch {
    return {};
  }
}

const runtime = new CopilotRuntime({ agents: { assistant } });
const handler = createCopilotNodeHandler(
  createCopilotRuntimeHandler({ runtime, basePath: "/api/copilotkit" }),
);

const server = createServer((req, res) => {
  handler(req, res).catch((err) => {
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: String(err?.message ?? err) }));
  });
});
server.listen(0, "127.0.0.1", () => {
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  process.stdout.write(
    `${JSON.stringify({ listening: `http://127.0.0.1:${port}/api/copilotkit` })}\n`,
  );
});
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
