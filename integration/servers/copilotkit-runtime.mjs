/**
 * A CopilotKit runtime (`@copilotkit/runtime` v2 API) as a user would deploy it, serving one
 * Vercel AI SDK agent (CopilotKit's BuiltInAgent, which runs the AI SDK's `streamText`) at
 * `POST /api/copilotkit/agent/assistant/run`: an AG-UI endpoint that takes a RunAgentInput and
 * answers with AG-UI events over SSE. The agent has a server-side tool, an interrupt tool
 * (CopilotKit's `interrupt: true`), and CopilotKit's built-in state tools. Its model is the AI
 * SDK's MockLanguageModelV3 playing `agents/script.mjs`.
 *
 * The runtime keeps a run going when its client disconnects (so that CopilotKit's own client can
 * reconnect through `/connect`), and stops one only on `POST <base>/agent/<agent>/stop/<thread>`,
 * which a generic AG-UI client never sends. A second runtime under `/api/copilotkit-stopping`
 * uses a runner that also stops the run when its client goes away: that is the deployment for
 * AG-UI clients (and for acp-agui) that stop a run by disconnecting.
 *
 * Prints `{"listening": "<origin>"}` once it serves.
 */
import { createServer } from "node:http";
import {
  BuiltInAgent,
  CopilotRuntime,
  createCopilotRuntimeHandler,
  defineTool,
  InMemoryAgentRunner,
} from "@copilotkit/runtime/v2";
import { createCopilotNodeHandler } from "@copilotkit/runtime/v2/node";
import { Observable } from "rxjs";
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

/** InMemoryAgentRunner that also stops a run when the client streaming it goes away. */
class StopOnDisconnectRunner extends InMemoryAgentRunner {
  /** @param {Parameters<InMemoryAgentRunner["run"]>[0]} request */
  run(request) {
    const events = super.run(request);
    return new Observable((subscriber) => {
      const subscription = events.subscribe(subscriber);
      return () => {
        subscription.unsubscribe();
        // After a run's end this finds nothing running and does nothing.
        void this.stop({ threadId: request.threadId, runId: request.input.runId });
      };
    });
  }
}

const handlers = {
  "/api/copilotkit/": createCopilotNodeHandler(
    createCopilotRuntimeHandler({
      runtime: new CopilotRuntime({ agents: { assistant } }),
      basePath: "/api/copilotkit",
    }),
  ),
  "/api/copilotkit-stopping/": createCopilotNodeHandler(
    createCopilotRuntimeHandler({
      runtime: new CopilotRuntime({ agents: { assistant }, runner: new StopOnDisconnectRunner() }),
      basePath: "/api/copilotkit-stopping",
    }),
  ),
};

const server = createServer((req, res) => {
  const prefix = Object.keys(handlers).find((p) => req.url?.startsWith(p));
  if (!prefix) {
    res.writeHead(404).end();
    return;
  }
  handlers[/** @type {keyof typeof handlers} */ (prefix)](req, res).catch((err) => {
    if (!res.headersSent) res.writeHead(500, { "content-type": "application/json" });
    res.end(JSON.stringify({ error: String(err?.message ?? err) }));
  });
});
server.listen(0, "127.0.0.1", () => {
  const { port } = /** @type {import("node:net").AddressInfo} */ (server.address());
  process.stdout.write(`${JSON.stringify({ listening: `http://127.0.0.1:${port}` })}\n`);
});
const stop = () => server.close(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
