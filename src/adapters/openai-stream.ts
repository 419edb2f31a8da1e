/**
 * OpenAI streaming chat-completion chunks → AG-UI events, for one completion (one assistant
 * message). Feed every parsed `data:` object to {@link ChunkTranslator.chunk}; when the stream
 * is over, {@link ChunkTranslator.close} ends whatever is still open and
 * {@link ChunkTranslator.finish} gives the RUN_FINISHED.
 *
 * - `delta.content` → TEXT_MESSAGE_START/CONTENT/END (role assistant, one messageId);
 * - `delta.reasoning_content` (DeepSeek, vLLM) or `delta.reasoning` (OpenRouter, Ollama) →
 *   REASONING_START, REASONING_MESSAGE_START/CONTENT/END, REASONING_END; a span closes when
 *   text or a tool call begins;
 * - `delta.tool_calls[i]` (by `index`) → TOOL_CALL_START (parentMessageId = the assistant
 *   message) / TOOL_CALL_ARGS / TOOL_CALL_END. Calls stay open until the choice finishes,
 *   so a server that interleaves parallel calls' argument chunks is still followed;
 * - `usage` → RUN_FINISHED.usage; tool calls made → RUN_FINISHED outcome `success` with
 *   `pendingToolCallIds` (the input's tools are the client's: it answers them next run).
 */
import { randomUUID } from "node:crypto";
import type { TokenUsage } from "@ag-ui/core";

type Rec = Record<string, unknown>;
type Event = Rec & { type: string };

const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

interface ToolCallState {
  id: string;
  name: string | undefined;
  started: boolean;
  ended: boolean;
  /** Arguments that arrived before the name (START needs the name). */
  pending: string;
}

/** An `error` object a provider put inside the stream. */
export interface StreamError {
  message: string;
  code?: string;
}

export class ChunkTranslator {
  readonly messageId = randomUUID();
  private textOpen = false;
  private reasoning: { spanId: string; messageId: string } | undefined;
  private readonly calls = new Map<string, ToolCallState>();
  private readonly callOrder: ToolCallState[] = [];
  private usage: TokenUsage | undefined;
  private finishReason: string | undefined;

  /** The `finish_reason` of the choice, once the server sent one. */
  get finished(): string | undefined {
    return this.finishReason;
  }

  /** Translates one chunk, appending the events it produces (possibly none) to `out`. */
  chunk(data: Rec, out: Event[]): void {
    const usage = toTokenUsage(data.usage, str(data.model));
    if (usage) this.usage = usage;
    const choices = Array.isArray(data.choices) ? data.choices : [];
    // n = 1: every choice but the first is ignored.
    const choice = choices.find((c) => isRecord(c) && (c.index === undefined || c.index === 0));
    if (!isRecord(choice)) return;
    const delta = isRecord(choice.delta) ? choice.delta : {};

    const reasoning = str(delta.reasoning_content) ?? str(delta.reasoning);
    if (reasoning) this.reason(reasoning, out);

    const content = str(delta.content);
    if (content) {
      this.endReasoning(out);
      if (!this.textOpen) {
        this.textOpen = true;
        out.push({ type: "TEXT_MESSAGE_START", messageId: this.messageId, role: "assistant" });
      }
      out.push({ type: "TEXT_MESSAGE_CONTENT", messageId: this.messageId, delta: content });
    }

    if (Array.isArray(delta.tool_calls)) {
      for (const [position, raw] of delta.tool_calls.entries()) {
        if (isRecord(raw)) this.toolCall(raw, position, out);
      }
    }

    const finish = str(choice.finish_reason);
    if (finish) {
      this.finishReason = finish;
      this.close(out);
    }
  }

  /** Ends every open reasoning span, text message and tool call, in that order. */
  close(out: Event[]): void {
    this.endReasoning(out);
    this.endText(out);
    for (const call of this.callOrder) {
      if (!call.started) this.startCall(call, out);
      call.ended = true;
      out.push({ type: "TOOL_CALL_END", toolCallId: call.id });
    }
    this.callOrder.length = 0;
  }

  /** The RUN_FINISHED that ends a successful completion. */
  finish(threadId: string, runId: string): Event {
    const event: Event = { type: "RUN_FINISHED", threadId, runId };
    const ids = [...this.calls.values()].map((call) => call.id);
    if (ids.length > 0) event.outcome = { type: "success", pendingToolCallIds: ids };
    if (this.usage) event.usage = [this.usage];
    return event;
  }

  /** The RUN_ERROR for a failure after the stream began (usage kept when it came first). */
  error(message: string, code?: string): Event {
    const event: Event = { type: "RUN_ERROR", message };
    if (code !== undefined) event.code = code;
    if (this.usage) event.usage = [this.usage];
    return event;
  }

  private reason(delta: string, out: Event[]): void {
    if (!this.reasoning) {
      this.reasoning = { spanId: randomUUID(), messageId: randomUUID() };
      out.push({ type: "REASONING_START", messageId: this.reasoning.spanId });
      out.push({
        type: "REASONING_MESSAGE_START",
        messageId: this.reasoning.messageId,
        role: "reasoning",
      });
    }
    out.push({ type: "REASONING_MESSAGE_CONTENT", messageId: this.reasoning.messageId, delta });
  }

  private endReasoning(out: Event[]): void {
    if (!this.reasoning) return;
    out.push({ type: "REASONING_MESSAGE_END", messageId: this.reasoning.messageId });
    out.push({ type: "REASONING_END", messageId: this.reasoning.spanId });
    this.reasoning = undefined;
  }

  private endText(out: Event[]): void {
    if (!this.textOpen) return;
    this.textOpen = false;
    out.push({ type: "TEXT_MESSAGE_END", messageId: this.messageId });
  }

  private toolCall(raw: Rec, position: number, out: Event[]): void {
    const fn = isRecord(raw.function) ? raw.function : {};
    const key = this.keyOf(raw, position);
    let call = this.calls.get(key);
    if (!call) {
      this.endReasoning(out);
      this.endText(out);
      const id = str(raw.id) || `call_${randomUUID()}`;
      call = { id, name: undefined, started: false, ended: false, pending: "" };
      this.calls.set(key, call);
      this.callOrder.push(call);
    }
    // A straggling delta for a call already ended would break the protocol; it is dropped.
    if (call.ended) return;
    const name = str(fn.name);
    if (name && !call.started) call.name = (call.name ?? "") + name;
    const args = fn.arguments;
    const delta =
      typeof args === "string" ? args : isRecord(args) ? JSON.stringify(args) : undefined;
    if (!call.started && call.name !== undefined) this.startCall(call, out);
    if (!delta) return;
    if (call.started) out.push({ type: "TOOL_CALL_ARGS", toolCallId: call.id, delta });
    else call.pending += delta;
  }

  /**
   * Which call a delta continues: its `index`; without one (some servers send each call
   * whole), its `id`, else the position within the chunk for a new call's first delta.
   */
  private keyOf(raw: Rec, position: number): string {
    if (typeof raw.index === "number") return `#${raw.index}`;
    const id = str(raw.id);
    if (id) return `id:${id}`;
    const last = this.callOrder[this.callOrder.length - 1];
    if (position === 0 && last) {
      for (const [key, call] of this.calls) if (call === last) return key;
    }
    return `#${position}`;
  }

  private startCall(call: ToolCallState, out: Event[]): void {
    call.started = true;
    out.push({
      type: "TOOL_CALL_START",
      toolCallId: call.id,
      toolCallName: call.name ?? "",
      parentMessageId: this.messageId,
    });
    if (call.pending) {
      out.push({ type: "TOOL_CALL_ARGS", toolCallId: call.id, delta: call.pending });
      call.pending = "";
    }
  }
}

const count = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : undefined;

/**
 * OpenAI `usage` → AG-UI TokenUsage. OpenAI counts cached prompt tokens inside
 * `prompt_tokens` and reasoning tokens inside `completion_tokens`, which is the protocol's own
 * accounting, so the parts are copied as they are; `totalTokens` is computed.
 */
export function toTokenUsage(raw: unknown, model: string | undefined): TokenUsage | undefined {
  if (!isRecord(raw)) return undefined;
  const input = count(raw.prompt_tokens);
  const output = count(raw.completion_tokens);
  if (input === undefined && output === undefined) return undefined;
  const usage: TokenUsage = {};
  if (model) usage.model = model;
  if (input !== undefined) usage.inputTokens = input;
  if (output !== undefined) usage.outputTokens = output;
  if (input !== undefined && output !== undefined) usage.totalTokens = input + output;
  const promptDetails = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const cached = count(promptDetails.cached_tokens) ?? count(raw.prompt_cache_hit_tokens);
  if (cached !== undefined && input !== undefined && cached <= input) {
    usage.cachedInputTokens = cached;
  }
  const outputDetails = isRecord(raw.completion_tokens_details)
    ? raw.completion_tokens_details
    : {};
  const reasoning = count(outputDetails.reasoning_tokens);
  if (reasoning !== undefined && output !== undefined && reasoning <= output) {
    usage.reasoningTokens = reasoning;
  }
  return usage;
}

/** The provider error inside a chunk or an error body: `{error: {message, type, code}}`. */
export function providerError(body: unknown): StreamError | undefined {
  if (!isRecord(body) || body.error === undefined || body.error === null) return undefined;
  const error = body.error;
  if (typeof error === "string") return { message: error };
  if (!isRecord(error)) return { message: JSON.stringify(error) };
  const message = str(error.message) ?? JSON.stringify(error);
  const code = error.code ?? error.type;
  const result: StreamError = { message };
  if (typeof code === "string" || typeof code === "number") result.code = String(code);
  return result;
}
