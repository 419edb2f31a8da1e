import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { finished, progressScript, snapshot, started } from "../runs/helpers.js";
import { api, eventually, inBatches, killAll, startCli, workspace } from "./cli.js";

afterEach(killAll);

type Run = { run_id: string; thread_id: string; status: string; output?: Record<string, unknown> };
type Checkpoint = { checkpoint: { checkpoint_id: string } };

/**
 * A run of ~6 s: 80 steps, each a state snapshot and a step checkpoint, 25 ms per event. It must
 * still be running at the kill, after the 150 runs are created and every slow one has
 * checkpointed (more than 5 s on a busy 2-core machine, see QUEUED_AFTER_SECONDS); at ~3 s the
 * first ones could finish before it.
 */
const slowScript = progressScript(80);
const config = {
  server: { maxConcurrentRuns: 200, keepAliveSeconds: 0 },
  agents: [
    {
      name: "fast",
      version: "1.0.0",
      description: "finishes at once",
      adapter: { type: "scripted", script: [started, snapshot({ done: true }), finished()] },
      limits: { maxConcurrentRuns: 50 },
    },
    {
      name: "slow",
      version: "1.0.0",
      description: "takes a few seconds; not safe to run twice",
      adapter: { type: "scripted", script: slowScript, delayMs: 25 },
      limits: { maxConcurrentRuns: 100 },
    },
    {
      name: "slow-retry",
      version: "1.0.0",
      description: "takes a few seconds; safe to run twice",
      adapter: { type: "scripted", script: slowScript, delayMs: 25 },
      limits: { maxConcurrentRuns: 100 },
      retryOnRestart: true,
    },
  ],
};
const id = (name: string) => agentIdFor(name, "1.0.0");

const COUNTS = { finished: 40, executing: 40, retried: 30, queued: 40 };
/**
 * The queued runs' start delay: it must outlast creating 150 runs and waiting for the slow ones
 * to checkpoint, which took more than 5 s on a busy 2-core machine (some "queued" runs had
 * already started by the kill).
 */
const QUEUED_AFTER_SECONDS = 20;

describe("crash safety", () => {
  it("after SIGKILL mid-run and a restart on the same SQLite file, nothing finished is lost and every run is resolved", async () => {
    const { configPath, db } = workspace(config);
    const args = ["serve", "--config", configPath, "--port", "0", "--db", db];
    const first = startCli(args);
    const base = await first.listening;

    const thread = async () =>
      (await api<{ thread_id: string }>(base, "POST", "/threads", { metadata: { crash: true } }))
        .body.thread_id;
    const create =
      (agent: string, extra: Record<string, unknown> = {}) =>
      async () => {
        const threadId = await thread();
        const res = await api<Run>(base, "POST", `/threads/${threadId}/runs`, {
          agent_id: id(agent),
          input: {},
          ...extra,
        });
        expect(res.status).toBe(200);
        return res.body;
      };
    const finishedRuns = await inBatches(
      Array.from({ length: COUNTS.finished }, () => create("fast")),
      20,
    );
    const executing = await inBatches(
      Array.from({ length: COUNTS.executing }, () => create("slow")),
      20,
    );
    const retried = await inBatches(
      Array.from({ length: COUNTS.retried }, () => create("slow-retry")),
      20,
    );
    const queued = await inBatches(
      Array.from({ length: COUNTS.queued }, () =>
        create("fast", { after_seconds: QUEUED_AFTER_SECONDS }),
      ),
      20,
    );
    const all = [...finishedRuns, ...executing, ...retried, ...queued];

    // Kill once the fast runs are done and every slow run has written a few step checkpoints.
    const getRun = (run: Run) =>
      api<Run>(base, "GET", `/threads/${run.thread_id}/runs/${run.run_id}`);
    await eventually(
      () => Promise.all(finishedRuns.map(getRun)),
      (runs) => runs.every((r) => r.body.status === "success"),
      10_000,
      "the fast runs to finish",
    );
    const history = (run: Run) =>
      api<Checkpoint[]>(base, "GET", `/threads/${run.thread_id}/history?limit=1000`);
    await eventually(
      () => Promise.all([...executing, ...retried].map(history)),
      (lists) => lists.every((l) => l.body.length >= 3),
      10_000,
      "every slow run to checkpoint",
    );
    const before = {
      runs: new Map(
        (await Promise.all(finishedRuns.map(getRun))).map((r) => [r.body.run_id, r.body]),
      ),
      checkpoints: new Map(
        await Promise.all(
          all.map(
            async (run) =>
              [
                run.thread_id,
                (await history(run)).body.map((c) => c.checkpoint.checkpoint_id),
              ] as const,
          ),
        ),
      ),
      stillRunning: (await Promise.all([...executing, ...retried].map(getRun))).filter(
        (r) => r.body.status === "pending",
      ).length,
      queued: (await Promise.all(queued.map(getRun))).filter((r) => r.body.status === "pending")
        .length,
    };
    expect(before.stillRunning).toBe(COUNTS.executing + COUNTS.retried);
    expect(before.queued).toBe(COUNTS.queued);

    first.child.kill("SIGKILL");
    expect(await first.exited).toBeNull();

    const second = startCli(args);
    const base2 = await second.listening;
    const get = (run: Run) =>
      api<Run>(base2, "GET", `/threads/${run.thread_id}/runs/${run.run_id}`).then((r) => r.body);

    // Every thread and every checkpoint seen before the kill is still there.
    let checkpointsKept = 0;
    for (const run of all) {
      const threadRes = await api(base2, "GET", `/threads/${run.thread_id}`);
      expect(threadRes.status).toBe(200);
      const after = new Set(
        (
          await api<Checkpoint[]>(base2, "GET", `/threads/${run.thread_id}/history?limit=1000`)
        ).body.map((c) => c.checkpoint.checkpoint_id),
      );
      for (const checkpoint of before.checkpoints.get(run.thread_id)!) {
        expect(after.has(checkpoint)).toBe(true);
        checkpointsKept++;
      }
    }
    // Finished runs are unchanged.
    for (const run of finishedRuns) {
      expect(await get(run)).toEqual(before.runs.get(run.run_id));
    }
    // Runs cut short: failed saying why, or (retryOnRestart) run again to success; queued runs run.
    const failed = await Promise.all(
      executing.map(
        async (run) =>
          (
            await api<{ run: Run; output: unknown }>(
              base2,
              "GET",
              `/threads/${run.thread_id}/runs/${run.run_id}/wait`,
            )
          ).body,
      ),
    );
    for (const { run, output } of failed) {
      expect(run.status).toBe("error");
      expect(output).toMatchObject({
        errcode: 503,
        description: "the server restarted while the run was executing; the run did not complete",
      });
    }
    const rest = await eventually(
      () => Promise.all([...retried, ...queued].map(get)),
      (runs) => runs.every((r) => r.status !== "pending"),
      QUEUED_AFTER_SECONDS * 1000 + 20_000,
      "retried and queued runs to finish",
    );
    expect(rest.map((r) => r.status)).toEqual(Array(rest.length).fill("success"));

    second.child.kill("SIGTERM");
    expect(await second.exited).toBe(0);

    const file = new Database(db, { readonly: true });
    try {
      expect(file.pragma("integrity_check", { simple: true })).toBe("ok");
      const stored = file.prepare("SELECT count(*) AS n FROM runs").get() as { n: number };
      expect(stored.n).toBe(all.length);
    } finally {
      file.close();
    }
    console.log(
      `crash: ${all.length} runs (${COUNTS.finished} finished, ${before.stillRunning} executing of which ${COUNTS.retried} retryOnRestart, ${before.queued} queued) and ${all.length} threads, SIGKILL; after restart: ${checkpointsKept} checkpoints kept, ${failed.length} failed as restarted, ${rest.length} completed, integrity ok, nothing lost`,
    );
  }, 120_000);
});
