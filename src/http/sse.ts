import type { FastifyReply, FastifyRequest } from "fastify";
import type { RunFrame } from "../storage/types.js";

export interface SseOptions {
  /** Seconds between keep-alive comment lines; 0 = none. */
  keepAliveSeconds: number;
  /** Extra response headers (e.g. Location / Content-Location for the created run). */
  headers?: Record<string, string>;
}

/**
 * The keep-alive: one comment line and no blank line after it.
 *
 * A comment block (`: keep-alive` and a blank line), the usual form, is what AGNTCY's
 * Python SDK (`agntcy-acp`) cannot survive: its reader dispatches an event at every blank
 * line, whatever the lines before it were, and parses that event's data as a
 * `StreamEventPayload`; the empty data of a comment block fails with "No match found when
 * deserializing the JSON string into StreamEventPayload" and ends the stream. A comment line
 * alone dispatches nothing in that reader (it skips lines starting with ":") nor in a WHATWG
 * EventSource parser (a comment is ignored, and an event is dispatched only at a blank line):
 * the line simply becomes part of the next frame's block, which ends with the frame's own blank
 * line. The HTML standard's advice for proxies is exactly this, "a comment line every 15 seconds
 * or so"; bytes still flow every `keepAliveSeconds`, so an idle proxy (nginx's default read
 * timeout is 60 s) keeps the connection.
 */
const KEEP_ALIVE = ": keep-alive\n";

/**
 * Line breaks that JSON.stringify leaves raw inside strings but Python's `str.splitlines()`
 * (the line splitter of `agntcy-acp`'s reader) splits on. A raw one in a frame's data would cut
 * the JSON line in two there; escaped, the data is the same JSON and stays on one line.
 */
const SPLITLINES_BREAK = /[\u0085\u2028\u2029]/;
const SPLITLINES_BREAKS = /[\u0085\u2028\u2029]/g;

function escapeLineBreaks(data: string): string {
  if (!SPLITLINES_BREAK.test(data)) return data;
  return data.replace(
    SPLITLINES_BREAKS,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

/**
 * Writes frames as ACP SSE: `id: <seq>`, `event: agent_event`, one-line JSON `data`.
 * The reply is hijacked: from here on we own the socket, Fastify does not serialize.
 */
export class SseWriter {
  private keepAlive: NodeJS.Timeout | undefined;
  private closed = false;
  /** The last write did not fit the socket's buffer (`write()` returned false). */
  private backedUp = false;
  readonly aborted: AbortController = new AbortController();

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly options: SseOptions,
  ) {}

  open(): void {
    this.reply.hijack();
    const raw = this.reply.raw;
    raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      // Without this, nginx-style proxies buffer the whole stream and the client sees nothing.
      "x-accel-buffering": "no",
      ...this.options.headers,
    });
    raw.flushHeaders();
    // The client going away is how `on_disconnect: cancel` learns about it; the socket's close
    // also stops the adapter through the abort signal so its `finally` runs.
    raw.on("close", () => this.close());
    if (this.options.keepAliveSeconds > 0) {
      this.keepAlive = setInterval(() => {
        if (!this.closed) raw.write(KEEP_ALIVE);
      }, this.options.keepAliveSeconds * 1000);
      this.keepAlive.unref();
    }
  }

  /** True when the socket buffer is full: the caller may skip superseded values frames. */
  get congested(): boolean {
    return this.backedUp;
  }

  write(frame: RunFrame): void {
    if (this.closed) return;
    // `write()`'s answer, not `writableNeedDrain`: a response that is not a socket (Fastify's
    // inject) reports a need to drain but never emits `drain`, and the stream would hang there.
    this.backedUp = !this.reply.raw.write(
      `id: ${frame.seq}\nevent: agent_event\ndata: ${escapeLineBreaks(frame.data)}\n\n`,
    );
  }

  /** Waits until the socket drains or closes, so a slow client holds back the reader. */
  async drain(): Promise<void> {
    const raw = this.reply.raw;
    if (this.closed || !this.backedUp) return;
    this.backedUp = false;
    await new Promise<void>((resolve) => {
      const done = () => {
        raw.off("drain", done);
        raw.off("close", done);
        resolve();
      };
      raw.on("drain", done);
      raw.on("close", done);
    });
  }

  get isClosed(): boolean {
    return this.closed;
  }

  end(): void {
    if (!this.closed) {
      this.closed = true;
      clearInterval(this.keepAlive);
      this.reply.raw.end();
    }
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepAlive);
    this.aborted.abort(new Error(`client ${this.request.ip} disconnected`));
  }
}

/** The `Last-Event-ID` header as a sequence number, or undefined when absent or not a number. */
export function lastEventId(request: FastifyRequest): number | undefined {
  const header = request.headers["last-event-id"];
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === "") return undefined;
  const seq = Number(value);
  return Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
}
