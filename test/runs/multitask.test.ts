import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import {
  agentId,
  buildWith,
  finished,
  type Json,
  newThread,
  post,
  progressScript,
  runStarted,
  settledRun,
  snapshot,
  started,
  until,
  userSays,
} from "./helpers.js";

type Run = { run_id: string; status: string; thread_id?: string };
type State = { values: Json; checkpoint: { checkpoint_id: string }; metadata: Json };

describe("multitask strategies and cancel", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildWith([
      // About 3 s if left alone: long enough to be caught mid-run.
      { name: "long", script: progressScript(30), delayMs: 30 },
      // About 0.7 s: still running while the enqueue test posts and reads behind it, on a busy
      // machine too, and short enough for the queued run to follow soon.
      { name: "short", script: progressScript(3), delayMs: 60 },
      { name: "quick", script: [started, snapshot({ quick: true }), finished()] },
      { name: "noop", script: [started, finished()] },
      {
        name: "asks",
        script: [
          started,
          snapshot({ asked: true }),
          finished({
            outcome: { type: "interrupt", interrupts: [{ id: "i", reason: "approval" }] },
          }),
        ],
      },
    ]);
  });
  afterAll(() => t.close());

  const history = async (threadId: string) =>
    (await t.call("GET", `/threads/${threadId}/history?limit=100`)).body as State[];
  const getRun = async (threadId: string, runId: string) =>
    t.call("GET", `/threads/${threadId}/runs/${runId}`);

  /** Starts `agent` on the thread and waits until it has made some progress (a step checkpoint). */
  async function startLong(threadId: string, agent = "long"): Promise<Run> {
    const run = (await post(t, `/threads/${threadId}/runs`, {
      agent_id: agentId(agent),
      input: userSays("work"),
    })) as Run;
    await runStarted(t, run.run_id);
    await until(
      () => history(threadId),
      (states) => states.some((s) => s.metadata.run_id === run.run_id),
      5_000,
      "a step checkpoint of the first run",
    );
    return run;
  }

  it("POST /threads/{id}/runs › reject (the default) answers 409 while the thread is busy", async () => {
    const threadId = await newThread(t);
    const first = await startLong(threadId);
    for (const body of [{}, { multitask_strategy: "reject" }]) {
      const res = await t.call("POST", `/threads/${threadId}/runs`, {
        agent_id: agentId("quick"),
        ...body,
      });
      expect(res.status).toBe(409);
      expect(res.body).toBe(`thread ${threadId} is busy`);
    }
    await t.call("POST", `/threads/${threadId}/runs/${first.run_id}/cancel?wait=true`);
  });

  it("POST /threads/{id}/runs › enqueue waits behind the running run, then runs", async () => {
    const threadId = await newThread(t);
    const first = (await post(t, `/threads/${threadId}/runs`, {
      agent_id: agentId("short"),
    })) as Run;
    await runStarted(t, first.run_id);
    const second = (await post(t, `/threads/${threadId}/runs`, {
      agent_id: agentId("quick"),
      multitask_strategy: "enqueue",
    })) as Run;
    expect(second.status).toBe("pending");
    // Queued: not started while the first executes.
    const queued = await t.storage.getRun(second.run_id);
    expect(queued?.segments).toEqual([]);
    expect((await t.storage.getRun(first.run_id))?.status).toBe("pending");

    const done2 = await settledRun(t, second.run_id);
    const done1 = await settledRun(t, first.run_id);
    expect([done1.status, done2.status]).toEqual(["success", "success"]);
    expect(Date.parse(done2.segments[0]!.started_at)).toBeGreaterThanOrEqual(
      Date.parse(done1.segments[0]!.ended_at!),
    );
    // History, newest first: the second run's checkpoint, then the first run's.
    const order = (await history(threadId)).map((s) => s.metadata.run_id);
    expect(order[0]).toBe(second.run_id);
    expect(order.slice(1).every((id) => id === first.run_id)).toBe(true);
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread).toMatchObject({ status: "idle", values: { quick: true } });
  });

  it("POST /threads/{id}/runs › interrupt cancels the running run, keeps its progress, starts the new one", async () => {
    const threadId = await newThread(t);
    const first = await startLong(threadId);
    const second = (await post(t, `/threads/${threadId}/runs`, {
      agent_id: agentId("noop"),
      multitask_strategy: "interrupt",
    })) as Run;

    const stopped = await settledRun(t, first.run_id);
    expect(stopped.status).toBe("error");
    expect(stopped.output).toMatchObject({ type: "error", errcode: 499 });
    expect(stopped.output!.description).toMatch(/cancelled/);
    expect(stopped.segments[0]!.ended_at).not.toBeNull();
    expect((await settledRun(t, second.run_id)).status).toBe("success");

    // The first run's progress is a checkpoint and the thread continues from it.
    const states = await history(threadId);
    const ofFirst = states.filter((s) => s.metadata.run_id === first.run_id);
    expect(ofFirst.some((s) => s.metadata.source === "run")).toBe(true);
    const progress = (ofFirst[0]!.values as { progress: number }).progress;
    expect(progress).toBeGreaterThanOrEqual(1);
    expect(progress).toBeLessThan(30);
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread.values).toEqual({ progress });
    expect((await getRun(threadId, first.run_id)).status).toBe(200);
  });

  it("POST /threads/{id}/runs › rollback deletes the running run and restores the thread", async () => {
    const threadId = await newThread(t);
    await t.call("PATCH", `/threads/${threadId}`, { values: { base: true } });
    const before = await history(threadId);
    const first = await startLong(threadId);
    const second = (await post(t, `/threads/${threadId}/runs`, {
      agent_id: agentId("noop"),
      multitask_strategy: "rollback",
    })) as Run;

    const res = await getRun(threadId, first.run_id);
    expect(res.status).toBe(404);
    expect(res.body).toBe(`run ${first.run_id} not found`);
    expect((await settledRun(t, second.run_id)).status).toBe("success");
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread).toMatchObject({ status: "idle", values: { base: true } });
    const runs = (await t.call("GET", `/threads/${threadId}/runs`)).body as Run[];
    expect(runs.map((r) => r.run_id)).toEqual([second.run_id]);
    // The second run continued from the checkpoint the thread had before the rolled-back run.
    const stored = await t.storage.getThread(threadId);
    const current = await t.storage.getCheckpoint(threadId, stored!.checkpoint_id!);
    expect(current?.metadata.run_id).toBe(second.run_id);
    expect(before).toHaveLength(1);
    expect(current?.parent_checkpoint_id).toBe(before[0]!.checkpoint.checkpoint_id);
  });

  it("POST …/cancel › action=interrupt&wait=true returns once the run has stopped, as cancelled", async () => {
    const threadId = await newThread(t);
    const run = await startLong(threadId);
    const res = await t.call(
      "POST",
      `/threads/${threadId}/runs/${run.run_id}/cancel?action=interrupt&wait=true`,
    );
    expect(res.status).toBe(204);
    const now = (await getRun(threadId, run.run_id)).body as Run;
    expect(now.status).toBe("error");
    const stored = await t.storage.getRun(run.run_id);
    expect(stored?.output).toMatchObject({ errcode: 499, description: "run was cancelled" });
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread.status).toBe("idle");
    expect((thread.values as { progress: number }).progress).toBeGreaterThanOrEqual(1);
  });

  it("POST …/cancel › action=rollback&wait=true deletes the run and restores the thread", async () => {
    const threadId = await newThread(t);
    await t.call("PATCH", `/threads/${threadId}`, { values: { base: 1 } });
    const run = await startLong(threadId);
    const res = await t.call(
      "POST",
      `/threads/${threadId}/runs/${run.run_id}/cancel?action=rollback&wait=true`,
    );
    expect(res.status).toBe(204);
    expect((await getRun(threadId, run.run_id)).status).toBe(404);
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread).toMatchObject({ status: "idle", values: { base: 1 } });
  });

  it("POST …/cancel › after action=rollback, history starts at the restored state", async () => {
    const threadId = await newThread(t);
    await t.call("PATCH", `/threads/${threadId}`, { values: { base: 2 } });
    const run = await startLong(threadId);
    await t.call(
      "POST",
      `/threads/${threadId}/runs/${run.run_id}/cancel?action=rollback&wait=true`,
    );
    const states = await history(threadId);
    expect(states.some((s) => s.metadata.run_id === run.run_id)).toBe(false);
    expect(states[0]!.values).toEqual({ base: 2 });
  });

  it("POST /threads/{id}/runs/wait › a client waiting on a run that is rolled back learns how it ended", async () => {
    const threadId = await newThread(t);
    const waiting = t.call("POST", `/threads/${threadId}/runs/wait`, { agent_id: agentId("long") });
    const [run] = await until(
      () => t.storage.searchRuns({ thread_id: threadId, limit: 1, offset: 0 }),
      (found) => found.length === 1,
    );
    await runStarted(t, run!.run_id);
    await t.call("POST", `/threads/${threadId}/runs/${run!.run_id}/cancel?action=rollback`);
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      run: { run_id: run!.run_id, status: "error" },
      output: { type: "error", errcode: 499, description: "run was cancelled and rolled back" },
    });
    expect((await getRun(threadId, run!.run_id)).status).toBe(404);
  });

  it("POST /runs/{id}/cancel › wait=true stops a stateless run before answering", async () => {
    const run = (await post(t, "/runs", { agent_id: agentId("long") })) as Run;
    await runStarted(t, run.run_id);
    const res = await t.call("POST", `/runs/${run.run_id}/cancel?wait=true`);
    expect(res.status).toBe(204);
    expect(((await t.call("GET", `/runs/${run.run_id}`)).body as Run).status).toBe("error");
  });

  it("POST /runs/{id}/cancel › action=rollback deletes a stateless run and its hidden thread", async () => {
    const run = (await post(t, "/runs", {
      agent_id: agentId("long"),
      on_completion: "keep",
    })) as Run;
    await runStarted(t, run.run_id);
    const res = await t.call("POST", `/runs/${run.run_id}/cancel?action=rollback&wait=true`);
    expect(res.status).toBe(204);
    expect((await t.call("GET", `/runs/${run.run_id}`)).status).toBe(404);
    expect(await t.storage.getThread(run.thread_id!)).toBeNull();
  });

  it("POST …/cancel › cancels a queued (after_seconds) run before it ever starts", async () => {
    const threadId = await newThread(t);
    const run = (await post(t, `/threads/${threadId}/runs`, {
      agent_id: agentId("quick"),
      after_seconds: 60,
    })) as Run;
    const res = await t.call("POST", `/threads/${threadId}/runs/${run.run_id}/cancel`);
    expect(res.status).toBe(204);
    const stopped = await settledRun(t, run.run_id);
    expect(stopped.status).toBe("error");
    expect(stopped.segments).toEqual([]);
    expect(stopped.output).toMatchObject({ errcode: 499, description: "run was cancelled" });
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread).toMatchObject({ status: "idle", values: {} });
    // The thread is free again.
    const next = await post(t, `/threads/${threadId}/runs/wait`, { agent_id: agentId("quick") });
    expect((next.run as Run).status).toBe("success");
  });

  it("POST …/cancel › on a finished run is a no-op 204", async () => {
    const threadId = await newThread(t);
    const wait = await post(t, `/threads/${threadId}/runs/wait`, { agent_id: agentId("quick") });
    const runId = (wait.run as Run).run_id;
    for (const action of ["interrupt", "rollback"]) {
      const res = await t.call(
        "POST",
        `/threads/${threadId}/runs/${runId}/cancel?action=${action}&wait=true`,
      );
      expect(res.status).toBe(204);
    }
    const after = await t.storage.getRun(runId);
    expect(after?.status).toBe("success");
    expect(after?.output).toEqual(wait.output);
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread.values).toEqual({ quick: true });
  });

  it("POST …/cancel › ends an interrupted run as cancelled; it can no longer be resumed", async () => {
    const threadId = await newThread(t);
    const wait = await post(t, `/threads/${threadId}/runs/wait`, { agent_id: agentId("asks") });
    const runId = (wait.run as Run).run_id;
    expect((wait.run as Run).status).toBe("interrupted");
    const res = await t.call("POST", `/threads/${threadId}/runs/${runId}/cancel?wait=true`);
    expect(res.status).toBe(204);
    const run = await t.storage.getRun(runId);
    expect(run).toMatchObject({ status: "error", interrupts: [] });
    expect(run?.output).toMatchObject({ errcode: 499, description: "run was cancelled" });
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread).toMatchObject({ status: "idle", values: { asked: true } });
    const resume = await t.call("POST", `/threads/${threadId}/runs/${runId}`, { approval: {} });
    expect(resume.status).toBe(409);
  });

  it("POST …/cancel › 404 for an unknown run, 422 for a bad action", async () => {
    const threadId = await newThread(t);
    const unknown = "0f0e0d0c-0b0a-4908-8706-050403020100";
    const res = await t.call("POST", `/threads/${threadId}/runs/${unknown}/cancel`);
    expect(res.status).toBe(404);
    expect(res.body).toBe(`run ${unknown} not found`);
    const bad = await t.call("POST", `/runs/${unknown}/cancel?action=explode`);
    expect(bad.status).toBe(422);
    expect(bad.body).toContain("querystring/action must be equal to one of the allowed values");
  });
});
