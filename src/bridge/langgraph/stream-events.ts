/**
 * A run's log (AG-UI events, values frames, the final frame) as LangGraph stream events, for
 * the modes a stream asked for:
 *
 * | ours                                          | LangGraph                                        |
 * | --------------------------------------------- | ------------------------------------------------ |
 * | TEXT_MESSAGE_CONTENT / _CHUNK                 | `messages` (messages-tuple): an `AIMessageChunk` with the message's final id |
 * | TOOL_CALL_START / _ARGS / _CHUNK              | `messages`: an `AIMessageChunk` with `tool_call_chunks` (id of the message the call belongs to) |
 * | TOOL_CALL_RESULT                              | `messages`: the `tool` message                   |
 * | tool calls complete, their results            | `tools`: `on_tool_start` with the call's input, `on_tool_end` with its output (tools-mode.ts) |
 * | the same, in `messages` mode                  | `messages/metadata`, `messages/partial` (the message so far), `messages/complete` (messages-mode.ts) |
 * | CUSTOM `{name, value}`                        | `custom`: `{name, value}`                        |
 * | text and tool call chunks, their ends, tool results, CUSTOM | `events` (LangChain's stream events): `on_chat_model_stream` with the same chunks, `on_chat_model_end`, `on_tool_end` with the tool message, `on_custom_event` |
 * | a values frame after a message, tool call or state change ended (not after each token) | `values`: the thread's values; `updates`: `{<agent>: <what changed>}` |
 * | the final frame: a result                     | `values` once more if they changed               |
 * | the final frame: an interrupt                 | `values` and `updates`: `{"__interrupt__": [...]}` |
 * | the final frame: an error, timeout            | `error`: `{error, message}`                       |
 * | the final frame: cancelled                    | nothing: the stream ends (the run is `interrupted`) |
 *
 * Every `messages` chunk carries the metadata LangGraph clients read: `langgraph_node` (the
 * agent's name: the node the agent is), `run_id`, `thread_id`, `graph_id`, `assistant_id`, …
 */
import { ERRCODE } from "../acp/outcomes.js";
import { parseArgs, toolResultMessage } from "./messages.js";
import { MessagesMode } from "./messages-mode.js";
import type { StreamMode } from "./run-body.js";
import { ToolsMode } from "./tools-mode.js";
import { interruptsOfOutput, toLangGraphInterrupts, toLangGraphValues } from "./values.js";

type Rec = Record<string, unknown>;

export type LogItem =
  | { kind: "event"; event: Rec }
  | { kind: "values"; values: unknown; messages: unknown }
  | { kind: "final"; status: string; output: Rec | null };

export interface StreamEvent {
  event: string;
  data: unknown;
}

export interface StreamContext {
  runId: string;
  threadId: string;
  /** The agent's name: assistant id, graph id and node name. */
  agentName: string;
  /** The run's metadata, which LangGraph copies into each chunk's metadata. */
  runMetadata: Rec;
}

/**
 * AG-UI events after which values are not worth a `values` event: a token's. (A text message's
 * start is: the values then show the run's input, as LangGraph's first `values` does, without
 * the message just begun.)
 */
const PARTIAL = new Set([
  "TEXT_MESSAGE_CONTENT",
  "TEXT_MESSAGE_CHUNK",
  "TOOL_CALL_START",
  "TOOL_CALL_ARGS",
  "TOOL_CALL_CHUNK",
  "REASONING_START",
  "REASONING_MESSAGE_START",
  "REASONING_MESSAGE_CONTENT",
  "REASONING_MESSAGE_CHUNK",
  "THINKING_TEXT_MESSAGE_CONTENT",
]);

/** Turns a run's log items into LangGraph events; one instance per stream, fed in order. */
export class LangGraphStreamMapper {
  private readonly modes: Set<StreamMode>;
  private readonly metadata: Rec;
  /** Tool call id → the id of the message it belongs to, and its index there. */
  private readonly toolCalls = new Map<string, { messageId: string; index: number }>();
  private readonly callsPerMessage = new Map<string, number>();
  /** The last AG-UI event seen: whether the next values frame is one to send. */
  private lastEventType: string | undefined;
  /** Text messages begun and not ended: left out of `values` until they are complete. */
  private readonly openMessages = new Set<unknown>();
  /** The `messages` mode's growing messages, when that mode is asked for. */
  private readonly messagesMode: MessagesMode | undefined;
  /** The `tools` mode's calls in progress, when that mode is asked for. */
  private readonly toolsMode: ToolsMode | undefined;
  /** The last values sent, as JSON, and as values (what `updates` diffs against). */
  private lastValuesJson: string | undefined;
  private lastValues: Rec | undefined;

  constructor(
    modes: readonly StreamMode[],
    private readonly context: StreamContext,
  ) {
    this.modes = new Set(modes);
    const { agentName, runId, threadId } = context;
    this.metadata = {
      ...context.runMetadata,
      run_id: runId,
      thread_id: threadId,
      graph_id: agentName,
      assistant_id: agentName,
      langgraph_step: 1,
      langgraph_node: agentName,
      langgraph_triggers: [`branch:to:${agentName}`],
      langgraph_path: ["__pregel_pull", agentName],
      langgraph_checkpoint_ns: `${agentName}:${runId}`,
      checkpoint_ns: `${agentName}:${runId}`,
    };
    if (this.modes.has("messages")) this.messagesMode = new MessagesMode(this.metadata);
    if (this.modes.has("tools")) this.toolsMode = new ToolsMode();
  }

  /** The `metadata` event every stream starts with. */
  static metadataEvent(runId: string): StreamEvent {
    return { event: "metadata", data: { run_id: runId, attempt: 1 } };
  }

  map(item: LogItem): StreamEvent[] {
    switch (item.kind) {
      case "event":
        return this.fromEvent(item.event);
      case "values":
        if (this.lastEventType !== undefined && PARTIAL.has(this.lastEventType)) return [];
        return this.fromValues(toLangGraphValues(item.values, this.completeOnly(item.messages)));
      case "final":
        return this.fromFinal(item.status, item.output);
    }
  }

  private fromEvent(event: Rec): StreamEvent[] {
    const type = String(event.type);
    this.lastEventType = type;
    if (type === "TEXT_MESSAGE_START") this.openMessages.add(event.messageId);
    if (type === "TEXT_MESSAGE_END") this.openMessages.delete(event.messageId);
    const out: StreamEvent[] = [];
    if (type === "CUSTOM") {
      if (this.modes.has("custom")) {
        out.push({ event: "custom", data: { name: event.name, value: event.value } });
      }
      if (this.modes.has("events")) {
        out.push(this.langchainEvent("on_custom_event", String(event.name), event.value));
      }
      return out;
    }
    const wantsChunks = this.modes.has("messages-tuple") || this.modes.has("events");
    const chunk = wantsChunks ? this.chunkOf(type, event) : undefined;
    // The stream event first: a client reading both (`@ag-ui/langgraph`) takes the text from
    // `events` once it has seen one, and would take the first chunk twice otherwise.
    if (this.modes.has("events")) {
      const langchain = this.eventOf(type, chunk);
      if (langchain) out.push(langchain);
    }
    if (chunk && this.modes.has("messages-tuple")) {
      out.push({ event: "messages", data: [chunk, this.metadata] });
    }
    if (this.messagesMode) out.push(...this.messagesMode.map(type, event));
    if (this.toolsMode) out.push(...this.toolsMode.map(type, event));
    return out;
  }

  private completeOnly(messages: unknown): unknown {
    if (this.openMessages.size === 0 || !Array.isArray(messages)) return messages;
    return messages.filter((message) => !this.openMessages.has((message as Rec | null)?.id));
  }

  /** The LangChain stream event (`events` mode) of an AG-UI event, if it has one. */
  private eventOf(type: string, chunk: Rec | undefined): StreamEvent | undefined {
    switch (type) {
      case "TEXT_MESSAGE_END":
      case "TOOL_CALL_END":
        return this.langchainEvent("on_chat_model_end", "model", { output: {} });
      case "TOOL_CALL_RESULT":
        return this.langchainEvent("on_tool_end", "tool", { input: {}, output: chunk });
      default:
        return chunk ? this.langchainEvent("on_chat_model_stream", "model", { chunk }) : undefined;
    }
  }

  private langchainEvent(name: string, runnable: string, data: unknown): StreamEvent {
    return {
      event: "events",
      data: {
        event: name,
        name: runnable,
        run_id: this.context.runId,
        tags: [],
        metadata: this.metadata,
        data,
      },
    };
  }

  private chunkOf(type: string, event: Rec): Rec | undefined {
    switch (type) {
      case "TEXT_MESSAGE_CONTENT":
      case "TEXT_MESSAGE_CHUNK":
        if (typeof event.delta !== "string" || event.delta === "") return undefined;
        return aiChunk(String(event.messageId ?? ""), event.delta, []);
      case "TOOL_CALL_START":
      case "TOOL_CALL_CHUNK": {
        const id = String(event.toolCallId ?? "");
        const known = this.toolCalls.get(id);
        const call = known ?? this.openToolCall(id, event.parentMessageId);
        const name = known ? undefined : (event.toolCallName ?? null);
        const args = typeof event.delta === "string" ? event.delta : "";
        return aiChunk(call.messageId, "", [
          { id, name, args, index: call.index, type: "tool_call_chunk" },
        ]);
      }
      case "TOOL_CALL_ARGS": {
        const id = String(event.toolCallId ?? "");
        const call = this.toolCalls.get(id) ?? this.openToolCall(id, undefined);
        return aiChunk(call.messageId, "", [
          {
            id,
            name: null,
            args: String(event.delta ?? ""),
            index: call.index,
            type: "tool_call_chunk",
          },
        ]);
      }
      case "TOOL_CALL_RESULT":
        return toolResultMessage(event);
      default:
        return undefined;
    }
  }

  private openToolCall(toolCallId: string, parentMessageId: unknown) {
    const messageId =
      typeof parentMessageId === "string" && parentMessageId !== "" ? parentMessageId : toolCallId;
    const index = this.callsPerMessage.get(messageId) ?? 0;
    this.callsPerMessage.set(messageId, index + 1);
    const call = { messageId, index };
    this.toolCalls.set(toolCallId, call);
    return call;
  }

  private fromValues(values: Rec): StreamEvent[] {
    const json = JSON.stringify(values);
    if (json === this.lastValuesJson) return [];
    const events: StreamEvent[] = [];
    if (this.modes.has("updates")) {
      const changed = changesBetween(this.lastValues, values);
      if (Object.keys(changed).length > 0) {
        events.push({ event: "updates", data: { [this.context.agentName]: changed } });
      }
    }
    this.lastValuesJson = json;
    this.lastValues = values;
    if (this.modes.has("values")) events.push({ event: "values", data: values });
    return events;
  }

  private fromFinal(status: string, output: Rec | null): StreamEvent[] {
    if (status === "interrupted" || output?.type === "interrupt") {
      const interrupt = { __interrupt__: toLangGraphInterrupts(interruptsOfOutput(output)) };
      const events: StreamEvent[] = [];
      if (this.modes.has("updates")) events.push({ event: "updates", data: interrupt });
      if (this.modes.has("values")) events.push({ event: "values", data: interrupt });
      return events;
    }
    if (output?.type === "result") {
      return this.fromValues(toLangGraphValues(output.values, output.messages));
    }
    if (output?.errcode === ERRCODE.cancelled) return [];
    return [errorEvent(status, output)];
  }
}

/** The `error` event of a run that failed, in LangGraph's `{error, message}`. */
export function errorEvent(status: string, output: Rec | null): StreamEvent {
  const name = status === "timeout" ? "TimeoutError" : "AgentError";
  const message = String(output?.description ?? `the run ended with status ${status}`);
  return { event: "error", data: { error: name, message } };
}

function aiChunk(id: string, content: string, toolCallChunks: Rec[]): Rec {
  return {
    type: "AIMessageChunk",
    id,
    content,
    additional_kwargs: {},
    response_metadata: {},
    name: null,
    tool_calls: toolCallChunks.map((chunk) => ({
      id: chunk.id,
      name: chunk.name ?? "",
      args: parseArgs(chunk.args),
      type: "tool_call",
    })),
    invalid_tool_calls: [],
    tool_call_chunks: toolCallChunks,
  };
}

/**
 * What changed from one values to the next, as a node's update: the keys whose value changed,
 * and of the messages only those new or changed (LangGraph's messages reducer adds them by id).
 */
function changesBetween(before: Rec | undefined, after: Rec): Rec {
  const changed: Rec = {};
  for (const [key, value] of Object.entries(after)) {
    if (key === "messages") continue;
    if (JSON.stringify(before?.[key]) !== JSON.stringify(value)) changed[key] = value;
  }
  const was = new Map(
    ((before?.messages ?? []) as Rec[]).map((message) => [message.id, JSON.stringify(message)]),
  );
  const messages = ((after.messages ?? []) as Rec[]).filter(
    (message) => was.get(message.id) !== JSON.stringify(message),
  );
  if (messages.length > 0) changed.messages = messages;
  return changed;
}

/** The run's final values for `runs.wait` and `join`: values, or `__interrupt__` added to them. */
export function waitResult(run: {
  status: string;
  output: Rec | null;
  interrupts: readonly unknown[];
  values: unknown;
  messages: unknown;
}): Rec {
  const { output } = run;
  if (output?.type === "result") return toLangGraphValues(output.values, output.messages);
  const values = toLangGraphValues(run.values, run.messages);
  if (run.status === "interrupted") {
    return { ...values, __interrupt__: toLangGraphInterrupts(run.interrupts) };
  }
  if (output?.type === "error" && output.errcode !== ERRCODE.cancelled) {
    const { data } = errorEvent(run.status, output);
    return { ...values, __error__: data };
  }
  return values;
}
