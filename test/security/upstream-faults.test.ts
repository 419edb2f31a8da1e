/**
 * Agents behind the server that misbehave over HTTP (test/helpers/hostile-upstream.ts), one
 * `agui-http` or `openai` agent per fault: each run ends as it should (`error`, or `timeout`
 * for a stream that never ends) with a message naming the fault and the limit or timeout it
 * hit, while a well-behaved agent on the same server keeps answering. Every connection to a
 * misbehaving upstream is closed by the server, and the huge answers are not read through.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import type { TestApp } from "../helpers/app.js";
import {
  AGUI_CASES,
  type AguiCase,
  HostileUpstream,
  OPENAI_CASES,
  type OpenAiCase,
} from "../helpers/hostile-upstream.js";
import { buildServing, echoAgent } from "./helpers.js";

const MiB = 1024 * 1024;
const PROTO_CASES = new Set<AguiCase>(["proto-lying-length", "proto-short-frame"]);
const IDLE_CASES = new Set<AguiCase>(["trickle", "keepalive-only"]);
const SLOW_CASES = new Set<AguiCase>(["slow-headers", "slow-error-page"]);

interface Expected {
  status?: string;
  description: RegExp;
}

const agui: Record<AguiCase, Expected> = {
  "huge-event": {
    description:
      /sent an SSE event larger than 1 MiB, the most one event may be \(server\.limits\.maxEventBytes\)$/,
  },
  "huge-line-no-newline": {
    description: /sent an SSE event larger than 1 MiB.*\(server\.limits\.maxEventBytes\)$/,
  },
  trickle: { description: /sent no complete event for 500 ms \(idleTimeoutMs\)$/ },
  "keepalive-only": { description: /sent no complete event for 500 ms \(idleTimeoutMs\)$/ },
  "deep-patch": {
    description:
      /^event 1 \(STATE_DELTA\): the patch makes the state nested deeper than 256 levels, at \/a\/a\/a.*\(server\.limits\.maxEventDepth\)$/,
  },
  // Refused on its text, before it is parsed.
  "deep-snapshot": {
    description: /sent an event nested deeper than 256 levels \(server\.limits\.maxEventDepth\)$/,
  },
  "malformed-json": { description: /sent malformed JSON in a data: line/ },
  "out-of-order": { description: /^event 1 \(TEXT_MESSAGE_CONTENT\): .*m1/ },
  "html-200": {
    description: /answered with content type "text\/html", not text\/event-stream$/,
  },
  "html-502": {
    description: /answered HTTP 502 before the stream opened: "<html><body><h1>502 Bad Gateway/,
  },
  "cut-mid-event": { description: /broke the connection mid-stream|closed the stream without/ },
  flood: {
    description:
      /^the agent sent more than 300 events in one run \(server\.limits\.maxEventsPerRun\)$/,
  },
  "proto-lying-length": {
    description:
      /sent a protobuf frame of 2147483647 bytes, more than the 1048576 allowed for one event \(server\.limits\.maxEventBytes\)$/,
  },
  "proto-short-frame": {
    description:
      /closed the stream without RUN_FINISHED or RUN_ERROR \(7 bytes of an unfinished frame left\)$/,
  },
  endless: { status: "timeout", description: /^the run exceeded its time limit of 2 s$/ },
  "json-content-type": { description: /answered with content type "application\/json"/ },
  "no-content-type": { description: /answered with content type "\(none\)"/ },
  "slow-headers": { description: /did not answer within 1000 ms \(connectTimeoutMs\)$/ },
  "slow-error-page": { description: /did not answer within 1000 ms \(connectTimeoutMs\)$/ },
};

const openai: Record<OpenAiCase, Expected> = {
  "huge-event": {
    description:
      /sent an SSE event larger than 1 MiB, the most one event may be \(server\.limits\.maxEventBytes\)$/,
  },
  "trickle-then-huge": { description: /sent an SSE event larger than 1 MiB/ },
  "huge-completion": {
    description:
      /answered with a completion larger than 1 MiB, the most one event may be \(server\.limits\.maxEventBytes\)$/,
  },
  "malformed-chunk": { description: /sent a stream chunk that is not JSON: \{not json/ },
  "cut-mid-event": { description: /dropped mid-stream/ },
  "html-200": { description: /answered with an HTML page.*Welcome to nginx/ },
};

const aguiName = (name: string) => `agui-${name}`;
const openaiName = (name: string) => `openai-${name}`;

function configOf(url: string) {
  return {
    server: { limits: { maxEventBytes: MiB, maxEventsPerRun: 300 } },
    agents: [
      echoAgent("good"),
      ...AGUI_CASES.map((name) => ({
        name: aguiName(name),
        version: "1.0.0",
        description: `misbehaves: ${name}`,
        adapter: {
          type: "agui-http",
          url: `${url}/${name}`,
          // Short only where silence is the fault: a huge event may take a while on a busy machine.
          idleTimeoutMs: IDLE_CASES.has(name) ? 500 : 10_000,
          connectTimeoutMs: SLOW_CASES.has(name) ? 1000 : 10_000,
          ...(PROTO_CASES.has(name) ? { protocol: "proto" } : {}),
        },
        limits: { runTimeoutSeconds: name === "endless" ? 2 : 30 },
      })),
      {
        name: "agui-own-limit",
        version: "1.0.0",
        description: "a huge event against the agent's own, smaller limit",
        adapter: { type: "agui-http", url: `${url}/huge-event` },
        limits: { maxEventBytes: 64 * 1024 },
      },
      ...OPENAI_CASES.map((name) => ({
        name: openaiName(name),
        version: "1.0.0",
        description: `misbehaves: ${name}`,
        adapter: { type: "openai", baseUrl: `${url}/openai/${name}`, model: "hostile" },
        limits: { runTimeoutSeconds: 10 },
      })),
    ],
  };
}

interface WaitBody {
  run: { run_id: string; status: string };
  output?: { type: string; errcode?: number; description?: string };
}

async function waitRun(t: TestApp, agent: string): Promise<WaitBody> {
  const res = await t.call("POST", "/runs/wait", {
    agent_id: agentIdFor(agent, "1.0.0"),
    input: { messages: [{ role: "user", content: "hi" }] },
    on_completion: "keep",
  });
  expect(res.status, res.raw).toBe(200);
  return res.body as WaitBody;
}

describe("agents that misbehave over HTTP", () => {
  let upstream: HostileUpstream;
  let t: TestApp;
  beforeAll(async () => {
    upstream = await HostileUpstream.start();
    t = await buildServing(configOf(upstream.url));
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.close();
  });

  it("each agui-http fault fails its own run, naming the fault and its limit; a good agent keeps answering", async () => {
    const [results, good] = await Promise.all([
      Promise.all(AGUI_CASES.map((name) => waitRun(t, aguiName(name)))),
      Promise.all(Array.from({ length: 3 }, () => waitRun(t, "good"))),
    ]);
    for (const [i, name] of AGUI_CASES.entries()) {
      const { run, output } = results[i]!;
      const expected = agui[name];
      expect(run.status, name).toBe(expected.status ?? "error");
      expect(output?.description, name).toMatch(expected.description);
      if (!expected.status) expect(output?.description, name).not.toMatch(/Maximum call stack/);
    }
    for (const body of good) expect(body.run.status).toBe("success");

    // The huge answers were given up on early: nowhere near their 300 MB was read.
    for (const name of ["huge-event", "huge-line-no-newline"]) {
      expect(upstream.written.get(`/${name}`) ?? 0, name).toBeLessThan(64 * MiB);
    }
    expect(upstream.written.get("/proto-lying-length") ?? 0).toBeLessThan(64 * MiB);
    // And the server closed every connection it gave up on.
    await vi.waitFor(() => expect(upstream.openConnections).toBe(0), { timeout: 5000 });
  });

  it("an agent's own limit overrides the server's, and the message names the agent's key", async () => {
    const { run, output } = await waitRun(t, "agui-own-limit");
    expect(run.status).toBe("error");
    expect(output?.description).toMatch(
      /sent an SSE event larger than 64 KiB, the most one event may be \(limits\.maxEventBytes\)$/,
    );
  });

  it("each fault of an OpenAI-compatible server fails its own run, naming it", async () => {
    const results = await Promise.all(OPENAI_CASES.map((name) => waitRun(t, openaiName(name))));
    for (const [i, name] of OPENAI_CASES.entries()) {
      const { run, output } = results[i]!;
      expect(run.status, name).toBe("error");
      expect(output?.description, name).toMatch(openai[name].description);
    }
    for (const name of ["huge-event", "trickle-then-huge", "huge-completion"]) {
      expect(upstream.written.get(`/openai/${name}/chat/completions`) ?? 0, name).toBeLessThan(
        64 * MiB,
      );
    }
    await vi.waitFor(() => expect(upstream.openConnections).toBe(0), { timeout: 5000 });
  });
});
