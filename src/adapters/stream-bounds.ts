/**
 * Bounds on a byte stream of events from an agent, enforced as the bytes arrive and before
 * they are held: no event larger than `maxEventBytes`, and no wait of more than
 * `idleTimeoutMs` for the next complete event. Knows the framing of an event (an SSE block
 * ended by a blank line, or a 4-byte length-prefixed frame) but not its content; the decoder
 * that reads the bytes after this guard never holds more than one bounded event.
 *
 * ```ts
 * for await (const chunk of boundedEvents(body, { maxEventBytes, idleTimeoutMs })) decoder.push(chunk);
 * // or, for a client that reads SSE through a fetch of its own:
 * const fetchImpl = boundedFetch({ maxEventBytes, idleTimeoutMs }); // throws StreamBoundError
 * ```
 *
 * On a breach the source is closed (its iterator returned, which destroys an undici body or
 * cancels a web stream) and a {@link StreamBoundError} is thrown, carrying the limit and the
 * config key that sets it.
 */

export type Framing = "sse" | "length-prefixed";

export interface StreamBounds {
  /** Largest event (SSE block or frame, framing included), in bytes; 0 = no limit. */
  maxEventBytes: number;
  /** Longest wait for the next complete event while reading; 0 = no limit. */
  idleTimeoutMs: number;
  /** Default "sse". */
  framing?: Framing;
  /** The config keys named in errors. Default `maxEventBytes` and `idleTimeoutMs`. */
  keys?: { maxEventBytes?: string; idleTimeoutMs?: string };
}

/** A stream broke one of its bounds; `message` reads after the agent's name. */
export class StreamBoundError extends Error {
  override readonly name = "StreamBoundError";
  constructor(
    readonly bound: "maxEventBytes" | "idleTimeoutMs",
    /** The limit that was passed, in bytes or milliseconds. */
    readonly limit: number,
    /** The config key that sets the limit, as the error names it. */
    readonly configKey: string,
    message: string,
    /** For a length-prefixed frame too large: its first bytes (to tell text from protobuf). */
    readonly head?: Uint8Array,
  ) {
    super(message);
  }
}

/**
 * The bytes of `source`, unchanged, for as long as they respect `bounds`. Time the consumer
 * spends between chunks is not the source's silence: only waits on the source count.
 */
export async function* boundedEvents(
  source: AsyncIterable<Uint8Array>,
  bounds: StreamBounds,
): AsyncGenerator<Uint8Array, void, undefined> {
  const scanner =
    bounds.framing === "length-prefixed" ? new FrameScanner(bounds) : new SseScanner(bounds);
  const iterator = source[Symbol.asyncIterator]();
  const idle = bounds.idleTimeoutMs;
  /** Milliseconds spent waiting on the source since the last complete event. */
  let waited = 0;
  /** Whether any byte came since the last complete event (a trickle, or keep-alives). */
  let trickled = false;
  let finished = false;
  try {
    for (;;) {
      const started = performance.now();
      const result =
        idle > 0
          ? await withDeadline(iterator.next(), idle - waited, bounds, trickled)
          : await iterator.next();
      waited += performance.now() - started;
      if (result.done) {
        finished = true;
        return;
      }
      if (scanner.scan(result.value)) {
        waited = 0;
        trickled = false;
      } else trickled = true;
      yield result.value;
    }
  } finally {
    if (!finished) {
      // A breach, a consumer that stopped early, or a source that failed: close the source.
      // Not awaited: a Node stream's iterator settles its return only after the read still
      // pending, which is the silence being given up on.
      Promise.resolve(iterator.return?.()).catch(() => {});
    }
  }
}

/** The same bounds on a web stream (a fetch Response's body). */
export function boundedStream(
  source: ReadableStream<Uint8Array>,
  bounds: StreamBounds,
): ReadableStream<Uint8Array> {
  const events = boundedEvents(source as unknown as AsyncIterable<Uint8Array>, bounds);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { value, done } = await events.next();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        controller.error(err);
      }
    },
    async cancel() {
      await events.return(undefined);
    },
  });
}

/**
 * A `fetch` whose `text/event-stream` responses are bounded (other responses pass as they
 * are): for clients that take a fetch of their own, such as @a2a-js/sdk's.
 */
export function boundedFetch(
  bounds: Omit<StreamBounds, "framing">,
  fetchImpl: typeof fetch = fetch,
): typeof fetch {
  return async (input, init) => {
    const response = await fetchImpl(input, init);
    const type = (response.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
    if (type !== "text/event-stream" || response.body === null) return response;
    return new Response(boundedStream(response.body, { ...bounds, framing: "sse" }), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

async function withDeadline<T>(
  next: Promise<T>,
  ms: number,
  bounds: StreamBounds,
  trickled: boolean,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const key = bounds.keys?.idleTimeoutMs ?? "idleTimeoutMs";
  const what = trickled ? "no complete event" : "nothing";
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new StreamBoundError(
            "idleTimeoutMs",
            bounds.idleTimeoutMs,
            key,
            `sent ${what} for ${bounds.idleTimeoutMs} ms (${key})`,
          ),
        ),
      Math.max(0, ms),
    );
  });
  // The read left pending when the deadline wins fails once the source is closed: unheard.
  next.catch(() => {});
  try {
    return await Promise.race([next, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

function tooLarge(bounds: StreamBounds, what: string, head?: Uint8Array): StreamBoundError {
  const key = bounds.keys?.maxEventBytes ?? "maxEventBytes";
  return new StreamBoundError("maxEventBytes", bounds.maxEventBytes, key, `${what} (${key})`, head);
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * SSE framing: an event ends at a blank line (LF, CRLF or CR line ends). Counts the bytes of
 * the event under way; an event is complete (for the idle clock) only when it carried a
 * `data` field: a stream of keep-alive comments never completes one.
 */
class SseScanner {
  private bytes = 0;
  private atLineStart = true;
  private afterCr = false;
  /** Bytes of the current line matched against "data" so far; -1 once it cannot match. */
  private fieldMatch = 0;
  private hasData = false;

  constructor(private readonly bounds: StreamBounds) {}

  /** True when the chunk completed at least one event. */
  scan(chunk: Uint8Array): boolean {
    let completed = false;
    let start = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === LF || byte === CR) {
        if (byte === LF && this.afterCr) {
          this.afterCr = false;
          continue;
        }
        this.afterCr = byte === CR;
        this.endField();
        if (this.atLineStart) {
          // A blank line: the event is over; the next one starts after it.
          this.check(this.bytes + i + 1 - start);
          if (this.hasData) completed = true;
          this.hasData = false;
          this.bytes = 0;
          start = i + 1;
        }
        this.atLineStart = true;
        this.fieldMatch = 0;
        continue;
      }
      this.afterCr = false;
      this.atLineStart = false;
      if (this.fieldMatch >= 0) {
        if (this.fieldMatch < 4 && byte === DATA[this.fieldMatch]) this.fieldMatch++;
        else if (this.fieldMatch === 4 && byte === 0x3a) {
          this.hasData = true;
          this.fieldMatch = -1;
        } else this.fieldMatch = -1;
      }
    }
    // Bytes of this chunk from the last event boundary on belong to the event under way.
    this.bytes += chunk.length - start;
    this.check(this.bytes);
    return completed;
  }

  private check(bytes: number): void {
    const limit = this.bounds.maxEventBytes;
    if (limit > 0 && bytes > limit) {
      throw tooLarge(
        this.bounds,
        `sent an SSE event larger than ${formatBytes(limit)}, the most one event may be`,
      );
    }
  }

  /** A line that is exactly "data" is a data field too (an empty one). */
  private endField(): void {
    if (this.fieldMatch === 4) this.hasData = true;
  }
}

const DATA = [0x64, 0x61, 0x74, 0x61];

/** Length-prefixed framing: a 4-byte big-endian length, then that many bytes. */
class FrameScanner {
  private header = new Uint8Array(4);
  private headerBytes = 0;
  private remaining = 0;

  constructor(private readonly bounds: StreamBounds) {}

  scan(chunk: Uint8Array): boolean {
    let completed = false;
    let i = 0;
    while (i < chunk.length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, chunk.length - i);
        this.remaining -= take;
        i += take;
        if (this.remaining === 0) completed = true;
        continue;
      }
      this.header[this.headerBytes++] = chunk[i++]!;
      if (this.headerBytes < 4) continue;
      this.headerBytes = 0;
      const length = new DataView(this.header.buffer).getUint32(0, false);
      const limit = this.bounds.maxEventBytes;
      if (limit > 0 && length > limit) {
        const head = new Uint8Array(Math.min(200, 4 + chunk.length - i));
        head.set(this.header, 0);
        head.set(chunk.subarray(i, i + head.length - 4), 4);
        throw tooLarge(
          this.bounds,
          `sent a frame of ${length} bytes, more than the ${formatBytes(limit)} one event may be`,
          head,
        );
      }
      this.remaining = length;
      if (length === 0) completed = true;
    }
    return completed;
  }
}

export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / 1024 / 1024} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
