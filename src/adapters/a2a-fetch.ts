/**
 * The `fetch` the A2A client is given: every request it makes (the card, sends, streams, polls,
 * cancels) goes through here, so the configured headers reach every one, the wait for an
 * answer's headers is bounded, and every answer's body passes through `boundedBody`.
 */

/** What an answer's body may do before the run fails. */
export interface BodyLimits {
  /** Largest JSON answer, or single SSE event. */
  maxEventBytes: number;
  /** Largest total of a streamed (SSE) answer. */
  maxStreamBytes: number;
  /** Longest silence between chunks; 0 = no limit. */
  idleTimeoutMs: number;
}

/** The upstream broke a bound: its message names which one and the option that sets it. */
export class UpstreamLimitError extends Error {
  override readonly name = "UpstreamLimitError";
}

export interface BoundedFetchOptions extends BodyLimits {
  /** Sent with every request unless the client set the same header itself. */
  headers: Record<string, string>;
  /** Longest wait for an answer's status and headers; 0 = no limit. */
  connectTimeoutMs: number;
}

export function boundedFetch(options: BoundedFetchOptions): typeof fetch {
  return async (resource, init = {}) => {
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(options.headers)) {
      if (!headers.has(name)) headers.set(name, value);
    }
    const signals = init.signal ? [init.signal] : [];
    const timeout = new AbortController();
    const timer =
      options.connectTimeoutMs > 0
        ? setTimeout(
            () =>
              timeout.abort(
                new UpstreamLimitError(
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
 * The one place an upstream A2A answer's body is read from the network: a copy of `response`
 * whose body fails with an `UpstreamLimitError` when it grows past the limits (per JSON answer
 * or SSE event, and per streamed answer in total) or falls silent for longer than allowed.
 */
export function boundedBody(response: Response, limits: BodyLimits): Response {
  const source = response.body;
  if (!source) return response;
  const sse = (response.headers.get("content-type") ?? "").includes("text/event-stream");
  const reader = source.getReader();
  const events = new EventSizer();
  let total = 0;
  /** A fault found after the complete events before it were passed on: reported next. */
  let pending: string | undefined;

  const fail = (controller: ReadableStreamDefaultController<Uint8Array>, message: string) => {
    controller.error(new UpstreamLimitError(message));
    reader.cancel().catch(() => {});
  };

  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (pending !== undefined) return fail(controller, pending);
      let timer: NodeJS.Timeout | undefined;
      const silence =
        limits.idleTimeoutMs > 0
          ? new Promise<"idle">((resolve) => {
              timer = setTimeout(() => resolve("idle"), limits.idleTimeoutMs);
            })
          : undefined;
      let read: Awaited<ReturnType<typeof reader.read>> | "idle";
      try {
        read = await (silence ? Promise.race([reader.read(), silence]) : reader.read());
      } catch (err) {
        controller.error(err);
        return;
      } finally {
        clearTimeout(timer);
      }
      if (read === "idle") {
        return fail(controller, `sent nothing for ${limits.idleTimeoutMs} ms (idleTimeoutMs)`);
      }
      if (read.done) return controller.close();
      const chunk = read.value;
      total += chunk.byteLength;
      if (sse) {
        if (total > limits.maxStreamBytes) {
          return fail(
            controller,
            `streamed more than ${limits.maxStreamBytes} bytes in one answer (maxStreamBytes)`,
          );
        }
        const complete = events.push(chunk, limits.maxEventBytes);
        if (complete >= 0) {
          const fault = `sent an event larger than ${limits.maxEventBytes} bytes (maxEventBytes)`;
          if (complete === 0) return fail(controller, fault);
          // The events before the oversized one are whole: they go on, the fault after them.
          pending = fault;
          controller.enqueue(chunk.subarray(0, complete));
          return;
        }
      } else if (total > limits.maxEventBytes) {
        return fail(
          controller,
          `sent an answer larger than ${limits.maxEventBytes} bytes (maxEventBytes)`,
        );
      }
      controller.enqueue(chunk);
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** The size of the SSE event in progress: bytes since the last blank line (LF or CRLF). */
class EventSizer {
  private since = 0;
  /** The previous byte that was not CR ended a line. */
  private atLineStart = false;

  /**
   * Feeds a chunk. Returns -1 while every event fits in `limit`, else the length of the
   * chunk's prefix that ends the last complete event before the one that does not fit.
   */
  push(chunk: Uint8Array, limit: number): number {
    let complete = 0;
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!;
      if (byte === 13) continue;
      if (byte === 10) {
        if (this.atLineStart) {
          this.since = 0;
          this.atLineStart = false;
          complete = i + 1;
          continue;
        }
        this.atLineStart = true;
      } else this.atLineStart = false;
      if (++this.since > limit) return complete;
    }
    return -1;
  }
}
