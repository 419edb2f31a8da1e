/**
 * A LangGraph JS graph as a user would write one: a chat model node, a tool node with a
 * server-side tool and a tool that asks a human for approval (`interrupt`), and a piece of
 * state of its own (`notes`). Served by `@langchain/langgraph-api` under the id `assistant`.
 *
 * The model is LangChain's own FakeStreamingChatModel, given the answer `script.mjs` picks for
 * the conversation so far, so no network and no real model are involved.
 */
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import { AIMessage, AIMessageChunk, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk } from "@langchain/core/outputs";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { FakeStreamingChatModel } from "@langchain/core/utils/testing";
import {
  Annotation,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
} from "@langchain/langgraph";
import { ToolNode } from "@langchain/langgraph/prebuilt";
import { z } from "zod";
import { APPROVAL_SCHEMA, getWeather, nextMove, QUICK_DELAY_MS } from "./script.mjs";

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  notes: Annotation<string[]>({ reducer: (_previous, next) => next, default: () => [] }),
});

const tools = [
  tool(async ({ city }: { city: string }) => JSON.stringify(getWeather({ city })), {
    name: "get_weather",
    description: "The weather forecast for a city",
    schema: z.object({ city: z.string() }),
  }),
  tool(
    async ({ target }: { target: string }) =>
      JSON.stringify(
        interrupt({
          reason: "approval",
          message: `Deploy to ${target}?`,
          responseSchema: APPROVAL_SCHEMA,
        }),
      ),
    {
      name: "approve_deploy",
      description: "Asks a human to approve a deployment",
      schema: z.object({ target: z.string() }),
    },
  ),
];

/**
 * FakeStreamingChatModel answering with one tool call, streamed in pieces (`tool_call_chunks`)
 * as chat model providers stream them. The base class can only hand over a finished
 * `tool_calls` list, which LangGraphAgent reports under the tool message's id rather than the
 * model message's, a path real providers do not take.
 */
class FakeToolCallingModel extends FakeStreamingChatModel {
  constructor(private readonly call: { id: string; name: string; args: Record<string, unknown> }) {
    super({});
  }

  override async *_streamResponseChunks(
    _messages: BaseMessage[],
    _options: this["ParsedCallOptions"],
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    const args = JSON.stringify(this.call.args);
    const half = Math.ceil(args.length / 2);
    const pieces = [
      { id: this.call.id, name: this.call.name, args: "" },
      { args: args.slice(0, half) },
      { args: args.slice(half) },
    ];
    for (const piece of pieces) {
      const chunk = new ChatGenerationChunk({
        text: "",
        message: new AIMessageChunk({
          content: "",
          tool_call_chunks: [{ index: 0, type: "tool_call_chunk", ...piece }],
        }),
      });
      yield chunk;
      await runManager?.handleLLMNewToken("", undefined, undefined, undefined, undefined, {
        chunk,
      });
    }
  }
}

function conversationOf(messages: BaseMessage[]) {
  return messages.map((message) => {
    const type = message.getType();
    const text = typeof message.content === "string" ? message.content : "";
    if (type === "human") return { role: "user", text };
    if (type === "tool") return { role: "tool", toolName: message.name, result: message.content };
    return { role: "assistant", text };
  });
}

let calls = 0;

async function agent(state: typeof State.State, config: RunnableConfig) {
  const move = nextMove(conversationOf(state.messages));
  if (move.call) {
    const model = new FakeToolCallingModel({ id: `call_${++calls}`, ...move.call });
    return { messages: [await model.invoke(state.messages, config)] };
  }
  if (move.remember) {
    const model = new FakeStreamingChatModel({
      sleep: QUICK_DELAY_MS,
      responses: [new AIMessage(`Noted: ${move.remember}.`)],
    });
    const reply = await model.invoke(state.messages, config);
    return { messages: [reply], notes: [...(state.notes ?? []), move.remember] };
  }
  const model = new FakeStreamingChatModel({
    sleep: move.delayMs,
    responses: [new AIMessage(move.say ?? "")],
  });
  return { messages: [await model.invoke(state.messages, config)] };
}

const afterAgent = (state: typeof State.State) => {
  const last = state.messages.at(-1);
  return last instanceof AIMessage && last.tool_calls?.length ? "tools" : END;
};

export const graph = new StateGraph(State)
  .addNode("agent", agent)
  .addNode("tools", new ToolNode(tools))
  .addEdge(START, "agent")
  .addConditionalEdges("agent", afterAgent, ["tools", END])
  .addEdge("tools", "agent")
  .compile();
