import type { FastifyReply, FastifyRequest } from "fastify";
import type { ReadFrame } from "../../engine/frames/codec.js";
import type { RunFrame } from "../../storage/types.js";
import { jsonAtLeast, jsonPieces } from "../../util/json-pieces.js";
import { SSE_KEEP_ALIVE } from "../streaming/sse-keep-alive.js";
import { StreamWriter } from "../streaming/stream-writer.js";

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

/** A frame at least this long is written on its own, not joined with the frames around it. */
const WRITE_ALONE_CHARS = 64 * 1024;

/**
 * How far the frames after a values frame may queue behind it before the reader waits for the
 * socket: while a long answer's values frame (megabytes) is being sent, the events after it are
 * written behind it, and the values frames among them are skipped (see `farBehind`), instead of
 * each being rendered and sent in full to a client that cannot keep up.
 */
const QUEUE_BEHIND_VALUES_CHARS = 1024 * 1024;

/**
 * How much may wait in the socket before a values frame is skipped (see `farBehind`). Above
 * QUEUE_BEHIND_VALUES_CHARS: only a client behind by more than a large values frame (a long
 * answer's state) skips any; one behind on a stream of small frames gets them all.
 */
const SKIP_VALUES_BEHIND_CHARS = 2 * 1024 * 1024;

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
  /** The largest values frame written since the socket last drained: what may queue ahead. */
  private valuesChars = 0;
  /** The socket made the reader wait since the last values frame was written. */
  private waited = false;

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

  /**
   * True when the socket is full beyond what may queue behind the last values frame: the reader
   * then waits for it (`drain()`).
   */
  get congested(): boolean {
    return (
      this.backedUp &&
      this.writer.queuedBytes + this.pendingChars > this.valuesChars + QUEUE_BEHIND_VALUES_CHARS
    );
  }

  /**
   * True while the socket is still sending more than SKIP_VALUES_BEHIND_CHARS written before: a
   * values frame now would only queue behind it, and the next values frame (or the final frame,
   * which carries the values) supersedes it. A client a little behind still gets every frame,
   * without holes in the ids.
   */
  get farBehind(): boolean {
    return this.writer.queuedBytes > SKIP_VALUES_BEHIND_CHARS;
  }

  /**
   * Whether to skip a values frame: the client is far behind (see `farBehind`), or the socket
   * made us wait since the last values frame and the log has moved on past this one already.
   * A long values frame is written in pieces as the socket takes them (`writeWhole`), so the
   * socket never holds much: that the agent got ahead while we waited is what says the client
   * cannot keep up. A client at the head of the log still gets the newest values.
   */
  skipsValues(frame: ReadFrame): boolean {
    return this.farBehind || (this.waited && frame.superseded?.() === true);
  }

  /**
   * Writes a frame that may repeat a long answer's whole state (a values frame, a final frame
   * completed from the run's output): a long one goes out in pieces of its JSON as the socket
   * takes them (waiting for it between pieces), so that neither its whole text nor that text's
   * bytes are ever in memory, let alone one such frame after another before the collector
   * catches up. A short one is written as any frame. The frame's value must stay as it is
   * until this resolves (the caller takes no further frame meanwhile).
   */
  async writeWhole(frame: ReadFrame): Promise<void> {
    const value = frame.value?.();
    if (value === undefined || !jsonAtLeast(value, WRITE_ALONE_CHARS)) {
      this.write(frame);
      return;
    }
    if (frame.mode === "values" && this.waited) {
      // The last long frame made us wait for the client: give the agent a turn first. If its
      // next events arrive meanwhile, this frame is superseded before it costs a render.
      await new Promise<void>((resolve) => setImmediate(resolve));
      if (frame.superseded?.() === true || this.writer.done) return;
    }
    if (frame.mode === "values") {
      this.valuesChars = 0;
      this.waited = false;
    }
    this.flush();
    this.writer.write(`id: ${frame.seq}\nevent: agent_event\ndata: `);
    for (const piece of jsonPieces(value)) {
      if (this.writer.done) return;
      this.writer.write(escapeLineBreaks(piece));
      // The socket's own buffer is the queue: one piece beyond what it holds, then wait.
      if (this.writer.congested) {
        this.waited = true;
        await this.writer.drain();
      }
    }
    this.writer.write("\n\n");
    this.backedUp = this.writer.congested;
  }

  write(frame: RunFrame): void {
    const data = frame.data;
    if (frame.mode === "values") {
      this.valuesChars = Math.max(this.valuesChars, data.length);
      this.waited = false;
    }
    if (data.length >= WRITE_ALONE_CHARS) {
      // Its own writes, so that its megabytes are not copied once more into one chunk.
      this.flush();
      this.writer.write(`id: ${frame.seq}\nevent: agent_event\ndata: `);
      this.writer.write(escapeLineBreaks(data));
      this.writer.write("\n\n");
      this.backedUp = this.writer.congested;
      return;
    }
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
  async drain(): Promise<void> {
    this.flush();
    if (this.writer.congested) this.waited = true;
    this.backedUp = false;
    await this.writer.drain();
    this.valuesChars = 0;
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
