import { mkdtempSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { createConnection, createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load.js";
import { agentIdFor } from "../../src/config/registry.js";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { type RunningServer, startServer } from "../../src/server.js";
import { readLikeAgntcy } from "../helpers/agntcy-sse.js";

/**
 * The sample config sends a keep-alive every 15 s, and the promise is that a silent run
 * survives AGNTCY's Python SDK, a WHATWG EventSource parser and a proxy that cuts a connection
 * idle for 30 s. Scaled down here: keep-alives every second, an agent silent for 3 s between
 * words, a proxy that cuts after 2.5 s without a byte from the server.
 */
const KEEP_ALIVE_SECONDS = 1;
const SILENCE_MS = 3_000;
const PROXY_READ_TIMEOUT_MS = 2_500;
/** Python's splitlines() breaks a line here; JSON.stringify leaves it raw. */
const MESSAGE = "hello\u2028there";

const agentId = agentIdFor("slow-echo", "1.0.0");

async function serve(keepAliveSeconds: number): Promise<RunningServer> {
  const dir = mkdtempSync(join(tmpdir(), "acp-keepalive-"));
  const configPath = join(dir, "config.json");
  writeFileSync(
    configPath,
    JSON.stringify({
      agents: [
        {
          name: "slow-echo",
          version: "1.0.0",
          description: "Echoes word by word with a long pause before each word.",
          adapter: { type: "echo", delayMs: SILENCE_MS },
        },
      ],
    }),
  );
  return startServer({
    configPath,
    overrides: [{ port: 0, database: ":memory:", keepAliveSeconds }],
    logger: pino({ level: "silent" }),
    shutdownGraceMs: 0,
  });
}

/** A TCP proxy that drops a connection when the server sends nothing for `readTimeoutMs`. */
function idleProxy(
  target: string,
  readTimeoutMs: number,
): Promise<{ port: number; server: Server }> {
  const { hostname, port } = new URL(target);
  const server = createServer((client: Socket) => {
    const upstream = createConnection({ host: hostname, port: Number(port) });
    upstream.setTimeout(readTimeoutMs, () => {
      upstream.destroy();
      client.destroy();
    });
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  return new Promise((done) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      done({ port: typeof address === "object" && address ? address.port : 0, server });
    }),
  );
}

/** POST /runs/stream through the proxy; resolves with the body chunks as they arrived. */
function streamThrough(port: number): Promise<{ chunks: Buffer[]; raw: string }> {
  const body = JSON.stringify({
    agent_id: agentId,
    input: { messages: [{ role: "user", content: MESSAGE }] },
    stream_mode: ["values", "custom"],
  });
  return new Promise((done, fail) => {
    const req = request(
      { host: "127.0.0.1", port, path: "/runs/stream", method: "POST" },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        const finish = () => done({ chunks, raw: Buffer.concat(chunks).toString("utf8") });
        res.on("end", finish);
        res.on("aborted", finish);
        res.on("error", finish);
      },
    );
    req.setHeader("content-type", "application/json");
    req.setHeader("accept", "text/event-stream");
    req.on("error", fail);
    req.end(body);
  });
}

/** A standard (WHATWG) EventSource parser over the same chunks. */
function readLikeEventSource(chunks: Buffer[]): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  const decoder = new TextDecoder();
  for (const chunk of chunks) parser.feed(decoder.decode(chunk, { stream: true }));
  return events;
}

/** The same bytes cut into small pieces, as a slow network or another client's buffer would. */
function rechunk(chunks: Buffer[], size: number): Buffer[] {
  const all = Buffer.concat(chunks);
  const pieces: Buffer[] = [];
  for (let at = 0; at < all.length; at += size) pieces.push(all.subarray(at, at + size));
  return pieces;
}

describe("keep-alives every ACP client survives", () => {
  let withKeepAlives: RunningServer;
  let without: RunningServer;
  const proxies: Server[] = [];
  let kept: { chunks: Buffer[]; raw: string };
  let unkept: { chunks: Buffer[]; raw: string };

  beforeAll(async () => {
    [withKeepAlives, without] = await Promise.all([serve(KEEP_ALIVE_SECONDS), serve(0)]);
    const [a, b] = await Promise.all([
      idleProxy(withKeepAlives.url, PROXY_READ_TIMEOUT_MS),
      idleProxy(without.url, PROXY_READ_TIMEOUT_MS),
    ]);
    proxies.push(a.server, b.server);
    [kept, unkept] = await Promise.all([streamThrough(a.port), streamThrough(b.port)]);
  }, 30_000);

  afterAll(async () => {
    for (const proxy of proxies) proxy.close();
    await Promise.all([withKeepAlives?.close(), without?.close()]);
  });

  it("sends each keep-alive as a lone comment line, never as a comment block", () => {
    const keepAlives = kept.raw.match(/^: keep-alive$/gm) ?? [];
    expect(keepAlives.length).toBeGreaterThanOrEqual(2);
    // Each one is followed by another keep-alive or by the next frame's first line.
    expect(kept.raw).not.toMatch(/^: keep-alive\n(?!: keep-alive\n|id: \d+\n)/m);
    expect(kept.raw).not.toContain(": keep-alive\n\n");
  });

  it("a run silent for longer than the interval reaches its final frame through agntcy-acp's reader", () => {
    for (const chunks of [kept.chunks, rechunk(kept.chunks, 5)]) {
      const events = readLikeAgntcy(chunks);
      expect(events.map((e) => e.id)).toEqual(events.map((_, i) => String(i + 1)));
      expect(events.every((e) => e.event === "agent_event")).toBe(true);
      const final = events.at(-1)!.data;
      expect(final).toMatchObject({
        type: "values",
        status: "success",
        output: { type: "result" },
      });
      // A result's messages are the frame's own (its output does not repeat them).
      const messages = final.messages as Array<{ content: string }>;
      expect(messages.map((m) => m.content)).toEqual([MESSAGE, MESSAGE]);
    }
  });

  it("the same stream reaches its final frame through a WHATWG EventSource parser, frame for frame", () => {
    const standard = readLikeEventSource(kept.chunks);
    const agntcy = readLikeAgntcy(kept.chunks);
    expect(standard.map((e) => [e.id, e.event, JSON.parse(e.data)])).toEqual(
      agntcy.map((e) => [e.id, e.event, e.data]),
    );
    expect(JSON.parse(standard.at(-1)!.data)).toMatchObject({ status: "success" });
  });

  it("an idle proxy cuts the stream without keep-alives but not the one with them", () => {
    const cut = readLikeEventSource(unkept.chunks);
    expect(cut.length).toBeGreaterThan(0);
    expect(JSON.parse(cut.at(-1)!.data)).toMatchObject({ status: "pending" });
    expect(JSON.parse(readLikeEventSource(kept.chunks).at(-1)!.data)).toMatchObject({
      status: "success",
    });
  });

  it("line breaks Python splits on travel escaped, so the JSON line stays whole", () => {
    expect(kept.raw).not.toMatch(/[\u0085\u2028\u2029]/);
    expect(kept.raw).toContain("hello\\u2028there");
  });

  it("the forms we do not send would end agntcy-acp's stream (the reader above is no pushover)", () => {
    const asBlocks = Buffer.from(kept.raw.replaceAll(": keep-alive\n", ": keep-alive\n\n"));
    expect(() => readLikeAgntcy([asBlocks])).toThrow(
      /No match found when deserializing the JSON string into StreamEventPayload/,
    );
    const rawBreak = Buffer.from(kept.raw.replaceAll("\\u2028", "\u2028"));
    expect(() => readLikeAgntcy([rawBreak])).toThrow(/No match found/);
    // The standard parser takes both in its stride: the difference is the SDK's rule.
    expect(JSON.parse(readLikeEventSource([asBlocks]).at(-1)!.data)).toMatchObject({
      status: "success",
    });
  });

  it("the sample config and the default send keep-alives well inside a 30 s proxy read timeout", async () => {
    const sample = await loadConfig(resolve(import.meta.dirname, "../../config/sample.yaml"));
    for (const seconds of [sample.server.keepAliveSeconds, DEFAULT_SETTINGS.keepAliveSeconds]) {
      // At most half the timeout: a keep-alive lands in every 30 s window even when late.
      expect(seconds).toBeGreaterThan(0);
      expect(seconds).toBeLessThanOrEqual(15);
    }
  });
});
