import type { FastifyReply, FastifyRequest } from "fastify";
import type { RunFrame } from "../storage/types.js";

export interface SseOptions {
  /** Seconds between keep-alive comments; 0 = none (some ACP clients choke on comments). */
  keepAliveSeconds: number;
  /** Extra response headers (e.g. Location / Content-Location for the created run). */
  headers?: Record<string, string>;
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
        if (!this.closed) raw.write(": keep-alive\n\n");
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
      `id: ${frame.seq}\nevent: agent_event\ndata: ${frame.data}\n\n`,
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
