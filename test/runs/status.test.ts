import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { ScriptedAdapter } from "../../src/adapters/scripted.js";
import { readUpdate } from "../../src/engine/frames/codec.js";
import { createStorage } from "../../src/storage/index.js";
import type { TestApp } from "../helpers/app.js";
import {
  type AgentSpec,
  agentId,
  buildWith,
  finished,
  framesStored,
  type Json,
  newThread,
  post,
  progressScript,
  say,
  settledRun,
  slowScript,
  snapshot,
  started,
  tempDbFile,
  userSays,
} from "./helpers.js";

const approval = {
  id: "int-1",
  reason: "approval",
  message: "May I?",
  responseSchema: { type: "object" },
};

const agents: AgentSpec[] = [
  {
    name: "ok",
    script: [started, ...say("m1", "hello"), snapshot({ n: 1 }), finished({ result: { r: 1 } })],
  },
  {
    name: "asks",
    script: [
      started,
      snapshot({ asked: true }),
      finished({ outcome: { type: "interrupt", interrupts: [approval] } }),
    ],
  },
  {
    name: "gives-up",
    script: [started, snapshot({ tried: 1 }), finished({ outcome: { type: "cancelled" } })],
  },
  {
    name: "fails",
    script: [started, { type: "RUN_ERROR", message: "model overloaded", code: "RATE_LIMIT" }],
  },
  {
    name: "fails-numeric",
    script: [started, { type: "RUN_ERROR", message: "teapot", code: "418" }],
  },
  {
    name: "slow",
    script: slowScript(40),
    delayMs: 50,
    limits: { runTimeoutSeconds: 1 },
  },
  {
    name: "rude",
    script: [
      started,
      { type: "TEXT_MESSAGE_CONTENT", messageId: "nowhere", delta: "hi" },
      finished(),
    ],
  },
  { name: "thrower", script: [started, finished()] },
  { name: "scalar", script: [started, snapshot([1, 2]), finished({ result: "done" })] },
  {
    name: "malformed",
    script: [
      started,
      { type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: 5 },
      finished(),
    ],
  },
  {
    name: "from-the-future",
    script: [
      started,
      { type: "HOLOGRAM", beam: true },
      { ...snapshot({ ok: 1 }), sparkle: "extra" },
      finished(),
    ],
  },
  {
    name: "unlimited",
    script: [started, snapshot({ finished: true }), finished()],
    delayMs: 5,
    limits: { runTimeoutSeconds: 0 },
  },
];

type Run = { run_id: string; status: string; thread_id?: string };
type Wait = { run: Run; output?: Json };

describe("run status: how each end of an AG-UI segment maps to ACP", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildWith(agents);
  });
  afterAll(() => t.close());
  afterEach(() => vi.restoreAllMocks());

  /** Runs `agent` on a fresh thread to its end; returns the run, its output and the thread. */
  async function runOn(agent: string) {
    const threadId = await newThread(t);
    const wait = (await post(t, `/threads/${threadId}/runs/wait`, {
      agent_id: agentId(agent),
      input: userSays("hi"),
    })) as unknown as Wait;
    const run = (await t.call("GET", `/threads/${threadId}/runs/${wait.run.run_id}`)).body as Run;
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    return { wait, run, thread, output: wait.output! };
  }

  it("RUN_FINISHED › run success, output {type: result, values, messages}, thread idle", async () => {
    const { run, output, thread } = await runOn("ok");
    expect(run.status).toBe("success");
    expect(output).toEqual({
      type: "result",
      values: { n: 1 },
      messages: [
        { id: expect.any(String), role: "user", content: "hi" },
        { id: "m1", role: "assistant", content: "hello" },
      ],
      result: { r: 1 },
    });
    expect(thread.status).toBe("idle");
    expect(thread.values).toEqual({ n: 1 });
  });

  it("RUN_FINISHED › a non-object state and the result reach the client as values.$state and output.result", async () => {
    const { run, output, thread } = await runOn("scalar");
    expect(run.status).toBe("success");
    expect(output).toMatchObject({ values: { $state: [1, 2] }, result: "done" });
    expect(thread.values).toEqual({ $state: [1, 2] });
  });

  it("RUN_FINISHED outcome interrupt › run interrupted, output keyed by interrupt type, thread interrupted", async () => {
    const { run, output, thread } = await runOn("asks");
    expect(run.status).toBe("interrupted");
    expect(output).toEqual({ type: "interrupt", interrupt: { approval } });
    expect(thread.status).toBe("interrupted");
    expect(thread.values).toEqual({ asked: true });
  });

  it("RUN_FINISHED outcome cancelled › run error saying it was cancelled, thread idle", async () => {
    const { run, output, thread } = await runOn("gives-up");
    expect(run.status).toBe("error");
    expect(output).toMatchObject({ type: "error", run_id: run.run_id, errcode: 499 });
    expect(output.description).toMatch(/cancelled/);
    expect(thread.status).toBe("idle");
    // Progress is kept.
    expect(thread.values).toEqual({ tried: 1 });
  });

  it("RUN_ERROR › run error, integer errcode, description keeps the AG-UI code, thread error", async () => {
    const { run, output, thread } = await runOn("fails");
    expect(run.status).toBe("error");
    expect(output).toEqual({
      type: "error",
      run_id: run.run_id,
      errcode: 500,
      description: "model overloaded (code RATE_LIMIT)",
    });
    expect(thread.status).toBe("error");
  });

  it("RUN_ERROR › a numeric AG-UI code becomes the errcode", async () => {
    const { output } = await runOn("fails-numeric");
    expect(output).toMatchObject({ errcode: 418, description: "teapot (code 418)" });
  });

  it("server time limit › run timeout, error output naming the limit, thread error", async () => {
    const started = Date.now();
    const { run, output, thread } = await runOn("slow");
    expect(Date.now() - started).toBeLessThan(1_900);
    expect(run.status).toBe("timeout");
    expect(output).toMatchObject({ type: "error", run_id: run.run_id, errcode: 504 });
    expect(output.description).toMatch(/time limit of 1 s/);
    expect(thread.status).toBe("error");
  });

  it("runTimeoutSeconds 0 › means no time limit: the run succeeds", async () => {
    const { run, thread } = await runOn("unlimited");
    expect(run.status).toBe("success");
    expect(thread.values).toEqual({ finished: true });
  });

  it("adapter broke the protocol › run error naming the event index, its type and the rule", async () => {
    const { run, output, thread } = await runOn("rude");
    expect(run.status).toBe("error");
    expect(output).toMatchObject({ type: "error", errcode: 502 });
    const description = output.description as string;
    expect(description).toMatch(/^event 1 \(TEXT_MESSAGE_CONTENT\): /);
    expect(description).toMatch(/TEXT_MESSAGE_START/);
    expect(thread.status).toBe("error");
  });

  it("adapter sent a malformed value in a known field › run error naming the event and the field", async () => {
    const { run, output } = await runOn("malformed");
    expect(run.status).toBe("error");
    expect(output).toMatchObject({ type: "error", errcode: 502 });
    expect(output.description).toMatch(/^event 2 \(TEXT_MESSAGE_CONTENT\): .*delta/);
  });

  it("unknown event types and unknown fields › stripped, the run succeeds", async () => {
    const { run, thread } = await runOn("from-the-future");
    expect(run.status).toBe("success");
    expect(thread.values).toEqual({ ok: 1 });
    const updates = (await t.storage.readFrames(run.run_id, 0))
      .filter((f) => f.mode === "custom")
      .map((f) => readUpdate(f) as Json);
    expect(updates.map((u) => u.type)).toEqual(["RUN_STARTED", "STATE_SNAPSHOT", "RUN_FINISHED"]);
    expect(updates[1]).not.toHaveProperty("sparkle");
  });

  it("adapter threw › run error with the adapter's message, thread error, server still serves", async () => {
    // The config offers no adapter that throws; this one throws after its first event.
    vi.spyOn(ScriptedAdapter.prototype, "run").mockImplementation(async function* (input) {
      yield { type: "RUN_STARTED", threadId: input.threadId, runId: input.runId };
      throw new Error("socket hang up");
    });
    const { run, output, thread } = await runOn("thrower");
    expect(run.status).toBe("error");
    expect(output).toMatchObject({
      type: "error",
      errcode: 500,
      description: "agent failed: socket hang up",
    });
    expect(thread.status).toBe("error");
    vi.restoreAllMocks();
    expect((await runOn("ok")).run.status).toBe("success");
  });
});

describe("run status › server restarted mid-run", () => {
  /**
   * A run a replica that died was executing, on a fresh storage: pending, owned by "dead", with
   * the segment it had started and the first frame it had stored (as the engine leaves them).
   */
  async function orphanRun(agent: string) {
    const storage = createStorage(":memory:");
    await storage.open();
    const { thread } = await storage.createThread({
      thread_id: crypto.randomUUID(),
      metadata: {},
      if_exists: "raise",
    });
    const run = await storage.insertRun(
      {
        run_id: crypto.randomUUID(),
        thread_id: thread.thread_id,
        agent_id: agentId(agent),
        kind: "stateful",
        creation: { agent_id: agentId(agent), input: userSays("hi") },
        metadata: {},
        start_after: new Date().toISOString(),
      },
      { reject_if_busy: true },
    );
    await storage.setThreadStatus(thread.thread_id, "busy");
    const claimed = await storage.claimRun("dead", 60_000, new Date());
    expect(claimed?.run_id).toBe(run.run_id);
    const aguiRunId = crypto.randomUUID();
    await storage.updateRun(run.run_id, {
      segments: [{ agui_run_id: aguiRunId, started_at: new Date().toISOString(), ended_at: null }],
      checkpoint_before: null,
    });
    const update = { type: "RUN_STARTED", threadId: thread.thread_id, runId: aguiRunId };
    await storage.appendFrames([
      {
        run_id: run.run_id,
        seq: 1,
        mode: "custom",
        data: JSON.stringify({ type: "custom", run_id: run.run_id, status: "pending", update }),
      },
    ]);
    return { storage, runId: run.run_id, threadId: thread.thread_id };
  }

  it("ends the run as error saying the server restarted, thread error", async () => {
    const { storage, runId, threadId } = await orphanRun("ok");
    const t = await buildWith([{ name: "ok", script: [started, finished()] }], { storage });
    try {
      const run = await settledRun(t, runId);
      expect(run.status).toBe("error");
      expect(run.owner).toBeNull();
      const wait = (await t.call("GET", `/threads/${threadId}/runs/${runId}/wait`)).body as Wait;
      expect(wait.run.status).toBe("error");
      expect(wait.output).toMatchObject({ type: "error", errcode: 503 });
      expect(wait.output!.description).toMatch(/server restarted/);
      const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
      expect(thread.status).toBe("error");
    } finally {
      await t.close();
      await storage.close();
    }
  });

  it("re-queues the run when the agent is marked retryOnRestart; it starts over and completes", async () => {
    const { storage, runId, threadId } = await orphanRun("retry");
    const t = await buildWith([{ name: "retry", echo: true, retryOnRestart: true }], { storage });
    try {
      const run = await settledRun(t, runId);
      expect(run.status).toBe("success");
      // A first start again: one segment, and the run's input reached the agent.
      expect(run.segments).toHaveLength(1);
      expect(run.segments[0]!.ended_at).not.toBeNull();
      const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
      expect(thread).toMatchObject({ status: "idle", values: { turns: 1, last_message: "hi" } });
      // Frames continue after what the dead replica stored.
      const frames = await t.storage.readFrames(runId, 0);
      expect(frames.map((f) => f.seq)).toEqual(frames.map((_, i) => i + 1));
    } finally {
      await t.close();
      await storage.close();
    }
  });

  it("a graceful restart fails a running run, or hands it to the next server when retryOnRestart", async () => {
    const file = tempDbFile();
    const slow = (name: string, retryOnRestart: boolean): AgentSpec => ({
      name,
      script: progressScript(12),
      delayMs: 20,
      retryOnRestart,
    });
    const config = [slow("fragile", false), slow("sturdy", true)];
    const a = await buildWith(config, { storage: createStorage(file) });
    const threads = [await newThread(a), await newThread(a)];
    const runIds: string[] = [];
    for (const [i, agent] of ["fragile", "sturdy"].entries()) {
      const run = await post(a, `/threads/${threads[i]}/runs`, { agent_id: agentId(agent) });
      runIds.push(run.run_id as string);
    }
    await Promise.all(runIds.map((id) => framesStored(a, id, 3)));
    await a.close();
    await a.storage.close();

    const b = await buildWith(config, { storage: createStorage(file) });
    try {
      const fragile = await settledRun(b, runIds[0]!);
      expect(fragile.status).toBe("error");
      expect(fragile.output?.description).toMatch(/shut down/);
      const sturdy = await settledRun(b, runIds[1]!, undefined, 5_000);
      expect(sturdy.status).toBe("success");
      expect(sturdy.segments).toHaveLength(1);
      const thread = (await b.call("GET", `/threads/${threads[1]}`)).body as Json;
      expect(thread).toMatchObject({ status: "idle", values: { progress: 12 } });
    } finally {
      await b.close();
      await b.storage.close();
    }
  });
});
