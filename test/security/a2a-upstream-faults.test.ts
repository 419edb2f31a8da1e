/**
 * A2A agents behind the server that misbehave (test/helpers/hostile-a2a.ts), one `a2a` agent
 * per fault and binding (JSON-RPC and HTTP+JSON), driven by the real @a2a-js/sdk client as every
 * `a2a` run is: each run ends as it should (`error`, or `timeout` for a task that never ends)
 * with a message naming the agent's fault and the limit or timeout it hit, while a well-behaved
 * agent on the same server keeps answering. The huge answers are not read through, and every connection is closed.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import type { TestApp } from "../helpers/app.js";
import { A2A_CALL_CASES, A2A_CASES, type A2aCase, HostileA2a } from "../helpers/hostile-a2a.js";
import { buildServing, echoAgent } from "./helpers.js";

const MiB = 1024 * 1024;
const AGENT = /^agent failed: the A2A agent at http:\/\/127\.0\.0\.1:\d+\/[a-z-]+\/card\.json:? /;

interface Expected {
  status?: string;
  description: RegExp;
}

const expected: Record<A2aCase, Expected> = {
  "huge-event": {
    description:
      /sent an SSE event larger than 1 MiB, the most one event may be \(server\.limits\.maxEventBytes\)$/,
  },
  "huge-answer": {
    description:
      /sent an answer larger than 1 MiB, the most one event may be \(server\.limits\.maxEventBytes\)$/,
  },
  trickle: { description: /sent no complete event for 500 ms \(idleTimeoutMs\)$/ },
  endless: { status: "timeout", description: /^the run exceeded its time limit of 2 s$/ },
  "malformed-json": {
    description: /sent malformed JSON in an SSE event \(.*\): "\{not json at all"$/,
  },
  "rpc-error": { description: /failed: .*model overloaded/ },
  "html-error": {
    description: /answered HTTP 502 \("text\/html"\): "<html><body><h1>502 Bad Gateway/,
  },
  "wrong-content-type": {
    description: /answered with content type "text\/html", not text\/event-stream$/,
  },
  "cut-mid-event": {
    description:
      /dropped the stream of task t-1 4 times in a row \(broke the connection in the middle of an answer\)$/,
  },
  flood: {
    description:
      /^the agent sent more than 300 events in one run \(server\.limits\.maxEventsPerRun\)$/,
  },
  "artifact-of-another-task": {
    description: /sent artifact "a-1" of task "t-2", not of the run's task "t-1"$/,
  },
  "status-of-unknown-task": {
    description: /sent a status update of task "t-9", not of the run's task "t-1"$/,
  },
  "deep-data": {
    description: /sent an event nested deeper than 256 levels \(server\.limits\.maxEventDepth\)$/,
  },
  "slow-headers": { description: /did not answer within 1000 ms \(connectTimeoutMs\)$/ },
  "huge-card": {
    description:
      /its agent card could not be read: sent an answer larger than 1 MiB, the most one event may be \(server\.limits\.maxEventBytes\)$/,
  },
  "malformed-card": { description: /its agent card could not be read: sent malformed JSON \(/ },
};

const REST_AGENT =
  /^agent failed: the A2A agent at http:\/\/127\.0\.0\.1:\d+\/[a-z-]+\/rest-card\.json:? /;

const nameOf = (kase: string) => `a2a-${kase}`;
const restNameOf = (kase: string) => `a2a-rest-${kase}`;

function configOf(upstream: HostileA2a, unreachable: string) {
  const agent = (name: string, url: string, kase?: A2aCase) => ({
    name,
    version: "1.0.0",
    description: `misbehaves: ${kase ?? name}`,
    adapter: {
      type: "a2a",
      url,
      cardRefreshSeconds: 0,
      // Short only where silence is the fault: a huge event may take a while on a busy machine.
      idleTimeoutMs: kase === "trickle" ? 500 : 10_000,
      connectTimeoutMs: kase === "slow-headers" ? 1000 : 10_000,
    },
    limits: { runTimeoutSeconds: kase === "endless" ? 2 : 30 },
  });
  return {
    server: { limits: { maxEventBytes: MiB, maxEventsPerRun: 300 } },
    agents: [
      echoAgent("good"),
      ...A2A_CASES.map((kase) => agent(nameOf(kase), upstream.cardUrl(kase), kase)),
      ...A2A_CALL_CASES.map((kase) =>
        agent(restNameOf(kase), upstream.cardUrl(kase, "http-json"), kase),
      ),
      agent("a2a-unreachable-card", unreachable),
      {
        ...agent("a2a-own-limit", upstream.cardUrl("huge-event")),
        limits: { maxEventBytes: 64 * 1024, maxEventDepth: 32 },
      },
      {
        ...agent("a2a-own-depth", upstream.cardUrl("deep-data")),
        limits: { maxEventDepth: 32 },
      },
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

describe("A2A agents that misbehave", () => {
  let upstream: HostileA2a;
  let t: TestApp;
  beforeAll(async () => {
    upstream = await HostileA2a.start();
    t = await buildServing(configOf(upstream, await HostileA2a.unreachableUrl()));
  });
  afterAll(async () => {
    await t?.close();
    await upstream?.close();
  });

  it("each fault fails its own run, naming the agent, the fault and its limit; a good agent keeps answering", async () => {
    const [results, good] = await Promise.all([
      Promise.all(A2A_CASES.map((kase) => waitRun(t, nameOf(kase)))),
      Promise.all(Array.from({ length: 3 }, () => waitRun(t, "good"))),
    ]);
    for (const [i, kase] of A2A_CASES.entries()) {
      const { run, output } = results[i]!;
      const { status, description } = expected[kase];
      expect(run.status, kase).toBe(status ?? "error");
      expect(output?.description, kase).toMatch(description);
      if (!status && !/maxEventsPerRun/.test(description.source)) {
        expect(output?.description, kase).toMatch(AGENT);
      }
    }
    for (const body of good) expect(body.run.status).toBe("success");

    // The huge answers were given up on early: nowhere near their 300 MB was read.
    for (const path of ["/huge-event/rpc", "/huge-answer/rpc", "/huge-card/card.json"]) {
      expect(upstream.written.get(path) ?? 0, path).toBeLessThan(64 * MiB);
    }
    // A run that gave up on its task told the agent so.
    expect(upstream.calls.get("huge-event")).toContain("CancelTask");
    // And the server closed every connection it gave up on.
    await vi.waitFor(() => expect(upstream.openConnections).toBe(0), { timeout: 5000 });
  });

  it("over HTTP+JSON, each fault fails its own run with the same message", async () => {
    const results = await Promise.all(A2A_CALL_CASES.map((kase) => waitRun(t, restNameOf(kase))));
    for (const [i, kase] of A2A_CALL_CASES.entries()) {
      const { run, output } = results[i]!;
      const { status, description } = expected[kase];
      expect(run.status, kase).toBe(status ?? "error");
      expect(output?.description, kase).toMatch(description);
      if (!status && !/maxEventsPerRun/.test(description.source)) {
        expect(output?.description, kase).toMatch(REST_AGENT);
      }
    }
    for (const path of ["/huge-event/rest/message:stream", "/huge-answer/rest/message:send"]) {
      expect(upstream.written.get(path) ?? 0, path).toBeLessThan(64 * MiB);
    }
    expect(upstream.calls.get("huge-event")).toContain("CancelTask");
    await vi.waitFor(() => expect(upstream.openConnections).toBe(0), { timeout: 5000 });
  });

  it("an unreachable card fails the run, naming the card and the refused connection", async () => {
    const { run, output } = await waitRun(t, "a2a-unreachable-card");
    expect(run.status).toBe("error");
    expect(output?.description).toMatch(
      /^agent failed: the A2A agent at http:\/\/127\.0\.0\.1:\d+\/card\.json: its agent card could not be read: fetch failed \(ECONNREFUSED\)$/,
    );
  });

  it("the agent's own limits override the server's, and the message names the agent's key", async () => {
    const [size, depth] = await Promise.all([
      waitRun(t, "a2a-own-limit"),
      waitRun(t, "a2a-own-depth"),
    ]);
    expect(size.run.status).toBe("error");
    expect(size.output?.description).toMatch(
      /sent an SSE event larger than 64 KiB, the most one event may be \(limits\.maxEventBytes\)$/,
    );
    expect(depth.run.status).toBe("error");
    expect(depth.output?.description).toMatch(
      /sent an event nested deeper than 32 levels \(limits\.maxEventDepth\)$/,
    );
  });
});
