import { expect, it } from "vitest";
import type { SqliteStorage } from "../../../src/storage/index.js";
import type {
  CreateThreadInput,
  InsertRunOptions,
  NewCheckpoint,
  RunPatch,
} from "../../../src/storage/types.js";
import {
  claimFor,
  expectDomainError,
  id,
  messages,
  newRun,
  type StorageFactory,
  seqFrame,
  useStorage,
} from "./helpers.js";

// `Storage.insertRunOnNewThreadHeld` (src/storage/held-inserts.ts, the backend's held-runs.ts):
// a stateful run on a new thread its creator alone knows executes while the thread's and the
// run's insert is held; a run whose end comes first is written once with its thread.

const OWNER = "replica-1";

function onNewThread() {
  const threadId = id();
  const thread: CreateThreadInput = {
    thread_id: threadId,
    metadata: { team: "blue" },
    if_exists: "do_nothing",
    principal: "user:a",
  };
  const run = newRun(threadId, { principal: "user:a", metadata: { team: "blue" } });
  const options: InsertRunOptions = {
    reject_if_busy: false,
    mark_thread_busy: true,
    claim: claimFor(OWNER),
  };
  return { threadId, thread, run, options };
}

const success = (runId: string, segments: RunPatch["segments"]): RunPatch => ({
  status: "success",
  output: { type: "success", run_id: runId, values: { answer: "hello" } },
  interrupts: [],
  resume: null,
  segments,
  owner: null,
  lease_expires_at: null,
  cancel_requested: null,
});

const checkpointOf = (runId: string): NewCheckpoint => ({
  checkpoint_id: id(),
  values: { answer: "hello" },
  messages: messages("hi", "hello"),
  metadata: { source: "loop", run_id: runId },
});

export function describeHeldNewThreadRuns(factory: StorageFactory): void {
  const context = useStorage(factory);

  it("hands back the run and its thread as the insert writes them, invisible until committed", async () => {
    const storage = context.storage;
    const { threadId, thread, run, options } = onNewThread();
    const held = storage.insertRunOnNewThreadHeld!(thread, run, options)!;
    expect(held.run).toMatchObject({
      kind: "stateful",
      thread_id: threadId,
      status: "pending",
      owner: OWNER,
      lease_epoch: 1,
      checkpoint_before: null,
    });
    expect(held.thread).toMatchObject({ thread_id: threadId, status: "busy", hidden: false });
    expect(await storage.getRun(run.run_id)).toBeNull();
    expect(await storage.getThread(threadId)).toBeNull();
    expect(await held.committed).toBe(held.run);
    expect(await storage.getRun(run.run_id)).toEqual(held.run);
    const { created_at, updated_at, ...stored } = (await storage.getThread(threadId))!;
    const { created_at: _c, updated_at: _u, ...planned } = held.thread!;
    expect(stored).toEqual(planned);
  });

  it("writes a run whose end comes first once, with its thread, checkpoint and frames", async () => {
    const storage = context.storage;
    const { threadId, thread, run, options } = onNewThread();
    const before = storage.writeCounts();
    const held = storage.insertRunOnNewThreadHeld!(thread, run, options)!;
    const checkpoint = checkpointOf(run.run_id);
    const finished = await storage.finishRun(
      run.run_id,
      success(run.run_id, [{ ...held.run.segments[0]!, ended_at: new Date().toISOString() }]),
      { status: "idle" },
      { owner: OWNER, epoch: 1 },
      { frames: [seqFrame(run.run_id, 1), seqFrame(run.run_id, 2, "final")], checkpoint },
    );
    expect(storage.writeCounts().commits - before.commits).toBe(1);
    expect(finished).toMatchObject({
      status: "success",
      thread_id: threadId,
      last_seq: 2,
      owner: null,
      lease_expires_at: null,
    });
    expect(await storage.getRun(run.run_id)).toEqual(finished);
    expect(await storage.getThread(threadId)).toMatchObject({
      status: "idle",
      checkpoint_id: checkpoint.checkpoint_id,
      values: { answer: "hello" },
      messages: checkpoint.messages,
      metadata: { team: "blue" },
      principal: "user:a",
    });
    expect(
      (await storage.listCheckpoints(threadId, { limit: 10 })).map((c) => c.checkpoint_id),
    ).toEqual([checkpoint.checkpoint_id]);
    expect((await storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1, 2]);
    expect(
      await storage.searchRuns({
        thread_id: threadId,
        metadata: { team: "blue" },
        limit: 10,
        offset: 0,
      }),
    ).toEqual([finished]);
    expect(
      await storage.searchThreads({ metadata: { team: "blue" }, limit: 100, offset: 0 }),
    ).toContainEqual(expect.objectContaining({ thread_id: threadId }));
  });

  it("queues the insert ahead of a write of its thread, which then finds it", async () => {
    const storage = context.storage;
    const { threadId, thread, run, options } = onNewThread();
    const held = storage.insertRunOnNewThreadHeld!(thread, run, options)!;
    // Another creation of the same thread comes after the held one: it finds it.
    const again = await storage.createThread({ ...thread, if_exists: "do_nothing" });
    expect(again.created).toBe(false);
    expect(again.thread.status).toBe("busy");
    expect(await storage.getRun(run.run_id)).toEqual(held.run);
    // Its end, now that the run is written, is an ordinary one.
    const finished = await storage.finishRun(
      run.run_id,
      success(run.run_id, held.run.segments),
      { status: "idle" },
      { owner: OWNER, epoch: 1 },
      { checkpoint: checkpointOf(run.run_id) },
    );
    expect(finished).toMatchObject({ status: "success", thread_id: threadId });
    expect((await storage.getThread(threadId))?.status).toBe("idle");
  });

  it("fails a held insert whose thread exists as the creation would, writing nothing of the run", async () => {
    const storage = context.storage;
    const { threadId, thread, run, options } = onNewThread();
    const held = storage.insertRunOnNewThreadHeld!(thread, run, options)!;
    // The thread made behind the storage's back (another process would be refused the file).
    (storage as SqliteStorage).database
      .prepare(
        `INSERT INTO threads (thread_id, created_at, updated_at, metadata, status, "values", messages, hidden)
         VALUES (?, '2000-01-01T00:00:00.000Z', '2000-01-01T00:00:00.000Z', '{}', 'idle', 'null', 'null', 0)`,
      )
      .run(threadId);
    const end = storage.finishRun(
      run.run_id,
      success(run.run_id, held.run.segments),
      { status: "idle" },
      { owner: OWNER, epoch: 1 },
      { frames: [seqFrame(run.run_id, 1, "final")], checkpoint: checkpointOf(run.run_id) },
    );
    await expectDomainError(held.committed, "conflict");
    await expectDomainError(end, "conflict");
    expect(await storage.getRun(run.run_id)).toBeNull();
    expect((await storage.getThread(threadId))?.checkpoint_id).toBeNull();
  });

  it("holds only a claimed, due run on a visible new thread", async () => {
    const storage = context.storage;
    const { thread, run, options } = onNewThread();
    const { claim: _claim, ...unclaimed } = options;
    expect(storage.insertRunOnNewThreadHeld!(thread, run, unclaimed)).toBeUndefined();
    expect(
      storage.insertRunOnNewThreadHeld!(thread, run, { ...options, queue_limit: 5 }),
    ).toBeUndefined();
    expect(
      storage.insertRunOnNewThreadHeld!({ ...thread, hidden: true }, run, options),
    ).toBeUndefined();
    const later = { ...run, start_after: new Date(Date.now() + 60_000).toISOString() };
    expect(storage.insertRunOnNewThreadHeld!(thread, later, options)).toBeUndefined();
  });
}
