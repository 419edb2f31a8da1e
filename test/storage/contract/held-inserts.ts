import { expect, it } from "vitest";
import type { InsertRunOptions, RunPatch } from "../../../src/storage/types.js";
import {
  claimFor,
  expectDomainError,
  id,
  newRun,
  type StorageFactory,
  seqFrame,
  useStorage,
} from "./helpers.js";

// `Storage.insertRunHeld` (src/storage/held-inserts.ts and each backend's held-runs.ts): a
// stateless run its insert claims executes while its insert is held, and a run whose end comes
// first is written once.

const OWNER = "replica-1";

function stateless(options: Partial<InsertRunOptions> = {}) {
  const run = newRun(id(), { kind: "stateless", metadata: { team: "blue" } });
  const insertOptions: InsertRunOptions = {
    reject_if_busy: false,
    create_hidden_thread: true,
    claim: claimFor(OWNER),
    ...options,
  };
  return { run, insertOptions };
}

const success = (runId: string, segments: RunPatch["segments"]): RunPatch => ({
  status: "success",
  output: { type: "success", run_id: runId, values: { answer: "x".repeat(300_000) } },
  interrupts: [],
  resume: null,
  segments,
  owner: null,
  lease_expires_at: null,
  cancel_requested: null,
});

export function describeHeldInserts(factory: StorageFactory): void {
  const context = useStorage(factory);

  it("hands back the record it commits, invisible until then", async () => {
    const storage = context.storage;
    const { run, insertOptions } = stateless();
    const held = storage.insertRunHeld!(run, insertOptions)!;
    expect(held.run).toMatchObject({ status: "pending", owner: OWNER, lease_epoch: 1 });
    expect(await storage.getRun(run.run_id)).toBeNull();
    expect(await storage.getThread(run.thread_id)).toBeNull();
    expect(await held.committed).toBe(held.run);
    expect(await storage.getRun(run.run_id)).toEqual(held.run);
    expect((await storage.getThread(run.thread_id))?.status).toBe("busy");
  });

  it("writes a run whose end comes first once, ended, with its frames and no hidden thread", async () => {
    const storage = context.storage;
    const { run, insertOptions } = stateless();
    const before = storage.writeCounts();
    const held = storage.insertRunHeld!(run, insertOptions)!;
    const order: string[] = [];
    const committed = held.committed.then(() => order.push("inserted"));
    const patch = success(run.run_id, [
      { ...held.run.segments[0]!, ended_at: new Date().toISOString() },
    ]);
    const finished = await storage.finishRun(
      run.run_id,
      patch,
      { delete: true },
      { owner: OWNER, epoch: 1 },
      { frames: [seqFrame(run.run_id, 1), seqFrame(run.run_id, 2, "final")] },
    );
    order.push("finished");
    await committed;
    expect(order).toEqual(["inserted", "finished"]);
    expect(finished).toMatchObject({
      status: "success",
      thread_id: null,
      last_seq: 2,
      owner: null,
    });
    expect(await storage.getRun(run.run_id)).toEqual(finished);
    expect(await storage.getThread(run.thread_id)).toBeNull();
    expect((await storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1, 2]);
    expect(await storage.searchRuns({ metadata: { team: "blue" }, limit: 10, offset: 0 })).toEqual([
      finished,
    ]);
    const after = storage.writeCounts();
    expect(after.commits - before.commits).toBe(1);
    expect(after.statements.update - before.statements.update).toBe(0);
    expect(after.statements.delete - before.statements.delete).toBe(0);
  });

  it("queues the insert ahead of another write of the run, which then finds the row", async () => {
    const storage = context.storage;
    const { run, insertOptions } = stateless();
    const held = storage.insertRunHeld!(run, insertOptions)!;
    await storage.appendFrames([seqFrame(run.run_id, 1)], { owner: OWNER, epoch: 1 });
    await held.committed;
    const patch = success(run.run_id, held.run.segments);
    const finished = await storage.finishRun(
      run.run_id,
      patch,
      { delete: true },
      {
        owner: OWNER,
        epoch: 1,
      },
    );
    expect(finished).toMatchObject({ status: "success", thread_id: null, last_seq: 1 });
    expect(await storage.getThread(run.thread_id)).toBeNull();
  });

  it("queues the insert ahead of a write of its hidden thread, which then finds it", async () => {
    const storage = context.storage;
    const { run, insertOptions } = stateless();
    const held = storage.insertRunHeld!(run, insertOptions)!;
    await storage.setThreadStatus(run.thread_id, "idle");
    expect((await storage.getThread(run.thread_id))?.status).toBe("idle");
    expect(await storage.getRun(run.run_id)).toEqual(held.run);
  });

  it("does not merge an end under another claim: it is refused as before", async () => {
    const storage = context.storage;
    const { run, insertOptions } = stateless();
    const held = storage.insertRunHeld!(run, insertOptions)!;
    const patch = success(run.run_id, held.run.segments);
    const end = storage.finishRun(
      run.run_id,
      patch,
      { delete: true },
      { owner: "other", epoch: 2 },
    );
    await held.committed;
    await expect(end).rejects.toMatchObject({
      code: "conflict",
      details: { reason: "claim_lost" },
    });
    expect((await storage.getRun(run.run_id))?.status).toBe("pending");
  });

  it("inserts a held run after a while when nothing else comes", async () => {
    const storage = context.storage;
    const { run, insertOptions } = stateless();
    const held = storage.insertRunHeld!(run, insertOptions)!;
    // Nothing else comes: only the hold's end can queue the insert.
    expect(await held.committed).toBe(held.run);
    expect(await storage.getRun(run.run_id)).toEqual(held.run);
  });

  it("fails a held insert as insertRun would, and its merged end with it, writing nothing", async () => {
    const storage = context.storage;
    const first = stateless();
    await storage.insertRun(first.run, first.insertOptions);
    // The same run id again: the insert is refused.
    const again = newRun(id(), { kind: "stateless", run_id: first.run.run_id });
    const held = storage.insertRunHeld!(again, {
      reject_if_busy: false,
      create_hidden_thread: true,
      claim: claimFor(OWNER),
    })!;
    const end = storage.finishRun(
      again.run_id,
      success(again.run_id, held.run.segments),
      { delete: true },
      { owner: OWNER, epoch: 1 },
      { frames: [seqFrame(again.run_id, 1, "final")] },
    );
    await expectDomainError(held.committed, "conflict");
    await expectDomainError(end, "conflict");
    expect(await storage.getThread(again.thread_id)).toBeNull();
    expect(await storage.readFrames(again.run_id, 0)).toEqual([]);
  });

  it("holds only what it can tell without a read", async () => {
    const storage = context.storage;
    const { run } = stateless();
    expect(
      storage.insertRunHeld!(run, { reject_if_busy: false, create_hidden_thread: true }),
    ).toBeUndefined();
    expect(
      storage.insertRunHeld!(run, {
        reject_if_busy: false,
        create_hidden_thread: true,
        claim: claimFor(OWNER),
        queue_limit: 5,
      }),
    ).toBeUndefined();
    const later = { ...run, start_after: new Date(Date.now() + 60_000).toISOString() };
    expect(
      storage.insertRunHeld!(later, {
        reject_if_busy: false,
        create_hidden_thread: true,
        claim: claimFor(OWNER),
      }),
    ).toBeUndefined();
  });
}
