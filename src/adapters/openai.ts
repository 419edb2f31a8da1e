import type { AgentCapabilities, RunAgentInput } from "@ag-ui/core";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { request } from "undici";
import type { AgentBounds } from "../config/agent-bounds.js";
import { DEFAULT_LIMITS } from "../config/settings.js";
import type { OpenAiAdapterConfig } from "./openai-options.js";
import { buildChatRequest } from "./openai-request.js";
import { ChunkTranslator, providerError } from "./openai-stream.js";
import { boundedEvents, formatBytes, StreamBoundError } from "./stream-bounds.js";
import type { AdapterRunContext, AgentAdapter } from "./types.js";

type Event = Record<string, unknown> & { type: string };
type ResponseBody = Awaited<ReturnType<typeof request>>["body"];

/** How much of an error body is read and how much of a non-JSON one is quoted. */
const ERROR_BODY_LIMIT = 64 * 1024;
const QUOTE_LIMIT = 500;
type EventBound = Pick<AgentBounds, "maxEventBytes"> & {
  keys: Pick<AgentBounds["keys"], "maxEventBytes">;
};
/** The largest single SSE event or whole (non-streamed) completion accepted, by default. */
const DEFAULT_EVENT_BOUND: EventBound = {
  maxEventBytes: DEFAULT_LIMITS.maxEventBytes,
  keys: { maxEventBytes: "server.limits.maxEventBytes" },
};

/**
 * An agent served by any OpenAI-compatible chat-completions endpoint (vLLM, Ollama,
 * llama.cpp, LM Studio, hosted APIs). Each run is one streamed completion: the input's
 * messages, context and tools go to the model; text, reasoning and tool-call deltas come
 * back as AG-UI events. The input's tools belong to the client, so a run in which the model
 * calls one ends in success with those calls pending; the client answers them with tool
 * messages in the next run's input.
 */
export class OpenAiAdapter implements AgentAdapter {
  private readonly url: string;
  private readonly apiKey: string | undefined;

  /** Reads the API key now, so a missing variable fails the start rather than a run. */
  constructor(
    private readonly config: OpenAiAdapterConfig,
    env: NodeJS.ProcessEnv = process.env,
    /** The most one SSE event (or a whole non-streamed completion) may weigh. */
    private readonly bounds: EventBound = DEFAULT_EVENT_BOUND,
  ) {
    this.url = `${config.baseUrl.replace(/\/+$/, "")}/chat/completions`;
    if (config.apiKeyEnv !== undefined) {
      const key = env[config.apiKeyEnv];
      if (key === undefined || key === "") {
        throw new Error(
          `openai adapter: the environment variable ${config.apiKeyEnv} (apiKeyEnv) is not set`,
        );
      }
      this.apiKey = key;
    }
  }

  capabilities(): Partial<AgentCapabilities> {
    return {
      transport: { streaming: true },
      tools: { supported: true, clientProvided: true, parallelCalls: true },
    };
  }

  async *run(input: RunAgentInput, context: AdapterRunContext): AsyncIterable<unknown> {
    const { threadId, runId } = input;
    const { signal } = context;
    yield { type: "RUN_STARTED", threadId, runId };

    const headers: Record<string, string> = {
      "content-type": "application/json",
      accept: "text/event-stream",
    };
    if (this.apiKey !== undefined) headers.authorization = `Bearer ${this.apiKey}`;

    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await request(this.url, {
        method: "POST",
        headers,
        body: JSON.stringify(buildChatRequest(this.config, input)),
        signal,
      });
    } catch (err) {
      if (signal.aborted) return;
      yield { type: "RUN_ERROR", message: `cannot connect to ${this.url}: ${describe(err)}` };
      return;
    }

    const translator = new ChunkTranslator();
    const out: Event[] = [];
    try {
      const contentType = String(response.headers["content-type"] ?? "");
      if (response.statusCode < 200 || response.statusCode >= 300) {
        yield this.httpError(response.statusCode, await readLimited(response.body));
      } else if (contentType.includes("text/html")) {
        // A proxy's or a login page in front of the model: no stream will come.
        const text = (await readLimited(response.body)).replace(/\s+/g, " ").trim();
        yield translator.error(
          `${this.url} answered with an HTML page (content type ${contentType}), not an event stream: ${quote(text)}`,
        );
      } else if (contentType.includes("application/json")) {
        // The server ignored `stream: true` and answered with the whole completion.
        const { maxEventBytes, keys } = this.bounds;
        // One byte past the limit is enough to know the completion is too large.
        const limit = maxEventBytes > 0 ? maxEventBytes + 1 : Number.POSITIVE_INFINITY;
        const { text, bytes } = await readUpTo(response.body, limit);
        if (bytes > maxEventBytes && maxEventBytes > 0) {
          yield translator.error(
            `${this.url} answered with a completion larger than ${formatBytes(maxEventBytes)}, the most one event may be (${keys.maxEventBytes})`,
          );
        } else yield* this.whole(text, input);
      } else {
        yield* this.stream(response.body, translator, input, out);
      }
    } catch (err) {
      if (signal.aborted) return;
      translator.close(out);
      out.push(
        translator.error(
          err instanceof StreamBoundError
            ? `${this.url} ${err.message}`
            : `the connection to ${this.config.baseUrl} dropped mid-stream: ${describe(err)}`,
        ),
      );
      yield* out.splice(0);
    } finally {
      if (!response.body.destroyed) response.body.destroy();
    }
  }

  private async *stream(
    body: ResponseBody,
    translator: ChunkTranslator,
    input: RunAgentInput,
    out: Event[],
  ): AsyncIterable<unknown> {
    const messages: EventSourceMessage[] = [];
    const parser = createParser({ onEvent: (message) => messages.push(message) });
    const decoder = new TextDecoder();
    let done = false;
    let failed = false;
    // Handles what the parser has dispatched; false once the stream is over ([DONE] or error).
    const drain = (): boolean => {
      for (const message of messages.splice(0)) {
        if (message.data === "[DONE]") {
          done = true;
          return false;
        }
        const failure = this.chunk(message, translator, out);
        if (failure) {
          translator.close(out);
          out.push(failure);
          failed = true;
          return false;
        }
      }
      return true;
    };
    // No SSE event larger than the bound reaches the parser: the stream fails first (in run()).
    const { maxEventBytes, keys } = this.bounds;
    const chunks = boundedEvents(body as AsyncIterable<Uint8Array>, {
      maxEventBytes,
      idleTimeoutMs: 0,
      keys: { maxEventBytes: keys.maxEventBytes },
    });
    for await (const bytes of chunks) {
      parser.feed(decoder.decode(bytes, { stream: true }));
      const more = drain();
      yield* out.splice(0);
      if (failed) return;
      if (!more) break;
    }
    if (!done) {
      // A last event the server did not end with a blank line.
      parser.feed(`${decoder.decode()}\n\n`);
      drain();
      yield* out.splice(0);
      if (failed) return;
    }
    if (!done && translator.finished === undefined) {
      // A clean end of the body without [DONE] or a finish_reason: the answer is cut short.
      translator.close(out);
      out.push(
        translator.error(
          `the connection to ${this.config.baseUrl} dropped mid-stream: the response ended before the completion finished`,
        ),
      );
      yield* out.splice(0);
      return;
    }
    translator.close(out);
    out.push(translator.finish(input.threadId, input.runId));
    yield* out.splice(0);
  }

  /** Handles one SSE message; returns the RUN_ERROR when it carries (or is) an error. */
  private chunk(
    message: EventSourceMessage,
    translator: ChunkTranslator,
    out: Event[],
  ): Event | undefined {
    let data: unknown;
    try {
      data = JSON.parse(message.data);
    } catch {
      if (message.event === "error") return translator.error(message.data);
      return translator.error(
        `${this.url} sent a stream chunk that is not JSON: ${quote(message.data)}`,
      );
    }
    const failure =
      providerError(data) ??
      (message.event === "error" ? providerError({ error: data }) : undefined);
    if (failure) return translator.error(failure.message, failure.code);
    if (typeof data === "object" && data !== null && !Array.isArray(data)) {
      translator.chunk(data as Record<string, unknown>, out);
    }
    return undefined;
  }

  /** A non-streamed completion, translated as if it were one chunk. */
  private *whole(text: string, input: RunAgentInput): Iterable<unknown> {
    const translator = new ChunkTranslator();
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      yield translator.error(`${this.url} answered with JSON that does not parse: ${quote(text)}`);
      return;
    }
    const failure = providerError(data);
    if (failure) {
      yield translator.error(failure.message, failure.code);
      return;
    }
    const record = data as Record<string, unknown>;
    const choices = Array.isArray(record.choices) ? record.choices : [];
    const out: Event[] = [];
    translator.chunk(
      {
        ...record,
        choices: choices.map((choice: Record<string, unknown>) => ({
          index: choice.index ?? 0,
          delta: choice.message,
          finish_reason: choice.finish_reason ?? "stop",
        })),
      },
      out,
    );
    translator.close(out);
    out.push(translator.finish(input.threadId, input.runId));
    yield* out;
  }

  private httpError(status: number, text: string): Event {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    const failure = providerError(parsed);
    const event: Event = {
      type: "RUN_ERROR",
      message: failure
        ? `${failure.message} (HTTP ${status} from ${this.url})`
        : `${this.url} answered HTTP ${status}${text.trim() ? `: ${quote(text.trim())}` : ""}`,
    };
    if (failure?.code !== undefined) event.code = failure.code;
    return event;
  }
}

/** The body as text, up to `limit` bytes: what is past it is never read. */
async function readLimited(body: ResponseBody, limit = ERROR_BODY_LIMIT): Promise<string> {
  return (await readUpTo(body, limit)).text;
}

/** Up to `limit` bytes of the body as text, and how many bytes were read (at most `limit`). */
async function readUpTo(
  body: ResponseBody,
  limit: number,
): Promise<{ text: string; bytes: number }> {
  const decoder = new TextDecoder();
  let text = "";
  let read = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    const kept = chunk.subarray(0, limit - read);
    text += decoder.decode(kept, { stream: true });
    read += kept.length;
    if (read >= limit) break;
  }
  return { text: text + decoder.decode(), bytes: read };
}

function quote(text: string): string {
  return text.length > QUOTE_LIMIT ? `${text.slice(0, QUOTE_LIMIT)}…` : text;
}

/** A network error in words: undici's message, its code, and a cause or inner errors. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const parts: string[] = [];
  if (err.message) parts.push(err.message);
  if (err instanceof AggregateError) {
    for (const inner of err.errors) {
      if (inner instanceof Error && inner.message) parts.push(inner.message);
    }
  }
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string" && !parts.some((part) => part.includes(code))) parts.push(code);
  const cause = err.cause;
  if (cause instanceof Error && cause.message && !parts.includes(cause.message)) {
    parts.push(cause.message);
  }
  return parts.join(": ") || err.name;
}
