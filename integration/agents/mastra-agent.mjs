/**
 * A Mastra agent as a user would write one, served in-process through `@ag-ui/mastra`'s
 * MastraAgent (the export `assistant`, an @ag-ui/client AbstractAgent; `stoppableAssistant`
 * adds the stop MastraAgent lacks). It has a server-side
 * tool, a tool that suspends for approval (Mastra's human-in-the-loop, which MastraAgent turns
 * into an AG-UI interrupt), and thread-scoped working memory with a schema (which MastraAgent
 * streams as AG-UI state). Its model is the AI SDK's MockLanguageModelV3 playing `script.mjs`.
 */
import { MastraAgent } from "@ag-ui/mastra";
import { Mastra } from "@mastra/core";
import { Agent } from "@mastra/core/agent";
import { InMemoryStore } from "@mastra/core/storage";
import { createTool } from "@mastra/core/tools";
import { Memory } from "@mastra/memory";
import { z } from "zod";
import { notesIn, scriptedModel } from "./ai-sdk-model.mjs";
import { getWeather } from "./script.mjs";
import { StoppableMastraAgent } from "./stoppable-mastra-agent.mjs";

const getWeatherTool = createTool({
  id: "get_weather",
  description: "The weather forecast for a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => getWeather({ city }),
});

const approveDeployTool = createTool({
  id: "approve_deploy",
  description: "Asks a human to approve a deployment",
  inputSchema: z.object({ target: z.string() }),
  suspendSchema: z.object({ question: z.string() }),
  resumeSchema: z.object({ approved: z.boolean() }),
  execute: async ({ target }, context) => {
    const answer = context?.agent?.resumeData;
    if (!answer) return await context?.agent?.suspend({ question: `Deploy to ${target}?` });
    return { approved: answer.approved === true };
  },
});

const storage = new InMemoryStore();

const assistantAgent = new Agent({
  id: "assistant",
  name: "assistant",
  instructions: "You are a helpful assistant.",
  model: scriptedModel({
    name: "mastra",
    remember: (note, system) => ({
      name: "updateWorkingMemory",
      args: { memory: { notes: [...notesIn(system), note] } },
    }),
  }),
  tools: { get_weather: getWeatherTool, approve_deploy: approveDeployTool },
  memory: new Memory({
    storage,
    options: {
      lastMessages: 20,
      workingMemory: {
        enabled: true,
        schema: z.object({ notes: z.array(z.string()).optional() }),
      },
    },
  }),
});

export const mastra = new Mastra({ agents: { assistant: assistantAgent }, storage, logger: false });

/** The agent as @ag-ui/mastra serves it. */
export const assistant = new MastraAgent({
  agentId: "assistant",
  agent: mastra.getAgent("assistant"),
  emitInterruptOutcome: true,
});

/** The same agent, able to stop (see `stoppable-mastra-agent.mjs`). */
export const stoppableAssistant = new StoppableMastraAgent({
  agentId: "assistant",
  agent: mastra.getAgent("assistant"),
  emitInterruptOutcome: true,
});
