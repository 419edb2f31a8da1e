import { describe, expect, it } from "vitest";
import type { RunRecord, RunStatus, Storage } from "../../../src/storage/types.js";
import {
  expectDomainError,
  id,
  makeRun,
  makeThread,
  messages,
  PAST,
  type StorageFactory,
  seqFrame,
  useStorage,
} from "./helpers.js";

const HOUR = 3_600_000;
const at = (ms: number) => new Date(Date.now() + ms).toISOString();

/** A stateless run on its hidden thread (with a checkpoint), with frames, ended as `status`. */
async function statelessRun(storage: Storage, status: RunStatus): Promise<RunRecord> {
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
  await storage.appendFrames([seqFrame(run.run_id, 1), seqFrame(run.run_id, 2, "final")]);
  await storage.addCheckpoint(run.thread_id!, {
    checkpoint_id: id(),
    values: { n: 1 },
    messages: messages("kept"),
    metadata: { run_id: run.run_id },
  });
  if (status === "pending") return run;
  return storage.updateRun(run.run_id, {
    status,
    output: { type: "result", values: { done: true }, messages: messages("hi", "hello") },
  });
}

export function describeRunExpiries(factory: StorageFactory): void {
  const context = useStorage(factory);

  it("stores a run's expiry, reads it back, replaces it; an unknown run is not_found", async () => {
    const { storage } = context;
    const retention = storage.retention();
    const run = await statelessRun(storage, "success");
    const other = await statelessRun(storage, "success");
    const first = at(HOUR);
    await retention.setRunExpiry(run.run_id, first);
    expect(await retention.runExpiries([run.run_id, other.run_id, "nobody"])).toEqual(
      new Map([[run.run_id, first]]),
    );
    const later = at(2 * HOUR);
    await retention.setRunExpiry(run.run_id, later);
    expect(await retention.runExpiries([run.run_id])).toEqual(new Map([[run.run_id, later]]));
    expect(await retention.runExpiries([])).toEqual(new Map());
    await expectDomainError(retention.setRunExpiry(id(), first), "not_found");
  });

  it("deletes finished runs past their expiry with all they stored, and nothing else", async () => {
    const { storage } = context;
    const retention = storage.retention();
    const expired = await statelessRun(storage, "success");
    const failed = await statelessRun(storage, "error");
    const notYet = await statelessRun(storage, "success");
    const withoutExpiry = await statelessRun(storage, "success");
    const pending = await statelessRun(storage, "pending");
    const interrupted = await statelessRun(storage, "interrupted");
    const thread = await makeThread(storage);
    const onThread = await makeRun(storage, thread.thread_id);
    await storage.updateRun(onThread.run_id, { status: "success" });
    for (const run of [expired, failed, pending, interrupted, onThread]) {
      await retention.setRunExpiry(run.run_id, at(-HOUR));
    }
    await retention.setRunExpiry(notYet.run_id, at(HOUR));

    const batch = await retention.deleteExpiredRuns(new Date().toISOString(), 100);
    expect(batch.handled).toBe(3);
    expect(batch.removed).toMatchObject({ runs: 3, threads: 2, checkpoints: 2, frames: 4 });
    expect(batch.removed.bytes).toBeGreaterThan(0);
    for (const gone of [expired, failed, onThread]) {
      expect(await storage.getRun(gone.run_id)).toBeNull();
      expect(await storage.readFrames(gone.run_id, 0)).toEqual([]);
    }
    expect(await storage.getThread(expired.thread_id!)).toBeNull();
    // A thread that is not the run's hidden one stays.
    expect(await storage.getThread(thread.thread_id)).not.toBeNull();
    for (const kept of [notYet, withoutExpiry, pending, interrupted]) {
      expect((await storage.getRun(kept.run_id))?.run_id).toBe(kept.run_id);
    }
    expect([...(await retention.runExpiries([expired.run_id, pending.run_id])).keys()]).toEqual([
      pending.run_id,
    ]);

    // A run still pending (or waiting for input) at its expiry goes once it has finished.
    expect((await retention.deleteExpiredRuns(new Date().toISOString(), 100)).handled).toBe(0);
    await storage.updateRun(pending.run_id, { status: "timeout" });
    const next = await retention.deleteExpiredRuns(new Date().toISOString(), 100);
    expect(next.removed.runs).toBe(1);
    expect(await storage.getRun(pending.run_id)).toBeNull();
    expect((await storage.getRun(interrupted.run_id))?.status).toBe("interrupted");
  });

  it("a run deleted otherwise takes its expiry along", async () => {
    const { storage } = context;
    const retention = storage.retention();
    const run = await statelessRun(storage, "success");
    await retention.setRunExpiry(run.run_id, at(-HOUR));
    await storage.deleteRun(run.run_id);
    expect(await retention.runExpiries([run.run_id])).toEqual(new Map());
    expect((await retention.deleteExpiredRuns(new Date().toISOString(), 100)).handled).toBe(0);
  });

  it("deletes in batches, soonest expiry first; batches at once delete each run once", async () => {
    const { storage } = context;
    const retention = storage.retention();
    const runs: RunRecord[] = [];
    for (let i = 0; i < 7; i++) {
      const run = await statelessRun(storage, "success");
      await retention.setRunExpiry(run.run_id, at(-HOUR + i * 1000));
      runs.push(run);
    }
    const now = new Date().toISOString();
    const first = await retention.deleteExpiredRuns(now, 2);
    expect(first.handled).toBe(2);
    expect(await storage.getRun(runs[0]!.run_id)).toBeNull();
    expect(await storage.getRun(runs[1]!.run_id)).toBeNull();
    expect(await storage.getRun(runs[2]!.run_id)).not.toBeNull();
    // As two replicas sweeping together would: neither fails, no run is counted twice.
    const together = await Promise.all([
      retention.deleteExpiredRuns(now, 3),
      retention.deleteExpiredRuns(now, 3),
      retention.deleteExpiredRuns(now, 3),
    ]);
    const removed = together.reduce((sum, batch) => sum + batch.removed.runs, 0);
    expect(removed).toBe(5);
    for (const run of runs) expect(await storage.getRun(run.run_id)).toBeNull();
  });
}
