import type { FastifyReply, FastifyRequest } from "fastify";
import type { RunFrame } from "../../storage/types.js";
import { SSE_KEEP_ALIVE } from "./sse-keep-alive.js";
import { StreamWriter } from "./stream-writer.js";

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
 * One run frame as ACP SSE (`id: <seq>`, `event: agent_event`, one-line JSON `data`) before
 * `escapeLineBreaks`: its only non-ASCII characters are the data's, so escaping many frames'
 * text at once is the same as escaping each frame's.
 */
function frameText(frame: RunFrame): string {
  return `id: ${frame.seq}\nevent: agent_event\ndata: ${frame.data}\n\n`;
}

/**
 * Frames buffered beyond this many characters are written at once instead of at the end of the
 * tick, so that a large batch still meets the socket's backpressure (its high-water mark is
 * 16 KiB) while it is being written.
 */
const COALESCE_CHARS = 16 * 1024;

export interface AcpStreamOptions {
  /** Seconds between keep-alive comment lines; 0 = none. */
  keepAliveSeconds: number;
  /** Extra response headers (e.g. Content-Location for the run). */
  headers?: Record<string, string>;
}

/**
 * An ACP run stream: run frames written as ACP SSE.
 *
 * The frames written in one tick go out as one chunk. Frames arrive in batches (the frame
 * writer stores and publishes a batch per turn of the event loop), and a `write()` per frame
 * cost more than encoding it: a chunk header, a buffer and a `writev` entry each.
 */
export class AcpSseStream {
  private readonly writer: StreamWriter;
  /** Frames written since the last flush, as SSE text not yet escaped; joined once at the flush. */
  private pending: string[] = [];
  private pendingChars = 0;
  private flushScheduled = false;
  /**
   * The flush in `write()` found the socket full, and `drain()` was not called since: what
   * `congested` says. A flush at the end of a tick does not count: nobody waits for it, and a
   * values frame after it is written as it was when each frame was written and waited for.
   */
  private backedUp = false;

  constructor(request: FastifyRequest, reply: FastifyReply, options: AcpStreamOptions) {
    this.writer = new StreamWriter(request, reply, {
      contentType: "text/event-stream; charset=utf-8",
      headers: options.headers,
      keepAliveSeconds: options.keepAliveSeconds,
      keepAlive: SSE_KEEP_ALIVE,
    });
  }

  open(): void {
    this.writer.open();
  }

  /** Aborts when the response closes before the stream ended (see StreamWriter.closed). */
  get signal(): AbortSignal {
    return this.writer.closed;
  }

  /** True when the socket buffer is full: the caller may skip superseded values frames. */
  get congested(): boolean {
    return this.backedUp;
  }

  write(frame: RunFrame): void {
    const text = frameText(frame);
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars >= COALESCE_CHARS) {
      this.flush();
      this.backedUp = this.writer.congested;
    } else if (!this.flushScheduled) {
      this.flushScheduled = true;
      // After the microtasks that deliver the rest of the batch.
      process.nextTick(this.flushLater);
    }
  }

  /** Writes what is buffered and waits until the socket takes more (see StreamWriter.drain). */
  drain(): Promise<void> {
    this.flush();
    this.backedUp = false;
    return this.writer.drain();
  }

  end(): void {
    this.flush();
    this.writer.end();
  }

  private readonly flushLater = (): void => {
    this.flushScheduled = false;
    this.flush();
  };

  private flush(): void {
    if (this.pending.length === 0) return;
    const text = this.pending.join("");
    this.pending = [];
    this.pendingChars = 0;
    this.writer.write(escapeLineBreaks(text));
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
