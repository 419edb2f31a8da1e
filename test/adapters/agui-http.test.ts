import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { RunAgentInput } from "@ag-ui/core";
import { AGUI_MEDIA_TYPE as PROTO_MEDIA_TYPE } from "@ag-ui/proto";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { AguiHttpAdapter } from "../../src/adapters/agui-http.js";
import { AGUI_MEDIA_TYPE } from "../../src/adapters/agui-http-decode.js";
import type { AguiHttpAdapterConfig } from "../../src/adapters/agui-http-options.js";
import type { AdapterRunContext } from "../../src/adapters/types.js";
import { AGUI_PROTOCOL_VERSION, SegmentPipeline } from "../../src/pipeline/index.js";
import { AguiTestServer, type Event, runEvents, send } from "../helpers/agui-server.js";

const logger = pino({ level: "silent" });

function inputOf(extra: Partial<RunAgentInput> = {}): RunAgentInput {
  return {
    threadId: "thread-1",
    runId: "run-1",
    protocolVersion: AGUI_PROTOCOL_VERSION,
    messages: [{ id: "u1", role: "user", content: "Hello" }],
    state: { turns: 0 },
    tools: [],
    context: [],
    forwardedProps: { acp: { config: { tags: ["t1"] } } },
    ...extra,
  };
}

function contextOf(signal = new AbortController().signal): AdapterRunContext {
  return { signal, config: {}, segment: 0, logger };
}

async function collect(
  adapter: AguiHttpAdapter,
  input: RunAgentInput,
  context: AdapterRunContext = contextOf(),
): Promise<Event[]> {
  const events: Event[] = [];
  for await (const event of adapter.run(input, context)) events.push(event as Event);
  return events;
}

/** Runs `adapter` to its end and returns what it threw (fails when it does not throw). */
async function failureOf(adapter: AguiHttpAdapter, input = inputOf()): Promise<Error> {
  try {
    await collect(adapter, input);
  } catch (err) {
    return err as Error;
  }
  throw new Error("the run did not fail");
}

/** The events pass the server's own pipeline: no fault, and a terminal event at the end. */
function checkProtocol(events: Event[], input: RunAgentInput): void {
  const segment = new SegmentPipeline({
    threadId: input.threadId,
    runId: input.runId,
    initialMessages: input.messages,
  });
  for (const event of events) {
    expect(segment.push(event).fault?.message, JSON.stringify(event)).toBeUndefined();
  }
  expect(segment.end().fault?.message).toBeUndefined();
}

const types = (events: Event[]) => events.map((event) => event.type);

describe("agui-http adapter", () => {
  let server: AguiTestServer;
  const adapters: AguiHttpAdapter[] = [];

  function adapterFor(options: Partial<AguiHttpAdapterConfig> = {}): AguiHttpAdapter {
    const adapter = new AguiHttpAdapter({
      type: "agui-http",
      url: server.url,
      headers: {},
      connectTimeoutMs: 5_000,
      idleTimeoutMs: 5_000,
      protocol: "sse",
      ...options,
    });
    adapters.push(adapter);
    return adapter;
  }

  beforeAll(async () => {
    server = await AguiTestServer.start();
  });
  afterAll(async () => {
    await Promise.all(adapters.map((adapter) => adapter.close()));
    await server.close();
  });

  describe("streams", () => {
    it("relays an SSE stream as sent, and posts the input with the configured headers", async () => {
      let sent: Event[] = [];
      server.reply((input) => {
        sent = runEvents(input, { result: { ok: 1 } });
        return { stream: send(...sent) };
      });
      const input = inputOf();
      const adapter = adapterFor({ headers: { Authorization: "Bearer s3cret", "x-tenant": "t1" } });
      const events = await collect(adapter, input);

      expect(events).toEqual(sent);
      checkProtocol(events, input);
      const request = server.last;
      expect(request.method).toBe("POST");
      expect(request.path).toBe("/agent");
      expect(request.input).toEqual(input);
      expect(request.headers.authorization).toBe("Bearer s3cret");
      expect(request.headers["x-tenant"]).toBe("t1");
      expect(request.headers.accept).toBe("text/event-stream");
      expect(request.headers["content-type"]).toBe("application/json");
    });

    it("sends the ACP run config inside forwardedProps.acp.config, as the engine put it", async () => {
      server.reply((input) => ({ stream: send(...runEvents(input)) }));
      await collect(adapterFor(), inputOf());
      expect(server.last.input.forwardedProps).toEqual({ acp: { config: { tags: ["t1"] } } });
    });

    it("parses CRLF and CR line ends, comments, multi-line data and events split across chunks", async () => {
      const input = inputOf();
      const { threadId, runId } = input;
      const started = JSON.stringify({ type: "RUN_STARTED", threadId, runId });
      server.reply({
        stream: [
          { raw: ": a comment the parser must skip\r\n\r\n" },
          { raw: `id: 1\r\nevent: message\r\ndata: ${started}\r\n\r\n` },
          // One event whose JSON spans two data: lines (joined with a newline) and two chunks.
          { raw: 'data: {"type":"TEXT_MESSAGE_START",\r\n' },
          { delayMs: 10 },
          { raw: 'data: "messageId":"m1","role":"assistant"}\r\n\r\n' },
          { raw: ": keep-alive\r\r" },
          { raw: 'data: {"type":"TEXT_MESSAGE_CONTENT","messageId":"m1","delta":"hi"}\r\r' },
          { raw: 'data: {"type":"TEXT_MESSAGE_END","messageId":"m1"}\n\n' },
          { raw: "data:\n\n" },
          // The last event lacks its closing blank line: still delivered.
          { raw: `data: ${JSON.stringify({ type: "RUN_FINISHED", threadId, runId })}\n` },
        ],
      });
      const events = await collect(adapterFor(), input);
      expect(events).toEqual([
        { type: "RUN_STARTED", threadId, runId },
        { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "hi" },
        { type: "TEXT_MESSAGE_END", messageId: "m1" },
        { type: "RUN_FINISHED", threadId, runId },
      ]);
    });

    it("decodes a protobuf stream when configured with protocol: proto", async () => {
      let sent: Event[] = [];
      server.reply((input) => {
        sent = runEvents(input, { text: "binary hello" });
        return { stream: send(...sent) };
      });
      const input = inputOf();
      const adapter = adapterFor({ protocol: "proto" });
      const events = await collect(adapter, input);

      expect(server.last.headers.accept).toBe("application/vnd.ag-ui.event+proto");
      expect(types(events)).toEqual(types(sent));
      expect(events).toMatchObject(sent);
      checkProtocol(events, input);
      expect(adapter.capabilities()).toEqual({ transport: { streaming: true, httpBinary: true } });
    });

    it("decodes protobuf frames split at any byte boundary", async () => {
      const { EventEncoder } = await import("@ag-ui/encoder");
      const encoder = new EventEncoder({ accept: "application/vnd.ag-ui.event+proto" });
      const input = inputOf();
      const sent = runEvents(input);
      const bytes = Buffer.concat(sent.map((event) => encoder.encodeBinary(event as never)));
      // Three bytes at a time: length prefixes and payloads both straddle chunks.
      const stream = [];
      for (let i = 0; i < bytes.length; i += 3) stream.push({ raw: bytes.subarray(i, i + 3) });
      server.reply({ stream });
      const events = await collect(adapterFor({ protocol: "proto" }), input);
      expect(events).toMatchObject(sent);
    });

    it("follows the remote's content type: an SSE answer to a protobuf request still works", async () => {
      let sent: Event[] = [];
      server.reply((input) => {
        sent = runEvents(input);
        return { stream: send(...sent), contentType: "text/event-stream; charset=utf-8" };
      });
      const events = await collect(adapterFor({ protocol: "proto" }), inputOf());
      expect(events).toEqual(sent);
    });

    it("stops reading at the terminal event, even when the remote keeps the connection open", async () => {
      server.reply((input) => ({ stream: [...send(...runEvents(input)), { hang: true }] }));
      const events = await collect(adapterFor(), inputOf());
      expect(events.at(-1)?.type).toBe("RUN_FINISHED");
      await server.last.closed;
    });

    it("ends the run with the remote's RUN_ERROR, not a thrown error", async () => {
      server.reply((input) => ({
        stream: send(
          { type: "RUN_STARTED", threadId: input.threadId, runId: input.runId },
          { type: "RUN_ERROR", message: "model overloaded", code: "RATE_LIMIT" },
        ),
      }));
      const events = await collect(adapterFor(), inputOf());
      expect(events.at(-1)).toEqual({
        type: "RUN_ERROR",
        message: "model overloaded",
        code: "RATE_LIMIT",
      });
    });

    it("declares modest capabilities: streaming over SSE", () => {
      expect(adapterFor().capabilities()).toEqual({ transport: { streaming: true } });
    });
  });

  describe("failures name the agent's URL and the fault", () => {
    it("HTTP 500 before the stream opens: the status and the start of the body", async () => {
      server.reply({ status: 500, body: `internal failure: ${"x".repeat(400)}` });
      const error = await failureOf(adapterFor());
      expect(error.message).toContain(server.url);
      expect(error.message).toMatch(/HTTP 500/);
      expect(error.message).toContain("internal failure: xxx");
      expect(error.message.length).toBeLessThan(400);
    });

    it("HTTP 401: the status and the body", async () => {
      server.reply({ status: 401, body: '{"error":"bad token"}', contentType: "application/json" });
      const error = await failureOf(adapterFor());
      expect(error.message).toContain(server.url);
      expect(error.message).toMatch(/HTTP 401.*bad token/);
    });

    it("a refused connection", async () => {
      const closed = http.createServer();
      closed.listen(0, "127.0.0.1");
      await once(closed, "listening");
      const { port } = closed.address() as AddressInfo;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      const url = `http://127.0.0.1:${port}/agent`;
      const error = await failureOf(adapterFor({ url }));
      expect(error.message).toContain(url);
      expect(error.message).toMatch(/refused the connection \(ECONNREFUSED\)/);
    });

    it("a host name that does not resolve", { timeout: 20_000 }, async () => {
      const url = "http://no-such-agent.invalid/agent";
      const error = await failureOf(adapterFor({ url }));
      expect(error.message).toContain(url);
      expect(error.message).toMatch(/DNS lookup of "no-such-agent.invalid" failed \(E[A-Z_]+\)/);
    });

    it("a wrong content type", async () => {
      server.reply({ status: 200, body: "<html>login</html>", contentType: "text/html" });
      const error = await failureOf(adapterFor());
      expect(error.message).toContain(server.url);
      expect(error.message).toMatch(/content type "text\/html", not text\/event-stream/);
    });

    it("a stream that ends without RUN_FINISHED or RUN_ERROR", async () => {
      server.reply((input) => ({ stream: send(...runEvents(input).slice(0, -1)) }));
      const error = await failureOf(adapterFor());
      expect(error.message).toBe(
        `the AG-UI agent at ${server.url} closed the stream without RUN_FINISHED or RUN_ERROR`,
      );
    });

    it("a protobuf stream that ends mid-frame", async () => {
      const { EventEncoder } = await import("@ag-ui/encoder");
      const encoder = new EventEncoder({ accept: "application/vnd.ag-ui.event+proto" });
      const input = inputOf();
      const [started, , , , , , finished] = runEvents(input);
      const cut = encoder.encodeBinary(finished as never).subarray(0, 6);
      server.reply({ stream: [{ event: started! }, { raw: cut }] });
      const error = await failureOf(adapterFor({ protocol: "proto" }), input);
      expect(error.message).toContain(server.url);
      expect(error.message).toMatch(/without RUN_FINISHED or RUN_ERROR \(6 bytes of an unfinished/);
    });

    it("a connection destroyed mid-stream", async () => {
      server.reply((input) => ({
        stream: [...send(...runEvents(input).slice(0, 2)), { drop: true }],
      }));
      const error = await failureOf(adapterFor());
      expect(error.message).toContain(server.url);
      expect(error.message).toMatch(/broke the connection mid-stream \(other side closed\)/);
    });

    it("malformed JSON in a data: line", async () => {
      server.reply({
        stream: [{ raw: 'data: {"type":"RUN_STARTED","threadId":"thread-1",\n\n' }],
      });
      const error = await failureOf(adapterFor());
      expect(error.message).toContain(server.url);
      expect(error.message).toMatch(
        /malformed JSON in a data: line .*"\{\\"type\\":\\"RUN_STARTED/,
      );
    });

    it("a protobuf frame that does not decode", async () => {
      const garbage = new Uint8Array([0, 0, 0, 3, 0xff, 0xff, 0xff]);
      server.reply({
        stream: [{ raw: garbage }],
        contentType: "application/vnd.ag-ui.event+proto",
      });
      const error = await failureOf(adapterFor({ protocol: "proto" }));
      expect(error.message).toContain(server.url);
      expect(error.message).toMatch(/protobuf frame that does not decode/);
    });

    it("SSE under the protobuf content type, said to be what it looks like", async () => {
      server.reply((input) => ({
        stream: [{ raw: `data: ${JSON.stringify(runEvents(input)[0])}\n\n` }],
        contentType: "application/vnd.ag-ui.event+proto",
      }));
      const error = await failureOf(adapterFor({ protocol: "proto" }));
      expect(error.message).toBe(
        `the AG-UI agent at ${server.url} sent what looks like SSE text ("data: {\\"type\\":\\"RUN_STARTED\\",\\"threadId\\":\\"thread-1\\",\\"runId\\":\\"run-1\\"}"); the upstream's content-type says protobuf (application/vnd.ag-ui.event+proto)`,
      );
      expect(error.message).not.toMatch(/1684108385/);
    });

    it("other text under the protobuf content type, and a frame that is really too large", async () => {
      server.reply({
        stream: [{ raw: "<html>nope</html>" }],
        contentType: "application/vnd.ag-ui.event+proto",
      });
      expect((await failureOf(adapterFor({ protocol: "proto" }))).message).toMatch(
        /sent what looks like text \("<html>nope<\/html>"\), not protobuf frames; the upstream's content-type says protobuf/,
      );
      server.reply({
        stream: [{ raw: new Uint8Array([0x02, 0, 0, 0, 1, 2, 3]) }],
        contentType: "application/vnd.ag-ui.event+proto",
      });
      expect((await failureOf(adapterFor({ protocol: "proto" }))).message).toMatch(
        /sent a protobuf frame of 33554432 bytes, more than the 16777216 allowed/,
      );
    });

    it("the idle timeout: a remote silent for longer than idleTimeoutMs", async () => {
      server.reply((input) => ({
        stream: [...send(...runEvents(input).slice(0, 2)), { delayMs: 2_000 }],
      }));
      const started = Date.now();
      const error = await failureOf(adapterFor({ idleTimeoutMs: 150 }));
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(error.message).toBe(
        `the AG-UI agent at ${server.url} sent nothing for 150 ms (idleTimeoutMs)`,
      );
      await server.last.closed;
      expect(server.last.clientAborted).toBe(true);
    });

    it("the idle timeout counts only silence: a slow but steady stream completes", async () => {
      server.reply((input) => ({
        stream: runEvents(input).flatMap((event) => [{ delayMs: 60 }, { event }]),
      }));
      const events = await collect(adapterFor({ idleTimeoutMs: 200 }), inputOf());
      expect(events.at(-1)?.type).toBe("RUN_FINISHED");
    });

    it("idleTimeoutMs 0 waits as long as it takes", async () => {
      server.reply((input) => ({
        stream: [
          ...send(...runEvents(input).slice(0, 2)),
          { delayMs: 300 },
          ...send(...runEvents(input).slice(2)),
        ],
      }));
      const events = await collect(adapterFor({ idleTimeoutMs: 0 }), inputOf());
      expect(events.at(-1)?.type).toBe("RUN_FINISHED");
    });

    it("the connect timeout: no response headers within connectTimeoutMs", async () => {
      server.reply((input) => ({ stream: send(...runEvents(input)), headersDelayMs: 2_000 }));
      const started = Date.now();
      const error = await failureOf(adapterFor({ connectTimeoutMs: 150 }));
      expect(Date.now() - started).toBeLessThan(1_500);
      expect(error.message).toBe(
        `the AG-UI agent at ${server.url} did not answer within 150 ms (connectTimeoutMs)`,
      );
    });

    it("keeps credentials in the URL out of the message", async () => {
      server.reply({ status: 503, body: "down" });
      const url = server.url.replace("http://", "http://user:pa55@");
      const error = await failureOf(adapterFor({ url }));
      expect(error.message).not.toContain("pa55");
      expect(error.message).toContain(server.url);
      expect(error.message).toMatch(/HTTP 503 before the stream opened: "down"/);
    });
  });

  describe("cancel", () => {
    it("aborting the run's signal mid-stream closes the remote request and ends quietly", async () => {
      server.reply((input) => ({
        stream: [...send(...runEvents(input).slice(0, 2)), { hang: true }],
      }));
      const controller = new AbortController();
      const events: Event[] = [];
      const running = (async () => {
        for await (const event of adapterFor().run(inputOf(), contextOf(controller.signal))) {
          events.push(event as Event);
        }
      })();
      await vi.waitFor(() => expect(events).toHaveLength(2));
      controller.abort(new Error("cancelled by the client"));
      await expect(running).resolves.toBeUndefined();
      await server.last.closed;
      expect(server.last.clientAborted).toBe(true);
    });

    it("aborting while waiting for response headers ends quietly and closes the request", async () => {
      server.reply((input) => ({ stream: send(...runEvents(input)), headersDelayMs: 5_000 }));
      const controller = new AbortController();
      const before = server.requests.length;
      const running = collect(adapterFor(), inputOf(), contextOf(controller.signal));
      await vi.waitFor(() => expect(server.requests.length).toBe(before + 1));
      controller.abort();
      await expect(running).resolves.toEqual([]);
      await server.last.closed;
      expect(server.last.clientAborted).toBe(true);
    });

    it("a consumer that stops iterating closes the remote request", async () => {
      server.reply((input) => ({
        stream: [...send(...runEvents(input).slice(0, 2)), { hang: true }],
      }));
      for await (const event of adapterFor().run(inputOf(), contextOf())) {
        expect((event as Event).type).toBe("RUN_STARTED");
        break;
      }
      await server.last.closed;
      expect(server.last.clientAborted).toBe(true);
    });
  });

  describe("stopUrl", () => {
    const stopUrl = () => `${server.url}/stop/{threadId}?run={runId}`;
    const stopRequests = () => server.requests.filter((r) => r.path.includes("/stop/"));

    it("a cancelled run is stopped upstream too: POST {runId} to the stop URL", async () => {
      const before = stopRequests().length;
      server.reply((input) => ({
        stream: [...send(...runEvents(input).slice(0, 2)), { hang: true }],
      }));
      server.reply({ status: 200, body: "" });
      const controller = new AbortController();
      const events: Event[] = [];
      const adapter = adapterFor({ stopUrl: stopUrl(), headers: { authorization: "Bearer t" } });
      const input = inputOf({ threadId: "thread 1", runId: "run-7" });
      const running = (async () => {
        for await (const event of adapter.run(input, contextOf(controller.signal))) {
          events.push(event as Event);
        }
      })();
      await vi.waitFor(() => expect(events).toHaveLength(2));
      controller.abort(new Error("cancelled by the client"));
      await expect(running).resolves.toBeUndefined();
      const stops = stopRequests().slice(before);
      expect(stops).toHaveLength(1);
      expect(stops[0]!.method).toBe("POST");
      expect(stops[0]!.path).toBe("/agent/stop/thread%201?run=run-7");
      expect(stops[0]!.headers.authorization).toBe("Bearer t");
      expect(stops[0]!.input).toEqual({ runId: "run-7" });
    });

    it("a run that times out is stopped upstream", async () => {
      const before = stopRequests().length;
      server.reply((input) => ({
        stream: [...send(...runEvents(input).slice(0, 1)), { hang: true }],
      }));
      server.reply({ status: 200, body: "" });
      const error = await failureOf(adapterFor({ stopUrl: stopUrl(), idleTimeoutMs: 200 }));
      expect(error.message).toContain("sent nothing for 200 ms");
      expect(stopRequests().slice(before)).toHaveLength(1);
    });

    it("a run the remote finished, or failed itself, is not stopped", async () => {
      const before = stopRequests().length;
      server.reply((input) => ({ stream: send(...runEvents(input)) }));
      await collect(adapterFor({ stopUrl: stopUrl() }), inputOf());
      server.reply({ status: 500, body: "boom" });
      await failureOf(adapterFor({ stopUrl: stopUrl() }));
      expect(stopRequests().slice(before)).toHaveLength(0);
    });

    it("a stop the remote refuses is a warning, and the run still ends quietly", async () => {
      const warnings: string[] = [];
      const warnLogger = pino(
        { level: "warn" },
        { write: (line: string) => warnings.push(JSON.parse(line).msg) },
      );
      server.reply((input) => ({
        stream: [...send(...runEvents(input).slice(0, 2)), { hang: true }],
      }));
      server.reply({ status: 404, body: "no such run" });
      const controller = new AbortController();
      const context = { ...contextOf(controller.signal), logger: warnLogger };
      const events: Event[] = [];
      const running = (async () => {
        for await (const event of adapterFor({ stopUrl: stopUrl() }).run(inputOf(), context)) {
          events.push(event as Event);
        }
      })();
      await vi.waitFor(() => expect(events).toHaveLength(2));
      controller.abort();
      await expect(running).resolves.toBeUndefined();
      expect(warnings).toEqual([
        "agui-http: the remote agent was not told to stop run run-1: answered HTTP 404",
      ]);
    });
  });

  describe("ids", () => {
    it("relays a remote-minted runId and threadId, which the pipeline maps to the run in progress", async () => {
      server.reply((input) => ({
        stream: send(...runEvents(input, { runId: "remote-run-9", threadId: "remote-thread" })),
      }));
      const input = inputOf();
      const events = await collect(adapterFor(), input);
      const scoped = events.filter((event) => event.type.startsWith("RUN_"));
      expect(scoped).toEqual([
        { type: "RUN_STARTED", threadId: "remote-thread", runId: "remote-run-9" },
        { type: "RUN_FINISHED", threadId: "remote-thread", runId: "remote-run-9" },
      ]);
      const segment = new SegmentPipeline({ threadId: input.threadId, runId: input.runId });
      const forwarded = events.flatMap((event) => {
        const pushed = segment.push(event);
        expect(pushed.fault).toBeUndefined();
        return pushed.events as unknown as Event[];
      });
      expect(forwarded.filter((event) => event.type.startsWith("RUN_"))).toEqual([
        { type: "RUN_STARTED", threadId: "thread-1", runId: "run-1" },
        { type: "RUN_FINISHED", threadId: "thread-1", runId: "run-1" },
      ]);
      expect(segment.end().terminal?.kind).toBe("finished");
    });
  });

  describe("protocol versions", () => {
    it("the same version or none: no warning", async () => {
      const warn = vi.spyOn(logger, "warn");
      server.reply((input) => ({ stream: send(...runEvents(input, { protocolVersion: "1.0" })) }));
      await collect(adapterFor(), inputOf());
      server.reply((input) => ({ stream: send(...runEvents(input)) }));
      await collect(adapterFor(), inputOf());
      expect(warn).not.toHaveBeenCalled();
      warn.mockRestore();
    });

    it("a newer minor of the same major: a warning, and the run goes on", async () => {
      const warn = vi.spyOn(logger, "warn");
      let sent: Event[] = [];
      server.reply((input) => {
        sent = runEvents(input, { protocolVersion: "1.1" });
        return { stream: send(...sent) };
      });
      const events = await collect(adapterFor(), inputOf());
      expect(events).toEqual(sent);
      expect(warn).toHaveBeenCalledTimes(1);
      expect(String(warn.mock.calls[0]?.[1])).toMatch(/AG-UI 1\.1, newer than this server's 1\.0/);
      warn.mockRestore();
    });

    it("another major version: the run fails naming both versions", async () => {
      server.reply((input) => ({ stream: send(...runEvents(input, { protocolVersion: "2.0" })) }));
      const error = await failureOf(adapterFor());
      expect(error.message).toBe(
        `the AG-UI agent at ${server.url} speaks AG-UI 2.0, but this server speaks 1.0: major versions differ`,
      );
    });
  });
});

describe("AG-UI protobuf media type", () => {
  // The adapter spells the type out so that @ag-ui/proto loads only for protobuf answers.
  it("is the one @ag-ui/proto serves", () => {
    expect(AGUI_MEDIA_TYPE).toBe(PROTO_MEDIA_TYPE);
  });
});
