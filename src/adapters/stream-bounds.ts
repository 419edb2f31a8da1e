/**
 * Bounds on a byte stream of events from an agent, enforced as the bytes arrive and before
 * they are held: no event larger than `maxEventBytes`, and no wait of more than
 * `idleTimeoutMs` for the next complete event; optionally, no stream larger than
 * `maxStreamBytes` and no JSON nested deeper than `maxDepth`. Knows the framing of an event
 * (an SSE block ended by a blank line, a 4-byte length-prefixed frame, or a whole body that
 * is one JSON document) but not its content; the decoder that reads the bytes after this
 * guard never holds more than one bounded event.
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

/** `whole`: the whole body is one event (a JSON answer), complete when the body ends. */
export type Framing = "sse" | "length-prefixed" | "whole";

export interface StreamBounds {
  /** Largest event (SSE block or frame, framing included), in bytes; 0 = no limit. */
  maxEventBytes: number;
  /** Longest wait for the next complete event while reading; 0 = no limit. */
  idleTimeoutMs: number;
  /** Largest whole stream, in bytes; 0 or absent = no limit. */
  maxStreamBytes?: number;
  /**
   * Deepest nesting of JSON objects and arrays in one event (in an SSE event's `data` lines,
   * or a whole body), counted on the bytes as they pass; 0 or absent = not checked.
   */
  maxDepth?: number;
  /** Default "sse". */
  framing?: Framing;
  /** The config keys named in errors. Default: each bound's own name. */
  keys?: Partial<Record<Bound, string>>;
}

type Bound = "maxEventBytes" | "idleTimeoutMs" | "maxStreamBytes" | "maxDepth";

/** A stream broke one of its bounds; `message` reads after the agent's name. */
export class StreamBoundError extends Error {
  override readonly name = "StreamBoundError";
  constructor(
    readonly bound: Bound,
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
    bounds.framing === "length-prefixed"
      ? new FrameScanner(bounds)
      : bounds.framing === "whole"
        ? new WholeScanner(bounds)
        : new SseScanner(bounds);
  const maxStream = bounds.maxStreamBytes ?? 0;
  let total = 0;
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
      let result: IteratorResult<Uint8Array> | undefined =
        idle > 0
          ? await withDeadline(iterator.next(), idle - waited, bounds, trickled)
          : await iterator.next();
      waited += performance.now() - started;
      if (result.done) {
        finished = true;
        return;
      }
      total += result.value.length;
      if (maxStream > 0 && total > maxStream) {
        const key = bounds.keys?.maxStreamBytes ?? "maxStreamBytes";
        throw new StreamBoundError(
          "maxStreamBytes",
          maxStream,
          key,
          `streamed more than ${formatBytes(maxStream)} in one answer (${key})`,
        );
      }
      let chunk: Uint8Array | undefined = result.value;
      let completed: boolean;
      try {
        completed = scanner.scan(chunk);
      } catch (err) {
        // The events the chunk completed before the breach are whole: they go on first.
        const whole = scanner.boundary;
        if (whole > 0) yield chunk.subarray(0, whole);
        throw err;
      }
      if (completed) {
        waited = 0;
        trickled = false;
      } else trickled = true;
      // A suspended generator keeps what its variables last held: the chunk (and the buffer
      // behind it) is let go once handed on, not held through the wait for the next one.
      result = undefined;
      yield chunk;
      chunk = undefined;
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
  private readonly depth: JsonDepth | undefined;
  private bytes = 0;
  private atLineStart = true;
  private afterCr = false;
  /** Bytes of the current line matched against "data" so far; -1 once it cannot match. */
  private fieldMatch = 0;
  private hasData = false;

  /** Where in the last chunk scanned its last complete event ended (0: none ended). */
  boundary = 0;
  /** The current line is a `data` field, past its colon: JSON text whose depth counts. */
  private inData = false;

  constructor(private readonly bounds: StreamBounds) {
    this.depth = bounds.maxDepth ? new JsonDepth(bounds) : undefined;
  }

  /** True when the chunk completed at least one event. */
  scan(chunk: Uint8Array): boolean {
    let completed = false;
    let start = 0;
    this.boundary = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === LF || byte === CR) {
        if (byte === LF && this.afterCr) {
          this.afterCr = false;
          continue;
        }
        this.afterCr = byte === CR;
        this.endField();
        this.inData = false;
        // JSON strings hold no raw line ends: a line's end ends any string in it.
        this.depth?.endLine();
        if (this.atLineStart) {
          // A blank line: the event is over; the next one starts after it.
          this.check(this.bytes + i + 1 - start);
          if (this.hasData) completed = true;
          this.hasData = false;
          this.depth?.reset();
          this.bytes = 0;
          start = i + 1;
          this.boundary = start;
        }
        this.atLineStart = true;
        this.fieldMatch = 0;
        continue;
      }
      this.afterCr = false;
      this.atLineStart = false;
      if (this.inData) this.depth?.byte(byte);
      else if (this.fieldMatch >= 0) {
        if (this.fieldMatch < 4 && byte === DATA[this.fieldMatch]) this.fieldMatch++;
        else if (this.fieldMatch === 4 && byte === 0x3a) {
          this.hasData = true;
          this.inData = true;
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

/** A whole body is one event: its size and depth are bounded; it completes when it ends. */
class WholeScanner {
  readonly boundary = 0;
  private bytes = 0;
  private readonly depth: JsonDepth | undefined;

  constructor(private readonly bounds: StreamBounds) {
    this.depth = bounds.maxDepth ? new JsonDepth(bounds) : undefined;
  }

  scan(chunk: Uint8Array): boolean {
    this.bytes += chunk.length;
    const limit = this.bounds.maxEventBytes;
    if (limit > 0 && this.bytes > limit) {
      throw tooLarge(
        this.bounds,
        `sent an answer larger than ${formatBytes(limit)}, the most one event may be`,
      );
    }
    if (this.depth) for (let i = 0; i < chunk.length; i++) this.depth.byte(chunk[i]!);
    return false;
  }
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/**
 * The nesting of JSON text fed a byte at a time (strings skipped): fails as soon as it passes
 * `maxDepth`, before the text is parsed (a deep document costs far more parsed than as text,
 * and code that walks it recurses once per level).
 */
class JsonDepth {
  private depth = 0;
  private inString = false;
  private escaped = false;

  constructor(private readonly bounds: StreamBounds) {}

  byte(byte: number): void {
    if (this.inString) {
      if (this.escaped) this.escaped = false;
      else if (byte === BACKSLASH) this.escaped = true;
      else if (byte === QUOTE) this.inString = false;
    } else if (byte === QUOTE) this.inString = true;
    else if (byte === 0x7b || byte === 0x5b) {
      const max = this.bounds.maxDepth!;
      if (++this.depth > max) {
        const key = this.bounds.keys?.maxDepth ?? "maxDepth";
        throw new StreamBoundError(
          "maxDepth",
          max,
          key,
          `sent an event nested deeper than ${max} levels (${key})`,
        );
      }
    } else if (byte === 0x7d || byte === 0x5d) this.depth--;
  }

  endLine(): void {
    this.inString = false;
    this.escaped = false;
  }

  reset(): void {
    this.endLine();
    this.depth = 0;
  }
}

/** Length-prefixed framing: a 4-byte big-endian length, then that many bytes. */
class FrameScanner {
  /** A frame too large fails its chunk whole (the frames before it are not passed on). */
  readonly boundary = 0;
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
