/**
 * A stream shaped as `@ag-ui/langgraph` sends one for a short reply from a LangGraph server:
 * the reply's text in token-sized TEXT_MESSAGE_CONTENT events, each carrying the LangChain
 * `on_chat_model_stream` event it was translated from as `rawEvent` (about 1.3 KB: the chunk
 * plus the run's metadata), and a RAW event relaying every LangChain callback event of the run
 * (chain and node starts and ends, the model's start, stream chunks and end, about 1 KB each).
 * Event ids are placeholders: the scripted adapter names the run.
 */

type Event = Record<string, unknown> & { type: string };

/** 40 characters. */
export const LANGGRAPH_LIKE_REPLY = "Paris is the capital of France, you know";

const TOKEN = 4;
/** LangChain callback events of the run other than the model's stream chunks. */
const OTHER_CALLBACKS = 80;

function metadata(step: number): Record<string, unknown> {
  return {
    thread_id: "5b1f0e9c-3a52-4d7e-9a61-2c8e4f7b9d10",
    langgraph_step: step,
    langgraph_node: "agent",
    langgraph_triggers: ["branch:to:agent"],
    langgraph_path: ["__pregel_pull", "agent"],
    langgraph_checkpoint_ns: "agent:7c9e2b14-0d3f-5a86-b1e2-9f4a6c8d3e21",
    checkpoint_ns: "agent:7c9e2b14-0d3f-5a86-b1e2-9f4a6c8d3e21",
    graph_id: "agent",
    assistant_id: "fe096781-5601-53d2-b2f6-0d3403f7e9ca",
    run_attempt: 1,
    langgraph_version: "0.4.8",
    langgraph_api_version: "0.2.98",
    langgraph_plan: "developer",
    langgraph_host: "self-hosted",
    langgraph_api_url: "http://127.0.0.1:2024",
    ls_provider: "openai",
    ls_model_name: "gpt-4o-mini",
    ls_model_type: "chat",
    ls_temperature: 0,
  };
}

function chatModelStream(token: string, index: number): Record<string, unknown> {
  return {
    event: "on_chat_model_stream",
    data: {
      chunk: {
        lc: 1,
        type: "constructor",
        id: ["langchain_core", "messages", "AIMessageChunk"],
        kwargs: {
          content: token,
          additional_kwargs: {},
          response_metadata: { model_provider: "openai", usage: {} },
          tool_call_chunks: [],
          id: "run-0a7d5c3e-8b41-4f29-a6e0-3d9c1b2f5e84",
          tool_calls: [],
          invalid_tool_calls: [],
          usage_metadata: null,
        },
      },
    },
    run_id: `0a7d5c3e-8b41-4f29-a6e0-3d9c1b2f5e${String(index).padStart(2, "0")}`,
    name: "ChatOpenAI",
    tags: ["seq:step:1"],
    metadata: metadata(1),
    parent_ids: ["1f0a63c4-9e2d-6b7a-8c15-d4e3f2a1b0c9", "2c8e4f7b-9d10-4a3b-b5c6-d7e8f9a0b1c2"],
  };
}

function callback(index: number): Record<string, unknown> {
  const kinds = ["on_chain_start", "on_chain_stream", "on_chain_end", "on_chat_model_start"];
  return {
    event: kinds[index % kinds.length],
    data: { input: { messages: [{ type: "human", content: "What is the capital of France?" }] } },
    run_id: `3e9a1c5d-7b2f-4e80-9d6a-${String(index).padStart(12, "0")}`,
    name: index % 2 === 0 ? "agent" : "LangGraph",
    tags: ["graph:step:1"],
    metadata: metadata(1),
    parent_ids: ["1f0a63c4-9e2d-6b7a-8c15-d4e3f2a1b0c9"],
  };
}

/** The whole run, from RUN_STARTED to RUN_FINISHED. */
export function langGraphLikeStream(text = LANGGRAPH_LIKE_REPLY): Event[] {
  const messageId = "run-0a7d5c3e-8b41-4f29-a6e0-3d9c1b2f5e84";
  const raw = (event: Record<string, unknown>): Event => ({
    type: "RAW",
    event,
    source: "langgraph",
  });
  const events: Event[] = [{ type: "RUN_STARTED", threadId: "t", runId: "r" }];
  for (let i = 0; i < OTHER_CALLBACKS / 2; i++) events.push(raw(callback(i)));
  events.push({ type: "STEP_STARTED", stepName: "agent" });
  events.push({ type: "TEXT_MESSAGE_START", messageId, role: "assistant" });
  for (let i = 0, n = 0; i < text.length; i += TOKEN, n++) {
    const token = text.slice(i, i + TOKEN);
    const native = chatModelStream(token, n);
    events.push(raw(native));
    events.push({ type: "TEXT_MESSAGE_CONTENT", messageId, delta: token, rawEvent: native });
  }
  events.push({ type: "TEXT_MESSAGE_END", messageId });
  for (let i = OTHER_CALLBACKS / 2; i < OTHER_CALLBACKS; i++) events.push(raw(callback(i)));
  events.push({ type: "STATE_SNAPSHOT", snapshot: { answered: true } });
  events.push({ type: "STEP_FINISHED", stepName: "agent" });
  events.push({ type: "RUN_FINISHED", threadId: "t", runId: "r" });
  return events;
}
