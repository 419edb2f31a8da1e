import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import {
  boundedEvents,
  boundedFetch,
  StreamBoundError,
  type StreamBounds,
} from "../../src/adapters/stream-bounds.js";

const bytes = (text: string) => new TextEncoder().encode(text);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A source that yields each step's bytes, or waits; records whether it was closed. */
function source(steps: Array<string | Uint8Array | number>) {
  const state = { closed: false, yielded: 0 };
  async function* generate() {
    try {
      for (const step of steps) {
        if (typeof step === "number") await sleep(step);
        else {
          state.yielded++;
          yield typeof step === "string" ? bytes(step) : step;
        }
      }
    } finally {
      state.closed = true;
    }
  }
  return { iterable: generate(), state };
}

async function drain(iterable: AsyncIterable<Uint8Array>): Promise<string> {
  let text = "";
  for await (const chunk of iterable) text += new TextDecoder().decode(chunk);
  return text;
}

async function failure(iterable: AsyncIterable<Uint8Array>): Promise<StreamBoundError> {
  try {
    await drain(iterable);
  } catch (err) {
    expect(err).toBeInstanceOf(StreamBoundError);
    return err as StreamBoundError;
  }
  throw new Error("the stream did not fail");
}

const sse = (bounds: Partial<StreamBounds>): StreamBounds => ({
  maxEventBytes: 0,
  idleTimeoutMs: 0,
  ...bounds,
});

describe("boundedEvents", () => {
  it("passes a well-behaved stream through unchanged, whatever its line ends", async () => {
    const text = 'data: {"a":1}\n\ndata: {"b":2}\r\n\r\n: comment\rdata: x\r\r';
    const { iterable } = source([text.slice(0, 7), text.slice(7)]);
    expect(await drain(boundedEvents(iterable, sse({ maxEventBytes: 20 })))).toBe(text);
  });

  it("fails an event larger than the limit before its end arrives, and closes the source", async () => {
    const { iterable, state } = source(["data: ", "x".repeat(600), "x".repeat(600), "\n\n"]);
    const error = await failure(
      boundedEvents(iterable, {
        ...sse({ maxEventBytes: 1024 }),
        keys: { maxEventBytes: "server.limits.maxEventBytes" },
      }),
    );
    expect(error.bound).toBe("maxEventBytes");
    expect(error.limit).toBe(1024);
    expect(error.configKey).toBe("server.limits.maxEventBytes");
    expect(error.message).toBe(
      "sent an SSE event larger than 1 KiB, the most one event may be (server.limits.maxEventBytes)",
    );
    // The third chunk passes the limit; the end of the event is never read.
    expect(state.yielded).toBe(3);
    expect(state.closed).toBe(true);
  });

  it("counts each event on its own: many small events in one chunk pass", async () => {
    const many = "data: 0123456789\n\n".repeat(100);
    const { iterable } = source([many]);
    expect(await drain(boundedEvents(iterable, sse({ maxEventBytes: 64 })))).toBe(many);
  });

  it("a large event inside one chunk, among small ones, fails", async () => {
    const { iterable } = source([`data: a\n\ndata: ${"x".repeat(200)}\n\ndata: b\n\n`]);
    expect((await failure(boundedEvents(iterable, sse({ maxEventBytes: 64 })))).bound).toBe(
      "maxEventBytes",
    );
  });

  it("idle is the time since the last complete event: a trickle that completes none fails", async () => {
    const trickle = ["data: {}\n\n", ...Array.from({ length: 40 }, () => [20, "x"]).flat()];
    const { iterable, state } = source(trickle as Array<string | number>);
    const error = await failure(boundedEvents(iterable, sse({ idleTimeoutMs: 200 })));
    expect(error.bound).toBe("idleTimeoutMs");
    expect(error.message).toBe("sent no complete event for 200 ms (idleTimeoutMs)");
    expect(state.yielded).toBeLessThan(40);
  });

  it("keep-alive comments are not events; silence is said to be nothing", async () => {
    const comments = source(Array.from({ length: 40 }, () => [20, ": ping\n\n"]).flat());
    const error = await failure(boundedEvents(comments.iterable, sse({ idleTimeoutMs: 200 })));
    expect(error.message).toBe("sent no complete event for 200 ms (idleTimeoutMs)");
    const silent = source(["data: 1\n\n", 1000]);
    expect(
      (await failure(boundedEvents(silent.iterable, sse({ idleTimeoutMs: 100 })))).message,
    ).toBe("sent nothing for 100 ms (idleTimeoutMs)");
  });

  it("steady events, each within the idle time, complete however long the stream", async () => {
    const steady = Array.from({ length: 8 }, (_, i) => [60, `data: ${i}\n\n`]).flat();
    const { iterable } = source(steady as Array<string | number>);
    const text = await drain(boundedEvents(iterable, sse({ idleTimeoutMs: 200 })));
    expect(text).toContain("data: 7");
  });

  it("time the consumer spends between chunks is not the source's silence", async () => {
    const { iterable } = source(["data: 1\n\n", "data: 2\n\n"]);
    const seen: string[] = [];
    for await (const chunk of boundedEvents(iterable, sse({ idleTimeoutMs: 50 }))) {
      seen.push(new TextDecoder().decode(chunk));
      await sleep(150);
    }
    expect(seen).toEqual(["data: 1\n\n", "data: 2\n\n"]);
  });

  it("length-prefixed frames: a length beyond the limit fails at the prefix, with the frame's head", async () => {
    const frame = new Uint8Array([0, 0, 0x10, 0, 1, 2, 3]);
    const { iterable } = source([frame]);
    const error = await failure(
      boundedEvents(iterable, {
        maxEventBytes: 1024,
        idleTimeoutMs: 0,
        framing: "length-prefixed",
      }),
    );
    expect(error.message).toBe(
      "sent a frame of 4096 bytes, more than the 1 KiB one event may be (maxEventBytes)",
    );
    expect([...error.head!]).toEqual([...frame]);
  });

  it("length-prefixed frames split across chunks complete events for the idle clock", async () => {
    const a = new Uint8Array([0, 0, 0, 3, 1]);
    const b = new Uint8Array([2, 3, 0, 0]);
    const c = new Uint8Array([0, 1, 9]);
    const { iterable } = source([a, 80, b, 80, c]);
    const out = boundedEvents(iterable, {
      maxEventBytes: 16,
      idleTimeoutMs: 120,
      framing: "length-prefixed",
    });
    let total = 0;
    for await (const chunk of out) total += chunk.length;
    expect(total).toBe(12);
  });
});

describe("boundedEvents: whole answers, depth and stream totals", () => {
  it("the events a chunk completed before an oversized one go on first", async () => {
    const { iterable } = source([`data: a\n\ndata: b\n\ndata: ${"x".repeat(200)}`]);
    const passed: string[] = [];
    let error: unknown;
    try {
      for await (const chunk of boundedEvents(iterable, sse({ maxEventBytes: 64 }))) {
        passed.push(new TextDecoder().decode(chunk));
      }
    } catch (err) {
      error = err;
    }
    expect(passed).toEqual(["data: a\n\ndata: b\n\n"]);
    expect((error as StreamBoundError).bound).toBe("maxEventBytes");
  });

  it("framing whole: the body is one event, bounded in size and completed only at its end", async () => {
    const fits = source(['{"a":', "1}"]);
    expect(
      await drain(
        boundedEvents(fits.iterable, { ...sse({ maxEventBytes: 16 }), framing: "whole" }),
      ),
    ).toBe('{"a":1}');
    const big = source(["{", "x".repeat(20)]);
    const error = await failure(
      boundedEvents(big.iterable, {
        ...sse({ maxEventBytes: 16 }),
        framing: "whole",
        keys: { maxEventBytes: "limits.maxEventBytes" },
      }),
    );
    expect(error.message).toBe(
      "sent an answer larger than 16 bytes, the most one event may be (limits.maxEventBytes)",
    );
    expect(big.state.closed).toBe(true);
    // Bytes that keep coming do not complete the answer: it must end within the idle time.
    const trickle = source(["{", ...Array.from({ length: 40 }, () => [20, " "]).flat()]);
    const idle = await failure(
      boundedEvents(trickle.iterable, { ...sse({ idleTimeoutMs: 200 }), framing: "whole" }),
    );
    expect(idle.message).toBe("sent no complete event for 200 ms (idleTimeoutMs)");
  });

  it("maxDepth: JSON nested too deep fails on its text; brackets in strings and other fields do not count", async () => {
    const shallow = `: [[[[[[\nevent: [[[[[[\ndata: {"a":"[[[[[[[[\\"[[[[","b":[1]}\n\n`;
    expect(await drain(boundedEvents(source([shallow]).iterable, sse({ maxDepth: 2 })))).toBe(
      shallow,
    );
    // Each event counts on its own, across its data lines and the chunks that carry it.
    const deep = source(["data: [[\n", "data: [[]]]]\n\n"]);
    const error = await failure(
      boundedEvents(deep.iterable, { ...sse({ maxDepth: 3 }), keys: { maxDepth: "k.depth" } }),
    );
    expect(error.bound).toBe("maxDepth");
    expect(error.message).toBe("sent an event nested deeper than 3 levels (k.depth)");
    const whole = source(['{"a":{"b":{"c":{}}}}']);
    expect(
      (await failure(boundedEvents(whole.iterable, { ...sse({ maxDepth: 3 }), framing: "whole" })))
        .bound,
    ).toBe("maxDepth");
  });

  it("maxStreamBytes: a stream of small events fails once its total passes the limit", async () => {
    const { iterable, state } = source(Array.from({ length: 10 }, () => "data: 0123456789\n\n"));
    const error = await failure(boundedEvents(iterable, sse({ maxStreamBytes: 100 })));
    expect(error.bound).toBe("maxStreamBytes");
    expect(error.message).toBe("streamed more than 100 bytes in one answer (maxStreamBytes)");
    expect(state.yielded).toBe(6);
    expect(state.closed).toBe(true);
  });
});

describe("boundedFetch", () => {
  it("bounds a text/event-stream response read through fetch, and leaves others alone", async () => {
    const server = http.createServer((req, res) => {
      if (req.url === "/json") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ big: "x".repeat(4096) }));
        return;
      }
      res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8" });
      res.write("data: ok\n\n");
      res.write(`data: ${"x".repeat(4096)}`);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    try {
      const bounded = boundedFetch({ maxEventBytes: 1024, idleTimeoutMs: 2000 });
      const json = await bounded(`http://127.0.0.1:${port}/json`);
      expect(((await json.json()) as { big: string }).big).toHaveLength(4096);
      const stream = await bounded(`http://127.0.0.1:${port}/sse`);
      expect(stream.status).toBe(200);
      const error = await stream.text().catch((err: unknown) => err);
      expect(error).toBeInstanceOf(StreamBoundError);
      expect((error as StreamBoundError).bound).toBe("maxEventBytes");
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});
