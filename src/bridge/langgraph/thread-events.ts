/**
 * A run's log as the events of LangGraph's v2 thread streaming (`POST /threads/{id}/stream/events`,
 * what `client.threads.stream` and `@langchain/react` read), each `{method, params: {namespace,
 * timestamp, data}}`:
 *
 * | channel     | from                                                                              |
 * | ----------- | --------------------------------------------------------------------------------- |
 * | `values`    | the v1 `values` mode (stream-events.ts): the thread's values                      |
 * | `updates`   | the v1 `updates` mode: `{node: <agent>, values: <what changed>}`                  |
 * | `custom`    | the v1 `custom` mode: `{name, payload}`                                           |
 * | `tools`     | the v1 `tools` mode: `tool-started` with the input, `tool-finished` / `tool-error` |
 * | `messages`  | AG-UI text messages and tool calls as content blocks: `message-start`, `content-block-start`, `-delta`, `-finish`, `message-finish` |
 * | `lifecycle` | `running` when the run's log begins, `completed` / `failed` / `interrupted` at its end |
 * | `input`     | each interrupt of an interrupted run as `input.requested` `{interrupt_id, payload}` |
 *
 * The v1 mapper does the values, updates, custom and tools work; only the message blocks and
 * the lifecycle are v2's own shapes.
 */
import { ERRCODE } from "../acp/outcomes.js";
import { parseArgs } from "./messages.js";
import { LangGraphStreamMapper, type LogItem, type StreamContext } from "./stream-events.js";
import { interruptsOfOutput, toLangGraphInterrupts } from "./values.js";

type Rec = Record<string, unknown>;

export const THREAD_CHANNELS = [
  "values",
  "updates",
  "messages",
  "tools",
  "lifecycle",
  "input",
  "custom",
] as const;
export type ThreadChannel = (typeof THREAD_CHANNELS)[number];

/** The event methods each channel carries (`input` is `input.requested`). */
export const METHOD_CHANNEL: Record<string, ThreadChannel> = {
  values: "values",
  updates: "updates",
  messages: "messages",
  tools: "tools",
  lifecycle: "lifecycle",
  "input.requested": "input",
  custom: "custom",
};

export interface ThreadEvent {
  method: string;
  params: { namespace: string[]; timestamp: number; node?: string; data: unknown };
}

/** What is open in the message the agent is writing: its blocks are numbered from 0. */
interface OpenMessage {
  id: string;
  blocks: number;
  /** The block being streamed: its index, and a tool call's id, name and arguments so far. */
  current?: { index: number; kind: "text"; text: string } | ToolBlock;
}
interface ToolBlock {
  index: number;
  kind: "tool";
  id: string;
  name: string;
  args: string;
}

/** Turns one run's log into v2 thread events; one instance per run followed, fed in order. */
export class ThreadEventMapper {
  private readonly v1: LangGraphStreamMapper;
  private message: OpenMessage | undefined;
  private begun = false;

  constructor(private readonly context: StreamContext) {
    this.v1 = new LangGraphStreamMapper(["values", "updates", "custom", "tools"], context);
  }

  map(item: LogItem): ThreadEvent[] {
    const out: ThreadEvent[] = [];
    if (!this.begun) {
      this.begun = true;
      out.push(this.event("lifecycle", { event: "running", graph_name: this.context.agentName }));
    }
    if (item.kind === "event") out.push(...this.messageEvents(item.event));
    if (item.kind === "final") out.push(...this.closeMessage());
    for (const { event, data } of this.v1.map(item)) {
      const converted = this.fromV1(event, data as Rec);
      if (converted) out.push(converted);
    }
    if (item.kind === "final") {
      out.push(...this.ending(item.status, item.output));
      // A resumed run goes on in the same log: it is running again.
      this.begun = false;
    }
    return out;
  }

  private fromV1(mode: string, data: Rec): ThreadEvent | undefined {
    switch (mode) {
      case "values":
        // The interrupt's values are the `input` channel's business here.
        return "__interrupt__" in data ? undefined : this.event("values", data);
      case "updates": {
        if ("__interrupt__" in data) return undefined;
        const node = this.context.agentName;
        return this.event("updates", { node, values: data[node] ?? data });
      }
      case "custom":
        return this.event("custom", { name: data.name, payload: data.value });
      case "tools":
        return this.toolEvent(data);
      default:
        return undefined;
    }
  }

  private toolEvent(data: Rec): ThreadEvent {
    const tool_call_id = data.toolCallId;
    switch (data.event) {
      case "on_tool_start":
        return this.event("tools", {
          event: "tool-started",
          tool_call_id,
          tool_name: data.name,
          input: data.input,
        });
      case "on_tool_error":
        return this.event("tools", {
          event: "tool-error",
          tool_call_id,
          message: typeof data.error === "string" ? data.error : JSON.stringify(data.error),
        });
      default:
        return this.event("tools", { event: "tool-finished", tool_call_id, output: data.output });
    }
  }

  /** The run's end: the lifecycle's last word, and an interrupted run's questions. */
  private ending(status: string, output: Rec | null): ThreadEvent[] {
    if (status === "interrupted" || output?.type === "interrupt") {
      const interrupts = toLangGraphInterrupts(interruptsOfOutput(output));
      return [
        ...interrupts.map((interrupt) =>
          this.event("input.requested", { interrupt_id: interrupt.id, payload: interrupt.value }),
        ),
        this.event("lifecycle", { event: "interrupted", graph_name: this.context.agentName }),
      ];
    }
    if (output?.type === "result") {
      return [this.event("lifecycle", { event: "completed", graph_name: this.context.agentName })];
    }
    const error =
      output?.errcode === ERRCODE.cancelled
        ? "cancelled"
        : String(output?.description ?? `the run ended with status ${status}`);
    return [
      this.event("lifecycle", { event: "failed", graph_name: this.context.agentName, error }),
    ];
  }

  /** AG-UI text messages and tool calls as v2 message content blocks. */
  private messageEvents(event: Rec): ThreadEvent[] {
    const type = String(event.type);
    switch (type) {
      case "TEXT_MESSAGE_START":
        return this.openMessage(String(event.messageId ?? ""));
      case "TEXT_MESSAGE_CONTENT":
      case "TEXT_MESSAGE_CHUNK": {
        if (typeof event.delta !== "string" || event.delta === "") return [];
        const out = this.openMessage(String(event.messageId ?? this.message?.id ?? ""));
        const message = this.message!;
        if (message.current?.kind !== "text") {
          out.push(...this.finishBlock());
          message.current = { index: message.blocks++, kind: "text", text: "" };
          out.push(
            this.blockEvent("content-block-start", message.current.index, {
              content: { type: "text", text: "" },
            }),
          );
        }
        (message.current as { text: string }).text += event.delta;
        out.push(
          this.blockEvent("content-block-delta", message.current.index, {
            delta: { type: "text-delta", text: event.delta },
          }),
        );
        return out;
      }
      case "TEXT_MESSAGE_END":
        return this.closeMessage();
      case "TOOL_CALL_START":
      case "TOOL_CALL_CHUNK":
      case "TOOL_CALL_ARGS":
        return this.toolCallEvents(type, event);
      case "TOOL_CALL_END":
        return this.finishBlock();
      case "TOOL_CALL_RESULT":
        // The result belongs to the tool, not to the agent's message.
        return this.closeMessage();
      default:
        return [];
    }
  }

  private toolCallEvents(type: string, event: Rec): ThreadEvent[] {
    const id = String(event.toolCallId ?? "");
    const parent = typeof event.parentMessageId === "string" ? event.parentMessageId : undefined;
    const out = this.openMessage(parent ?? this.message?.id ?? `run-${this.context.runId}-${id}`);
    const message = this.message!;
    const current = message.current;
    if (type !== "TOOL_CALL_ARGS" && (current?.kind !== "tool" || current.id !== id)) {
      out.push(...this.finishBlock());
      const name = typeof event.toolCallName === "string" ? event.toolCallName : "";
      message.current = { index: message.blocks++, kind: "tool", id, name, args: "" };
      out.push(
        this.blockEvent("content-block-start", message.current.index, {
          content: { type: "tool_call_chunk", id, name, args: "" },
        }),
      );
    }
    const block = message.current;
    if (block?.kind === "tool" && typeof event.delta === "string" && event.delta !== "") {
      block.args += event.delta;
      out.push(
        this.blockEvent("content-block-delta", block.index, {
          delta: { type: "tool-call-delta", args: event.delta },
        }),
      );
    }
    return out;
  }

  /** `message-start` unless this message is the one open (which another one closes first). */
  private openMessage(id: string): ThreadEvent[] {
    if (this.message?.id === id) return [];
    const out = this.closeMessage();
    this.message = { id, blocks: 0 };
    out.push(this.event("messages", { event: "message-start", role: "ai", id }));
    return out;
  }

  private finishBlock(): ThreadEvent[] {
    const block = this.message?.current;
    if (!block) return [];
    this.message!.current = undefined;
    const content =
      block.kind === "text"
        ? { type: "text", text: block.text }
        : { type: "tool_call", id: block.id, name: block.name, args: parseArgs(block.args) };
    return [this.blockEvent("content-block-finish", block.index, { content })];
  }

  private closeMessage(): ThreadEvent[] {
    if (!this.message) return [];
    const out = this.finishBlock();
    this.message = undefined;
    out.push(this.event("messages", { event: "message-finish" }));
    return out;
  }

  private blockEvent(name: string, index: number, fields: Rec): ThreadEvent {
    return this.event("messages", { event: name, index, ...fields });
  }

  private event(method: string, data: unknown): ThreadEvent {
    const params: ThreadEvent["params"] = { namespace: [], timestamp: Date.now(), data };
    if (method === "messages" || method === "tools") params.node = this.context.agentName;
    return { method, params };
  }
}
