import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { RunAgentInput } from "@ag-ui/core";
import pino from "pino";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { createStorage } from "../../src/storage/index.js";
import { tracing } from "../../src/telemetry/index.js";
import { loggerOptions } from "../../src/util/logging.js";
import { startA2aAgent } from "../helpers/a2a-agents.js";
import { AguiTestServer, type Event, send } from "../helpers/agui-server.js";
import { build, type TestApp } from "../helpers/app.js";
import { OtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.js";

type Json = Record<string, unknown>;

const CLIENT_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN = "00f067aa0ba902b7";
const RESUME_TRACE = "5bf92f3577b34da6a3ce929d0e0e4737";
const traceparent = (traceId: string, spanId: string) => `00-${traceId}-${spanId}-01`;
/** Written into the prompt, the tool's arguments and result, and the answer: never exported. */
const SECRET = "hunter2-user-data";
const agentId = agentIdFor("remote", "1.0.0");

const INTERRUPT = { id: "approve-1", reason: "approval", message: "Send it?" };

/** The first segment: a tool call with its result, token usage, then an interrupt. */
const toolThenInterrupt = (input: RunAgentInput): Event[] => [
  { type: "RUN_STARTED", threadId: input.threadId, runId: input.runId },
  { type: "TOOL_CALL_START", toolCallId: "call-1", toolCallName: "lookup" },
  { type: "TOOL_CALL_ARGS", toolCallId: "call-1", delta: `{"q":"${SECRET}"}` },
  { type: "TOOL_CALL_END", toolCallId: "call-1" },
  { type: "TOOL_CALL_RESULT", messageId: "tool-msg-1", toolCallId: "call-1", content: SECRET },
  {
    type: "RUN_FINISHED",
    threadId: input.threadId,
    runId: input.runId,
    outcome: { type: "interrupt", interrupts: [INTERRUPT] },
    usage: [{ model: "remote-model", inputTokens: 12, outputTokens: 7 }],
  },
];

/** The resumed segment: an answer. */
const answer = (input: RunAgentInput): Event[] => [
  { type: "RUN_STARTED", threadId: input.threadId, runId: input.runId },
  { type: "TEXT_MESSAGE_START", messageId: "answer-1", role: "assistant" },
  { type: "TEXT_MESSAGE_CONTENT", messageId: "answer-1", delta: `sent ${SECRET}` },
  { type: "TEXT_MESSAGE_END", messageId: "answer-1" },
  { type: "RUN_FINISHED", threadId: input.threadId, runId: input.runId },
];

const yaml = (url: string) => `
agents:
  - name: remote
    version: 1.0.0
    description: A remote AG-UI agent over HTTP.
    adapter: { type: agui-http, url: "${url}", idleTimeoutMs: 5000 }
`;

const OTEL_ENV = [
  "OTEL_EXPORTER_OTLP_ENDPOINT",
  "OTEL_EXPORTER_OTLP_PROTOCOL",
  "OTEL_BSP_SCHEDULE_DELAY",
  "OTEL_SERVICE_NAME",
] as const;

describe("tracing with OpenTelemetry, exported over OTLP to a real receiver", () => {
  let receiver: OtlpReceiver;
  let remote: AguiTestServer;
  let t: TestApp | undefined;
  const logLines: Json[] = [];

  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    remote = await AguiTestServer.start();
  });
  afterEach(async () => {
    await t?.close();
    t = undefined;
    for (const name of OTEL_ENV) delete process.env[name];
  });
  afterAll(async () => {
    await receiver.close();
    await remote.close();
  });

  async function start(protocol: string, captureContent = false): Promise<TestApp> {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = protocol;
    process.env.OTEL_BSP_SCHEDULE_DELAY = "50";
    process.env.OTEL_SERVICE_NAME = "acp-agui-under-test";
    const sink = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n")) if (line) logLines.push(JSON.parse(line));
        done();
      },
    });
    t = await build({
      yaml: yaml(remote.url),
      settings: { telemetry: { ...DEFAULT_SETTINGS.telemetry, captureContent } },
      logger: pino(loggerOptions("debug"), sink),
    });
    return t;
  }

  async function post(app: TestApp, url: string, body: unknown, headers?: Record<string, string>) {
    const res = await app.call("POST", url, body, headers);
    expect(res.status, `POST ${url}: ${res.raw}`).toBe(200);
    return res.body as Json;
  }

  /** One ACP run on a thread: a tool call and an interrupt, then a resume from another trace. */
  async function runWithToolInterruptAndResume(app: TestApp) {
    remote.reply((input) => ({ stream: send(...toolThenInterrupt(input)) }));
    remote.reply((input) => ({ stream: send(...answer(input)) }));
    const thread = await post(app, "/threads", {});
    const threadId = thread.thread_id as string;
    const waited = await post(
      app,
      `/threads/${threadId}/runs/wait`,
      { agent_id: agentId, input: { messages: [{ role: "user", content: `find ${SECRET}` }] } },
      { traceparent: traceparent(CLIENT_TRACE, CLIENT_SPAN), tracestate: "vendor=kept" },
    );
    const run = waited.run as Json;
    expect(run.status).toBe("interrupted");
    const runId = run.run_id as string;
    await post(
      app,
      `/threads/${threadId}/runs/${runId}`,
      { resume: [{ interruptId: INTERRUPT.id, status: "resolved", payload: { ok: true } }] },
      { traceparent: traceparent(RESUME_TRACE, "10f067aa0ba902b7") },
    );
    const done = await app.call("GET", `/threads/${threadId}/runs/${runId}/wait`);
    expect((done.body as Json).run).toMatchObject({ status: "success" });
    return { threadId, runId };
  }

  const isSegment = (runId: string, segment: number) => (span: ReceivedSpan) =>
    span.attributes["gen_ai.operation.name"] === "invoke_agent" &&
    span.attributes["acp.run.id"] === runId &&
    span.attributes["acp.run.segment"] === segment;

  it("follows a run with a tool call, an interrupt and a resume as one trace, into the remote agent", async () => {
    const app = await start("http/json");
    expect(tracing()).toBeDefined();
    const { threadId, runId } = await runWithToolInterruptAndResume(app);

    const first = await receiver.waitFor(isSegment(runId, 0));
    const second = await receiver.waitFor(isSegment(runId, 1));
    const tool = await receiver.waitFor((s) => s.attributes["gen_ai.tool.call.id"] === "call-1");
    const request = await receiver.waitFor(
      (s) => s.traceId === CLIENT_TRACE && s.parentSpanId === CLIENT_SPAN,
    );

    // The request's span continues the client's trace; both segments stay in it, the resumed
    // one too although its request came with another trace (linked, not adopted).
    expect(request.name).toBe("POST /threads/:thread_id/runs/wait");
    expect(request.kind).toBe(2);
    for (const segment of [first, second]) {
      expect(segment.traceId).toBe(CLIENT_TRACE);
      expect(segment.name).toBe("invoke_agent remote");
      expect(segment.attributes).toMatchObject({
        "gen_ai.agent.name": "remote",
        "gen_ai.agent.id": agentId,
        "gen_ai.conversation.id": threadId,
        "acp.run.id": runId,
      });
      expect(segment.resource["service.name"]).toBe("acp-agui-under-test");
    }
    expect(ancestors(first).map((s) => s.spanId)).toContain(request.spanId);
    expect(ancestors(second).map((s) => s.spanId)).toContain(request.spanId);
    expect(first.attributes).toMatchObject({
      "acp.run.status": "interrupted",
      "gen_ai.usage.input_tokens": 12,
      "gen_ai.usage.output_tokens": 7,
      "gen_ai.response.model": "remote-model",
    });
    expect(second.attributes["acp.run.status"]).toBe("success");
    expect(second.links.map((l) => l.traceId)).toContain(RESUME_TRACE);

    expect(tool).toMatchObject({
      name: "execute_tool lookup",
      traceId: CLIENT_TRACE,
      parentSpanId: first.spanId,
    });
    expect(tool.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "lookup",
      "gen_ai.tool.type": "function",
    });

    // The remote agent received the context of the segment calling it: its spans join the trace.
    const [call1, call2] = remote.requests.slice(-2);
    expect(call1!.headers.traceparent).toBe(traceparent(CLIENT_TRACE, first.spanId));
    expect(call2!.headers.traceparent).toBe(traceparent(CLIENT_TRACE, second.spanId));
    expect(call1!.headers.tracestate).toBe("vendor=kept");

    // No message content left the server: not the prompt, the tool's data or the answer.
    const exported = JSON.stringify(receiver.spans);
    expect(exported).not.toContain(SECRET);
    expect(first.attributes["gen_ai.input.messages"]).toBeUndefined();

    // A log line of the run leads to its trace.
    const traced = logLines.filter((line) => line.trace_id === CLIENT_TRACE);
    expect(traced.length).toBeGreaterThan(0);
    expect(traced.every((line) => typeof line.span_id === "string")).toBe(true);
  });

  it("exports messages, tool arguments and results only with captureContent", async () => {
    const app = await start("http/json", true);
    const { runId } = await runWithToolInterruptAndResume(app);
    const first = await receiver.waitFor(isSegment(runId, 0));
    const second = await receiver.waitFor(isSegment(runId, 1));
    const tool = await receiver.waitFor(
      (s) => s.attributes["gen_ai.tool.call.id"] === "call-1" && s.parentSpanId === first.spanId,
    );
    expect(JSON.parse(first.attributes["gen_ai.input.messages"] as string)).toContainEqual({
      role: "user",
      parts: [{ type: "text", content: `find ${SECRET}` }],
    });
    expect(tool.attributes["gen_ai.tool.call.arguments"]).toBe(`{"q":"${SECRET}"}`);
    expect(tool.attributes["gen_ai.tool.call.result"]).toBe(SECRET);
    expect(JSON.parse(second.attributes["gen_ai.output.messages"] as string)).toEqual([
      { role: "assistant", parts: [{ type: "text", content: `sent ${SECRET}` }] },
    ]);
  });

  it("keeps a run resumed after a restart in its trace: the context is stored with the run", async () => {
    const dir = mkdtempSync(join(tmpdir(), "acp-agui-tracing-"));
    const storageOf = () => createStorage(join(dir, "data.db"));
    const traceId = "abf92f3577b34da6a3ce929d0e0e473c";
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = "http/json";
    process.env.OTEL_BSP_SCHEDULE_DELAY = "50";
    const firstStorage = storageOf();
    const before = await build({ yaml: yaml(remote.url), storage: firstStorage });
    remote.reply((input) => ({ stream: send(...toolThenInterrupt(input)) }));
    const threadId = (await post(before, "/threads", {})).thread_id as string;
    const waited = await post(
      before,
      `/threads/${threadId}/runs/wait`,
      { agent_id: agentId, input: { messages: [] } },
      { traceparent: traceparent(traceId, CLIENT_SPAN) },
    );
    const runId = (waited.run as Json).run_id as string;
    await before.close();
    await firstStorage.close();

    // Another server process on the same database: no memory of the first one's spans.
    const secondStorage = storageOf();
    t = await build({ yaml: yaml(remote.url), storage: secondStorage });
    remote.reply((input) => ({ stream: send(...answer(input)) }));
    await post(t, `/threads/${threadId}/runs/${runId}`, {
      resume: [{ interruptId: INTERRUPT.id, status: "resolved", payload: {} }],
    });
    const done = await t.call("GET", `/threads/${threadId}/runs/${runId}/wait`);
    expect((done.body as Json).run).toMatchObject({ status: "success" });
    const first = await receiver.waitFor(isSegment(runId, 0));
    const second = await receiver.waitFor(isSegment(runId, 1));
    expect(first.traceId).toBe(traceId);
    expect(second.traceId).toBe(traceId);
    expect(second.parentSpanId).toBe(first.parentSpanId);
    expect(remote.last.headers.traceparent).toBe(traceparent(traceId, second.spanId));
    await t.close();
    t = undefined;
    await secondStorage.close();
  });

  it("traces runs of the AG-UI face and the CopilotKit routes, streamed responses included", async () => {
    const app = await start("http/json");
    const faces = [
      {
        url: "/ag-ui/remote",
        route: "POST /ag-ui/:agent_name",
        traceId: "7bf92f3577b34da6a3ce929d0e0e4739",
      },
      {
        url: "/copilotkit/agent/remote/run",
        route: "POST /copilotkit/agent/:agent/run",
        traceId: "8bf92f3577b34da6a3ce929d0e0e473a",
      },
    ];
    for (const face of faces) {
      remote.reply((input) => ({ stream: send(...answer(input)) }));
      const threadId = `face-${face.traceId.slice(0, 6)}`;
      const res = await app.app.inject({
        method: "POST",
        url: face.url,
        headers: {
          traceparent: traceparent(face.traceId, CLIENT_SPAN),
          accept: "text/event-stream",
        },
        payload: {
          threadId,
          runId: `r-${threadId}`,
          messages: [{ id: "u1", role: "user", content: "hi" }],
          tools: [],
          context: [],
          state: {},
          forwardedProps: {},
        },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.body).toContain("RUN_FINISHED");
      // The streamed (hijacked) response's span ends with the stream and arrives too.
      const request = await receiver.waitFor(
        (s) => s.traceId === face.traceId && s.parentSpanId === CLIENT_SPAN,
      );
      expect(request.name).toBe(face.route);
      const segment = await receiver.waitFor(
        (s) =>
          s.traceId === face.traceId && s.attributes["gen_ai.operation.name"] === "invoke_agent",
      );
      expect(segment.attributes).toMatchObject({
        "gen_ai.agent.name": "remote",
        "acp.run.status": "success",
      });
      expect(ancestors(segment).map((s) => s.spanId)).toContain(request.spanId);
      expect(remote.last.headers.traceparent).toBe(traceparent(face.traceId, segment.spanId));
    }
  });

  it("exports over OTLP/HTTP protobuf too", async () => {
    const app = await start("http/protobuf");
    const before = receiver.bodies.length;
    remote.reply((input) => ({ stream: send(...answer(input)) }));
    const traceId = "6bf92f3577b34da6a3ce929d0e0e4738";
    await post(
      app,
      "/runs/wait",
      { agent_id: agentId, input: { messages: [{ role: "user", content: "hi" }] } },
      { traceparent: traceparent(traceId, CLIENT_SPAN) },
    );
    expect(remote.last.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    // Protobuf carries ids as raw bytes: the trace's id is in what arrived.
    const id = Buffer.from(traceId, "hex");
    for (let i = 0; i < 150; i++) {
      const sent = receiver.bodies.slice(before);
      if (sent.some((b) => b.body.includes(id))) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const sent = receiver.bodies.slice(before);
    expect(sent.map((b) => b.contentType)).toContain("application/x-protobuf");
    expect(sent.every((b) => b.path === "/v1/traces")).toBe(true);
    expect(sent.some((b) => b.body.includes(id))).toBe(true);
  });

  it("sends a run's webhook with the run's trace context", async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = "http/json";
    t = await build({
      yaml: yaml(remote.url),
      settings: { webhooks: { ...DEFAULT_SETTINGS.webhooks, allowPrivateTargets: true } },
    });
    const traceId = "9bf92f3577b34da6a3ce929d0e0e473b";
    remote.reply((input) => ({ stream: send(...answer(input)) }));
    remote.reply({ status: 200, body: "ok" });
    const webhook = remote.url.replace(/\/agent$/, "/hook");
    await post(
      t,
      "/runs/wait",
      { agent_id: agentId, input: { messages: [] }, webhook },
      { traceparent: traceparent(traceId, CLIENT_SPAN) },
    );
    for (let i = 0; i < 100 && remote.last.path !== "/hook"; i++) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(remote.last.path).toBe("/hook");
    expect(remote.last.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  });

  it("sends the run's trace context to an A2A agent, on the calls of the run", async () => {
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_EXPORTER_OTLP_PROTOCOL = "http/json";
    const agent = await startA2aAgent();
    try {
      t = await build({
        yaml: `
agents:
  - name: remote-a2a
    version: 1.0.0
    description: A remote A2A agent.
    adapter: { type: a2a, url: "${agent.cardUrl}", cardRefreshSeconds: 0 }
`,
      });
      const traceId = "abf92f3577b34da6a3ce929d0e0e473c";
      const waited = await post(
        t,
        "/runs/wait",
        {
          agent_id: agentIdFor("remote-a2a", "1.0.0"),
          input: { messages: [{ role: "user", content: "hello there" }] },
        },
        { traceparent: traceparent(traceId, CLIENT_SPAN) },
      );
      expect((waited.run as Json).status).toBe("success");
      const traced = agent.headers.filter((h) => h.traceparent !== undefined);
      expect(traced.length).toBeGreaterThan(0);
      for (const h of traced) {
        expect(h.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
      }
      // The card read at start-up belongs to no run: it carries no trace context.
      expect(agent.headers[0]!.traceparent).toBeUndefined();
    } finally {
      await agent.close();
    }
  });

  it("stays off, exporting nothing and loading no SDK, unless an endpoint or the config asks", async () => {
    t = await build({ yaml: yaml(remote.url) });
    expect(tracing()).toBeUndefined();
    const before = receiver.bodies.length;
    remote.reply((input) => ({ stream: send(...answer(input)) }));
    await post(
      t,
      "/runs/wait",
      { agent_id: agentId, input: { messages: [] } },
      {
        traceparent: traceparent(CLIENT_TRACE, CLIENT_SPAN),
      },
    );
    expect(remote.last.headers.traceparent).toBeUndefined();
    expect(receiver.bodies.length).toBe(before);
  });

  /** The span's ancestors as received, nearest first. */
  function ancestors(span: ReceivedSpan): ReceivedSpan[] {
    const chain: ReceivedSpan[] = [];
    let parent = receiver.spans.find((s) => s.spanId === span.parentSpanId);
    while (parent) {
      chain.push(parent);
      const next = parent.parentSpanId;
      parent = receiver.spans.find((s) => s.spanId === next);
    }
    return chain;
  }
});
