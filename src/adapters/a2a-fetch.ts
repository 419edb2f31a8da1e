/**
 * The `fetch` the A2A client is given: every request it makes (the card, sends, streams, polls,
 * cancels) goes through here, so the configured headers and the run's trace context reach
 * every one, the wait for an answer's headers is bounded, and every answer's body passes the
 * agent's bounds (stream-bounds.ts) before the SDK holds any of it: an SSE answer event by
 * event, any other answer as one event.
 */
import { injectTraceHeaders } from "../telemetry/index.js";
import { quote } from "./agui-http-decode.js";
import { boundedStream, type StreamBounds } from "./stream-bounds.js";

/** What an answer's body may do before the run fails, and the config keys that set it. */
export interface BodyLimits {
  /** Largest JSON answer, or single SSE event (the agent's `maxEventBytes`). */
  maxEventBytes: number;
  /** Deepest nesting of a JSON answer or SSE event (the agent's `maxEventDepth`). */
  maxEventDepth: number;
  /** Largest total of a streamed (SSE) answer; 0 = no limit. */
  maxStreamBytes: number;
  /** Longest wait for the next complete event (a whole JSON answer is one); 0 = no limit. */
  idleTimeoutMs: number;
  keys: { maxEventBytes: string; maxEventDepth: string };
}

/**
 * The upstream answered in a way the SDK would misreport (an HTML error page, a wrong content
 * type) or not at all in time: the message names the fault, after the agent's name.
 */
export class UpstreamFault extends Error {
  override readonly name = "UpstreamFault";
}

export interface BoundedFetchOptions extends BodyLimits {
  /** Sent with every request unless the client set the same header itself. */
  headers: Record<string, string>;
  /** Longest wait for an answer's status and headers; 0 = no limit. */
  connectTimeoutMs: number;
}

/** How much of an error page is read, to quote its start. */
const ERROR_BODY_LIMIT = 8 * 1024;

export function boundedFetch(options: BoundedFetchOptions): typeof fetch {
  return async (resource, init = {}) => {
    const headers = new Headers(init.headers);
    const own: Record<string, string> = { ...options.headers };
    // The agent's own spans join the run's trace (traceparent), when tracing is on.
    injectTraceHeaders(own);
    for (const [name, value] of Object.entries(own)) {
      if (!headers.has(name)) headers.set(name, value);
    }
    const signals = init.signal ? [init.signal] : [];
    const timeout = new AbortController();
    const timer =
      options.connectTimeoutMs > 0
        ? setTimeout(
            () =>
              timeout.abort(
                new UpstreamFault(
                  `did not answer within ${options.connectTimeoutMs} ms (connectTimeoutMs)`,
                ),
              ),
            options.connectTimeoutMs,
          )
        : undefined;
    try {
      const response = await fetch(resource, {
        ...init,
        headers,
        signal: AbortSignal.any([...signals, timeout.signal]),
      });
      // Still under the connect timeout: an error page that trickles costs no more than that.
      await refuseUnreadable(response, headers.get("accept"));
      return boundedBody(response, options);
    } catch (err) {
      if (timeout.signal.aborted) throw timeout.signal.reason;
      throw err;
    } finally {
      clearTimeout(timer);
    }
  };
}

/**
 * A copy of `response` whose body fails with a `StreamBoundError` (naming the bound and its
 * config key) as soon as an event grows past `maxEventBytes` or `maxEventDepth`, a streamed
 * answer past `maxStreamBytes`, or the next event takes longer than `idleTimeoutMs`; the
 * connection is closed then.
 */
export function boundedBody(response: Response, limits: BodyLimits): Response {
  if (!response.body) return response;
  const bounds: StreamBounds = {
    maxEventBytes: limits.maxEventBytes,
    idleTimeoutMs: limits.idleTimeoutMs,
    maxDepth: limits.maxEventDepth,
    framing: mediaType(response) === "text/event-stream" ? "sse" : "whole",
    keys: {
      maxEventBytes: limits.keys.maxEventBytes,
      maxDepth: limits.keys.maxEventDepth,
      idleTimeoutMs: "idleTimeoutMs",
      maxStreamBytes: "maxStreamBytes",
    },
  };
  if (bounds.framing === "sse") bounds.maxStreamBytes = limits.maxStreamBytes;
  return new Response(boundedStream(response.body, bounds), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * Answers that are not A2A at all fail here, with a message naming what came instead: the
 * SDK would say "Unexpected token '<'" of an HTML page. JSON answers (an A2A error among
 * them) and event streams go on to the SDK, and so does other text where JSON was asked for
 * (a card on a static host may be served as text/plain).
 */
async function refuseUnreadable(response: Response, accept: string | null): Promise<void> {
  const type = mediaType(response);
  if (type === "" || type === "text/event-stream" || /[/+]json$/.test(type)) return;
  const shown = JSON.stringify(type);
  if (response.ok) {
    const streaming = accept?.includes("text/event-stream") === true;
    if (!streaming && !type.includes("html")) return;
    await response.body?.cancel().catch(() => {});
    const wanted = streaming ? "text/event-stream" : "application/json";
    throw new UpstreamFault(`answered with content type ${shown}, not ${wanted}`);
  }
  const text = await readStart(response);
  const detail = text.trim() === "" ? "" : `: ${quote(text)}`;
  throw new UpstreamFault(`answered HTTP ${response.status} (${shown})${detail}`);
}

/**
 * The first few KiB of a body (read to quote it, whatever the bounds on events), the rest
 * left unread and the connection closed; what came before the connection broke is quoted.
 */
async function readStart(response: Response): Promise<string> {
  const reader = response.body?.getReader();
  if (!reader) return "";
  const decoder = new TextDecoder();
  let text = "";
  try {
    while (text.length < ERROR_BODY_LIMIT) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
  } catch {
    // Quoted as far as it came.
  } finally {
    reader.cancel().catch(() => {});
  }
  return text.slice(0, ERROR_BODY_LIMIT);
}

function mediaType(response: Response): string {
  return (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
}
