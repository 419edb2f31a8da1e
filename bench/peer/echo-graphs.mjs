/**
 * The peer's agents, as one-node LangGraph JS graphs (served by `@langchain/langgraph-api`):
 *
 * - `echo`: answers with the last user message, as the echo agent of ours does. When the run
 *   is streamed in `custom` mode it also hands the answer to the stream writer, so that a
 *   streamed run has an event produced by the graph itself (what time to first event waits for).
 * - `stream`: writes the events of the bench's scripted run (the same AG-UI events ours
 *   replays, a path given in BENCH_PEER_SCRIPT) to the `custom` stream one by one, then ends.
 *
 * No model and no tools: the graph does as little as ours' echo adapter, so what is measured is
 * the server around it.
 */
import { readFileSync } from "node:fs";
import { AIMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";

function lastUserText(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.getType() === "human") return typeof m.content === "string" ? m.content : "";
  }
  return "";
}

export const echo = new StateGraph(MessagesAnnotation)
  .addNode("echo", (state, config) => {
    const text = lastUserText(state.messages);
    config.writer?.({ type: "TEXT_MESSAGE_CONTENT", messageId: "echo", delta: text });
    return { messages: [new AIMessage(text)] };
  })
  .addEdge(START, "echo")
  .addEdge("echo", END)
  .compile();

let script = null;
const scriptEvents = () => {
  script ??= JSON.parse(readFileSync(process.env.BENCH_PEER_SCRIPT, "utf8"));
  return script;
};

export const stream = new StateGraph(MessagesAnnotation)
  .addNode("stream", (_state, config) => {
    for (const event of scriptEvents()) config.writer?.(event);
    return {};
  })
  .addEdge(START, "stream")
  .addEdge("stream", END)
  .compile();
