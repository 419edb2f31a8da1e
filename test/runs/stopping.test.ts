/**
 * Stopping means stopped: every way a run is stopped (cancel with either action, the run's time
 * limit, a client going away under `on_disconnect: cancel`, the multitask strategies that
 * interrupt or roll back, the AG-UI face's client leaving, server shutdown) reaches the agent
 * itself. Each upstream records whether it was told: an @ag-ui/client AbstractAgent in-process
 * (abortRun and unsubscribe), a real AG-UI server over HTTP and a real OpenAI-compatible server
 * (the request is aborted).
 */
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AguiTestServer, send } from "../helpers/agui-server.js";
import type { TestApp } from "../helpers/app.js";
import { build } from "../helpers/app.js";
import { chunk, OpenAiTestServer } from "../helpers/openai-server.js";
import { openSse } from "../helpers/sse.js";
import {
  agentId,
  type Json,
  listen,
  newThread,
  post,
  runStarted,
  settledRun,
  until,
  userSays,
} from "./helpers.js";

const FIXTURE = resolve(import.meta.dirname, "../fixtures/modules/langgraph-like-agents.mjs");

interface StopRecord {
  runId: string;
  abortRun: boolean;
  unsubscribed: boolean;
}

/** An agent that records, per run, whether it was told to stop. */
interface Upstream {
  label: string;
  adapter: Json;
  /** Prepares the upstream for one more run that never ends on its own. */
  expectRun(): void;
  /** How many runs have reached the upstream. */
  reached(): number;
  /** Resolves once run `index` was told to stop; fails when it was not. */
  toldToStop(index: number): Promise<void>;
}

const stopRecords = (): StopRecord[] =>
  ((globalThis as { __stoppableAgentRuns?: StopRecord[] }).__stoppableAgentRuns ??= []);

function moduleUpstream(): Upstream {
  return {
    label: "an @ag-ui/client AbstractAgent (module)",
    adapter: { type: "module", path: FIXTURE, export: "StoppableAgent" },
    expectRun: () => undefined,
    reached: () => stopRecords().length,
    async toldToStop(index) {
      const record = await until(
        async () => stopRecords()[index],
        (r) => r?.abortRun === true && r.unsubscribed,
        2_000,
        `run ${index} of the AbstractAgent to get abortRun() and an unsubscribe`,
      );
      expect(record).toMatchObject({ abortRun: true, unsubscribed: true });
    },
  };
}

function aguiHttpUpstream(server: AguiTestServer): Upstream {
  return {
    label: "a remote AG-UI server (agui-http)",
    adapter: { type: "agui-http", url: server.url },
    expectRun: () =>
      server.reply((input) => ({
        stream: [
          ...send(
            { type: "RUN_STARTED", threadId: input.threadId, runId: input.runId },
            { type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" },
          ),
          { hang: true },
        ],
      })),
    reached: () => server.requests.length,
    async toldToStop(index) {
      const request = server.requests[index]!;
      await request.closed;
      expect(request.clientAborted).toBe(true);
    },
  };
}

function openAiUpstream(server: OpenAiTestServer): Upstream {
  return {
    label: "an OpenAI-compatible server (openai)",
    adapter: { type: "openai", baseUrl: server.baseUrl, model: "test-model" },
    expectRun: () =>
      server.reply({
        stream: [
          chunk({ role: "assistant", content: "" }),
          chunk({ content: "hi" }),
          { hang: true },
        ],
      }),
    reached: () => server.requests.length,
    async toldToStop(index) {
      const request = server.requests[index]!;
      await request.closed;
      expect(request.clientAborted).toBe(true);
    },
  };
}

function configFor(upstream: Upstream): string {
  const agent = (name: string, extra: Json = {}) => ({
    name,
    version: "1.0.0",
    description: `test agent ${name}`,
    adapter: upstream.adapter,
    ...extra,
  });
  return JSON.stringify({
    agents: [
      agent("stoppable"),
      agent("brief", { limits: { runTimeoutSeconds: 0.3 } }),
      {
        name: "quick",
        version: "1.0.0",
        description: "answers at once",
        adapter: { type: "echo" },
      },
    ],
  });
}

const aguiServer = await AguiTestServer.start();
const openAiServer = await OpenAiTestServer.start();
afterAll(async () => {
  await aguiServer.close();
  await openAiServer.close();
});

describe.each([moduleUpstream(), aguiHttpUpstream(aguiServer), openAiUpstream(openAiServer)])(
  "stopping a run reaches $label",
  (upstream) => {
    let t: TestApp;
    let base: string;
    beforeAll(async () => {
      t = await build({ yaml: configFor(upstream) });
      base = await listen(t);
    });
    afterAll(() => t.close());

    /** Starts a run on a new thread and waits until the upstream has it; returns its index there. */
    async function startRun(agent = "stoppable", app = t) {
      const index = upstream.reached();
      upstream.expectRun();
      const threadId = await newThread(app);
      const run = await post(app, `/threads/${threadId}/runs`, {
        agent_id: agentId(agent),
        input: userSays("work until told otherwise"),
      });
      await reachedUpstream(index);
      return { threadId, runId: run.run_id as string, index };
    }

    const reachedUpstream = (index: number) =>
      until(
        async () => upstream.reached(),
        (n) => n > index,
        2_000,
        "the run to reach the agent",
      );

    it.each(["interrupt", "rollback"])("POST …/cancel?action=%s", async (action) => {
      const { threadId, runId, index } = await startRun();
      const res = await t.call(
        "POST",
        `/threads/${threadId}/runs/${runId}/cancel?action=${action}&wait=true`,
      );
      expect(res.status).toBe(204);
      await upstream.toldToStop(index);
    });

    it("the run's time limit (limits.runTimeoutSeconds)", async () => {
      const { runId, index } = await startRun("brief");
      expect((await settledRun(t, runId)).status).toBe("timeout");
      await upstream.toldToStop(index);
    });

    it("a client leaving POST …/runs/stream (on_disconnect: cancel)", async () => {
      const index = upstream.reached();
      upstream.expectRun();
      const threadId = await newThread(t);
      const connection = await openSse(base, `/threads/${threadId}/runs/stream`, {
        body: { agent_id: agentId("stoppable"), input: userSays("hi"), stream_mode: "custom" },
      });
      const first = await connection.frame(0);
      await reachedUpstream(index);
      connection.destroy();
      await upstream.toldToStop(index);
      const runId = (first.data as Json).run_id as string;
      expect((await settledRun(t, runId)).output).toMatchObject({ errcode: 499 });
    });

    it.each(["interrupt", "rollback"])("a new run with multitask_strategy %s", async (strategy) => {
      const { threadId, index } = await startRun();
      const next = await post(t, `/threads/${threadId}/runs`, {
        agent_id: agentId("quick"),
        input: userSays("me first"),
        multitask_strategy: strategy,
      });
      await upstream.toldToStop(index);
      expect((await settledRun(t, next.run_id as string)).status).toBe("success");
    });

    it("an AG-UI client leaving the AG-UI face", async () => {
      const index = upstream.reached();
      upstream.expectRun();
      const client = new AbortController();
      const response = await fetch(`${base}/agents/${agentId("stoppable")}/ag-ui`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({
          threadId: "face-stop",
          runId: "face-run",
          messages: [{ id: "u1", role: "user", content: "hi" }],
          tools: [],
          context: [],
        }),
        signal: client.signal,
      });
      expect(response.status).toBe(200);
      await reachedUpstream(index);
      client.abort();
      await upstream.toldToStop(index);
    });

    it("server shutdown", async () => {
      const app = await build({ yaml: configFor(upstream) });
      const { runId, index } = await startRun("stoppable", app);
      await runStarted(app, runId);
      await app.close();
      await upstream.toldToStop(index);
    });
  },
);
