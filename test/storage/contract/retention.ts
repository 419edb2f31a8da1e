import { describe, expect, it } from "vitest";
import type { RetentionBatch } from "../../../src/storage/retention.js";
import type {
  RunFrame,
  RunPatch,
  RunRecord,
  RunStatus,
  Storage,
  ThreadRecord,
} from "../../../src/storage/types.js";
import {
  id,
  makeRun,
  makeThread,
  messages,
  PAST,
  type StorageFactory,
  tick,
  useStorage,
} from "./helpers.js";

const frame = (runId: string, seq: number, mode: RunFrame["mode"] = "custom"): RunFrame => ({
  run_id: runId,
  seq,
  mode,
  data: JSON.stringify({ seq, text: "x".repeat(100) }),
});

/** How the engine ends a run: status and a complete output. */
const ended = (status: RunStatus = "success"): RunPatch => ({
  status,
  output:
    status === "interrupted"
      ? { type: "interrupt", interrupt: {} }
      : { type: "result", values: { done: true }, messages: messages("hi", "hello") },
});

/** A run's frames as the engine stores them: values, custom, then the final frame last. */
async function withFrames(storage: Storage, runId: string, count = 4): Promise<void> {
  const frames = Array.from({ length: count - 1 }, (_, i) =>
    frame(runId, i + 1, i % 2 === 0 ? "values" : "custom"),
  );
  frames.push(frame(runId, count, "final"));
  await storage.appendFrames(frames);
}

async function statelessRun(
  storage: Storage,
  finish: "delete" | "keep" | RunStatus | "pending" = "delete",
): Promise<RunRecord> {
  const run = await storage.insertRun(
    {
      run_id: id(),
      thread_id: id(),
      agent_id: "agent-a",
      kind: "stateless",
      creation: { input: {} },
      metadata: {},
      start_after: PAST,
    },
    { reject_if_busy: false, create_hidden_thread: true },
  );
  await withFrames(storage, run.run_id);
  if (finish === "pending") return run;
  if (finish === "delete") return storage.finishRun(run.run_id, ended(), { delete: true });
  // on_completion: keep (or an interrupted run): the hidden thread stays, with a checkpoint.
  await storage.addCheckpoint(run.thread_id!, {
    checkpoint_id: id(),
    values: { n: 1 },
    messages: messages("kept"),
    metadata: { run_id: run.run_id },
  });
  return storage.updateRun(run.run_id, ended(finish === "keep" ? "success" : finish));
}

async function addCheckpoints(storage: Storage, threadId: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    await storage.addCheckpoint(threadId, {
      checkpoint_id: id(),
      values: { step: i },
      messages: messages(`turn ${i}`),
      metadata: { source: "run" },
    });
  }
}

/** A moment between what came before and what comes after. */
async function cutoff(): Promise<string> {
  await tick();
  const at = new Date().toISOString();
  await tick();
  return at;
}

/** Runs batches of a rule until one is short, returning each batch. */
async function drain(
  batch: (cursor: string | undefined) => Promise<RetentionBatch>,
  limit: number,
): Promise<RetentionBatch[]> {
  const batches: RetentionBatch[] = [];
  let cursor: string | undefined;
  for (;;) {
    const result = await batch(cursor);
    batches.push(result);
    cursor = result.cursor;
    if (result.handled < limit) return batches;
  }
}

export function describeRetention(factory: StorageFactory): void {
  const context = useStorage(factory);

  describe("deleteFinishedStatelessRuns", () => {
    it("deletes stateless runs finished before the cutoff, with frames, webhooks, thread and checkpoints", async () => {
      const { storage } = context;
      const deleted = await statelessRun(storage, "delete");
      const kept = await statelessRun(storage, "keep");
      const failed = await statelessRun(storage, "error");
      await storage.enqueueWebhook({
        delivery_id: id(),
        run_id: deleted.run_id,
        url: "https://hooks.example.com/acp",
        body: "{}",
        attempts: 0,
        next_attempt_at: PAST,
        state: "pending",
        last_error: null,
        created_at: PAST,
        stream: deleted.run_id,
        target: "https://hooks.example.com",
      });
      // Untouched: still pending, interrupted (waits for an answer), stateful, and too recent.
      const pending = await statelessRun(storage, "pending");
      const interrupted = await statelessRun(storage, "interrupted");
      const thread = await makeThread(storage);
      const statefulRun = await makeRun(storage, thread.thread_id);
      await withFrames(storage, statefulRun.run_id);
      const stateful = await storage.updateRun(statefulRun.run_id, ended());
      const before = await cutoff();
      const recent = await statelessRun(storage, "delete");

      const batch = await storage.retention().deleteFinishedStatelessRuns(before, 100);
      expect(batch.handled).toBe(3);
      expect(batch.removed).toMatchObject({ runs: 3, threads: 2, checkpoints: 2, frames: 12 });
      expect(batch.removed.bytes).toBeGreaterThan(12 * 100);
      for (const run of [deleted, kept, failed]) {
        expect(await storage.getRun(run.run_id)).toBeNull();
        expect(await storage.readFrames(run.run_id, 0)).toEqual([]);
      }
      expect(await storage.getWebhooksOfRun(deleted.run_id)).toEqual([]);
      expect(await storage.getThread(kept.thread_id!)).toBeNull();
      expect(await storage.getThread(failed.thread_id!)).toBeNull();

      for (const run of [pending, interrupted, stateful, recent]) {
        const now = await storage.getRun(run.run_id);
        expect(now).toMatchObject({ status: run.status, last_seq: 4 });
        expect(await storage.readFrames(run.run_id, 0)).toHaveLength(4);
      }
      expect(await storage.getThread(pending.thread_id!)).not.toBeNull();
      expect(await storage.getThread(interrupted.thread_id!)).not.toBeNull();
      expect(await storage.getThread(thread.thread_id)).not.toBeNull();
      expect((await storage.retention().deleteFinishedStatelessRuns(before, 100)).handled).toBe(0);
    });

    it("works in batches of the given size, oldest first", async () => {
      const { storage } = context;
      const runs: RunRecord[] = [];
      for (let i = 0; i < 5; i++) {
        runs.push(await statelessRun(storage, "delete"));
        await tick();
      }
      const before = await cutoff();
      const first = await storage.retention().deleteFinishedStatelessRuns(before, 2);
      expect(first.handled).toBe(2);
      expect(await storage.getRun(runs[0]!.run_id)).toBeNull();
      expect(await storage.getRun(runs[1]!.run_id)).toBeNull();
      expect(await storage.getRun(runs[2]!.run_id)).not.toBeNull();
      const rest = await drain(() => storage.retention().deleteFinishedStatelessRuns(before, 2), 2);
      expect(rest.map((b) => b.handled)).toEqual([2, 1]);
      for (const run of runs) expect(await storage.getRun(run.run_id)).toBeNull();
    });
  });

  describe("compactFinishedRunFrames", () => {
    it("keeps only the final frame of runs finished before the cutoff, at its own seq", async () => {
      const { storage } = context;
      const thread = await makeThread(storage);
      const run = await makeRun(storage, thread.thread_id);
      await withFrames(storage, run.run_id, 6);
      const finished = await storage.updateRun(run.run_id, ended());
      const before = await cutoff();

      const batch = await storage.retention().compactFinishedRunFrames(before, 100);
      expect(batch.handled).toBe(1);
      expect(batch.removed).toMatchObject({ frames: 5, runs: 0, threads: 0, checkpoints: 0 });
      expect(batch.removed.bytes).toBeGreaterThan(5 * 100);

      // A replay from the start, or from any position before the end, gets the final frame.
      const final = frame(run.run_id, 6, "final");
      expect(await storage.readFrames(run.run_id, 0)).toEqual([final]);
      expect(await storage.readFrames(run.run_id, 3)).toEqual([final]);
      expect(await storage.readFrames(run.run_id, 6)).toEqual([]);
      // The run itself is untouched: same outcome, same last_seq, same last update.
      expect(await storage.getRun(run.run_id)).toEqual(finished);
      // Each run is handled once.
      expect((await storage.retention().compactFinishedRunFrames(before, 100)).handled).toBe(0);
    });

    it("leaves running, pending, interrupted and recent runs alone, and runs without a final frame", async () => {
      const { storage } = context;
      const make = async () => {
        const thread = await makeThread(storage);
        const run = await makeRun(storage, thread.thread_id);
        await withFrames(storage, run.run_id);
        return run;
      };
      const running = await make();
      expect((await storage.claimRun("replica-b", 60_000, new Date()))?.run_id).toBe(
        running.run_id,
      );
      const pending = await make();
      const interrupted = await storage.updateRun((await make()).run_id, ended("interrupted"));
      // Its final frame could not be stored: the frames are all that tells how it went.
      const noFinal = await make();
      await storage.appendFrames([frame(noFinal.run_id, 5, "custom")]);
      await storage.updateRun(noFinal.run_id, ended("error"));
      const before = await cutoff();
      const recent = await storage.updateRun((await make()).run_id, ended("timeout"));

      const batch = await storage.retention().compactFinishedRunFrames(before, 100);
      expect(batch.handled).toBe(1);
      expect(batch.removed.frames).toBe(0);
      expect(await storage.readFrames(noFinal.run_id, 0)).toHaveLength(5);
      for (const run of [pending, running, interrupted, recent]) {
        expect(await storage.readFrames(run.run_id, 0)).toHaveLength(4);
      }
      expect((await storage.getRun(running.run_id))?.owner).toBe("replica-b");
    });

    it("works in batches of the given size", async () => {
      const { storage } = context;
      const thread = await makeThread(storage);
      const runs: RunRecord[] = [];
      for (let i = 0; i < 5; i++) {
        const run = await makeRun(storage, thread.thread_id);
        await withFrames(storage, run.run_id);
        runs.push(await storage.updateRun(run.run_id, ended()));
      }
      const before = await cutoff();
      const batches = await drain(() => storage.retention().compactFinishedRunFrames(before, 2), 2);
      expect(batches.map((b) => b.handled)).toEqual([2, 2, 1]);
      for (const run of runs) {
        expect((await storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([4]);
      }
    });
  });

  describe("sweepIdleThreads", () => {
    /** A thread with two checkpoints and a finished run with frames. */
    async function usedThread(metadata: Record<string, unknown> = {}): Promise<{
      thread: ThreadRecord;
      run: RunRecord;
    }> {
      const { storage } = context;
      const thread = await makeThread(storage, metadata);
      await addCheckpoints(storage, thread.thread_id, 2);
      const run = await makeRun(storage, thread.thread_id);
      await withFrames(storage, run.run_id);
      await storage.updateRun(run.run_id, ended());
      await storage.setThreadStatus(thread.thread_id, "idle");
      return { thread, run };
    }

    it("deletes idle threads with their runs, frames and checkpoints, and nothing else", async () => {
      const { storage } = context;
      const idle = await usedThread({ owner: "someone" });
      const { thread: neverRun } = { thread: await makeThread(storage) };
      // Untouched: opted out, a run pending, a run updated after the cutoff, a hidden thread.
      const optedOut = await usedThread({ retention: "keep" });
      const withPending = await usedThread();
      const pending = await makeRun(storage, withPending.thread.thread_id);
      const withLateRun = await usedThread();
      const lateRun = await makeRun(storage, withLateRun.thread.thread_id);
      const hidden = await makeThread(storage, {}, true);
      const before = await cutoff();
      await storage.updateRun(lateRun.run_id, ended());
      const recent = await usedThread();

      const batch = await storage.retention().sweepIdleThreads(before, "delete", 100);
      expect(batch.handled).toBe(5);
      expect(batch.removed).toMatchObject({ threads: 2, runs: 1, checkpoints: 2, frames: 4 });
      expect(batch.removed.bytes).toBeGreaterThan(4 * 100);
      expect(await storage.getThread(idle.thread.thread_id)).toBeNull();
      expect(await storage.getThread(neverRun.thread_id)).toBeNull();
      expect(await storage.getRun(idle.run.run_id)).toBeNull();
      expect(await storage.readFrames(idle.run.run_id, 0)).toEqual([]);

      for (const kept of [optedOut, withPending, withLateRun, recent]) {
        expect(await storage.getThread(kept.thread.thread_id)).not.toBeNull();
        expect(await storage.getRun(kept.run.run_id)).not.toBeNull();
        expect(await storage.listCheckpoints(kept.thread.thread_id, { limit: 10 })).toHaveLength(2);
      }
      expect((await storage.getRun(pending.run_id))?.status).toBe("pending");
      expect(await storage.getThread(hidden.thread_id)).not.toBeNull();
    });

    it("keep-latest keeps the thread, its runs and its current checkpoint only", async () => {
      const { storage } = context;
      const { thread, run } = await usedThread();
      await addCheckpoints(storage, thread.thread_id, 2);
      const current = (await storage.getThread(thread.thread_id))!;
      const optedOut = await usedThread({ retention: "keep" });
      const before = await cutoff();

      const batch = await storage.retention().sweepIdleThreads(before, "keep-latest", 100);
      expect(batch.removed).toMatchObject({ threads: 0, runs: 0, checkpoints: 3, frames: 0 });
      const after = (await storage.getThread(thread.thread_id))!;
      expect(after).toMatchObject({
        values: current.values,
        messages: current.messages,
        checkpoint_id: current.checkpoint_id,
      });
      const left = await storage.listCheckpoints(thread.thread_id, { limit: 10 });
      expect(left.map((c) => c.checkpoint_id)).toEqual([current.checkpoint_id]);
      expect(left[0]!.parent_checkpoint_id).toBeNull();
      expect(await storage.getRun(run.run_id)).not.toBeNull();
      expect(await storage.readFrames(run.run_id, 0)).toHaveLength(4);
      expect(await storage.listCheckpoints(optedOut.thread.thread_id, { limit: 10 })).toHaveLength(
        2,
      );
      // Nothing more to remove on the next sweep.
      const again = await storage.retention().sweepIdleThreads(before, "keep-latest", 100);
      expect(again.removed.checkpoints).toBe(0);
    });

    it("goes through the old threads in batches, each looked at once, past opted-out ones", async () => {
      const { storage } = context;
      const threads: ThreadRecord[] = [];
      for (let i = 0; i < 5; i++) {
        threads.push(await makeThread(storage, i % 2 === 0 ? { retention: "keep" } : {}));
        await tick();
      }
      const before = await cutoff();
      const batches = await drain(
        (cursor) => storage.retention().sweepIdleThreads(before, "delete", 2, cursor),
        2,
      );
      expect(batches.map((b) => b.handled)).toEqual([2, 2, 1]);
      expect(batches.reduce((sum, b) => sum + b.removed.threads, 0)).toBe(2);
      const left = await Promise.all(threads.map((t) => storage.getThread(t.thread_id)));
      expect(left.map((t) => t !== null)).toEqual([true, false, true, false, true]);
    });
  });

  describe("exclusively", () => {
    it("runs one sweep at a time", async () => {
      const { storage } = context;
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      const first = storage.retention().exclusively(() => held);
      await tick();
      let ran = false;
      expect(
        await storage.retention().exclusively(async () => {
          ran = true;
        }),
      ).toBe(false);
      expect(ran).toBe(false);
      release();
      expect(await first).toBe(true);
      expect(await storage.retention().exclusively(async () => {})).toBe(true);
    });
  });
}
