import type { ServerResponse } from "node:http";
import { Socket } from "node:net";
import type { FastifyReply, FastifyRequest } from "fastify";
import { wireChunk } from "../wire-bytes.js";
import { clientGone } from "./client-gone.js";

export interface StreamWriterOptions {
  contentType: string;
  /** Extra response headers (e.g. the run's location). */
  headers?: Record<string, string>;
  /** Seconds between keep-alives; 0 = none. */
  keepAliveSeconds: number;
  /**
   * The bytes a keep-alive is, in this encoding; undefined when the encoding has none (a
   * binary stream, where any extra byte would be read as a frame).
   */
  keepAlive?: string;
}

/**
 * One response streamed to one client, whatever the protocol: the reply is hijacked (from here
 * on we own the socket, Fastify does not serialize), the headers go out at once, writes report
 * backpressure, keep-alives keep an idle connection open, and `closed` aborts when the response
 * closes before the writer ended it.
 *
 * The encoders (ACP SSE, AG-UI SSE or protobuf) only turn values into bytes; this is the only
 * code that writes a stream's response.
 */
export class StreamWriter {
  private keepAliveTimer: NodeJS.Timeout | undefined;
  private ended = false;
  /**
   * The response closed before `end()` (what `closed` says): kept as a flag for `write()`, which
   * runs per frame. On Node 20 every AbortSignal has a hidden class of its own, and optimized
   * code that reads one is thrown away when it meets the next stream's.
   */
  private closedEarly = false;
  /** The last write did not fit the socket's buffer (`write()` returned false). */
  private backedUp = false;
  private readonly gone = new AbortController();
  private readonly raw: ServerResponse;

  constructor(
    private readonly request: FastifyRequest,
    private readonly reply: FastifyReply,
    private readonly options: StreamWriterOptions,
  ) {
    this.raw = reply.raw;
  }

  /**
   * Aborts when the response closes before `end()`: the client went away (the reason says so),
   * or the server closed the response at shutdown. Either way nothing more can be written.
   */
  get closed(): AbortSignal {
    return this.gone.signal;
  }

  /** Whether the stream stopped because the client went away (not because the server ended it). */
  get clientWentAway(): boolean {
    return this.gone.signal.aborted && this.gone.signal.reason instanceof ClientDisconnected;
  }

  open(): void {
    this.reply.hijack();
    const raw = this.raw;
    raw.writeHead(200, {
      "content-type": this.options.contentType,
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      // Without this, nginx-style proxies buffer the whole stream and the client sees nothing.
      "x-accel-buffering": "no",
      ...this.options.headers,
    });
    // The headers go out with the first frame when there is one at once (one write instead of
    // two, in what is most of a short stream's work), else on their own at the next turn.
    setImmediate(this.flushHeaders);
    // The client going away is how `on_disconnect: cancel` learns about it; it also stops the
    // reader of the run's log, so the adapter's `finally` runs.
    raw.on("close", () => this.onClose());
    const { keepAlive, keepAliveSeconds } = this.options;
    if (keepAlive !== undefined && keepAliveSeconds > 0) {
      this.keepAliveTimer = setInterval(() => {
        if (!this.writable) return;
        this.wroteBody = true;
        raw.write(keepAlive);
      }, keepAliveSeconds * 1000);
      this.keepAliveTimer.unref();
    }
  }

  /** Whether anything went out after the headers (which then went with it). */
  private wroteBody = false;

  private readonly flushHeaders = (): void => {
    // Not `raw.headersSent`: it is true as soon as writeHead() stored them, before any write.
    if (this.writable && !this.wroteBody) this.raw.flushHeaders();
  };

  /** True once nothing more can be written: the stream ended, or its response closed. */
  get done(): boolean {
    return !this.writable;
  }

  /** True when the socket buffer is full: the caller may skip values that are superseded. */
  get congested(): boolean {
    return this.backedUp;
  }

  /**
   * Bytes written that the socket has not taken yet (held by Node until the client reads). A
   * response that is not on a socket (Fastify's inject) holds everything and sends nothing, and
   * counts none.
   */
  get queuedBytes(): number {
    return this.raw.socket instanceof Socket ? this.raw.writableLength : 0;
  }

  /** Writes one encoded chunk; nothing once the stream is over. */
  write(chunk: string | Uint8Array): void {
    if (!this.writable) return;
    // `write()`'s answer, not `writableNeedDrain`: a response that is not a socket (Fastify's
    // inject) reports a need to drain but never emits `drain`, and the stream would hang there.
    this.wroteBody = true;
    this.backedUp = !this.raw.write(wireChunk(chunk));
  }

  /** Waits until the socket drains or closes, so a slow client holds back the reader. */
  async drain(): Promise<void> {
    if (!this.writable || !this.backedUp) return;
    this.backedUp = false;
    const raw = this.raw;
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

  /** Writes one chunk and waits for the socket when it backed up. */
  async send(chunk: string | Uint8Array): Promise<void> {
    this.write(chunk);
    if (this.backedUp) await this.drain();
  }

  end(): void {
    if (!this.writable) return;
    this.ended = true;
    clearInterval(this.keepAliveTimer);
    this.raw.end();
  }

  private get writable(): boolean {
    return !this.ended && !this.closedEarly;
  }

  private onClose(): void {
    clearInterval(this.keepAliveTimer);
    if (this.ended) return;
    this.closedEarly = true;
    this.gone.abort(
      clientGone(this.raw)
        ? new ClientDisconnected(this.request.ip)
        : new Error("the server closed the stream"),
    );
  }
}

export class ClientDisconnected extends Error {
  constructor(ip: string) {
    super(`client ${ip} disconnected`);
  }
}
