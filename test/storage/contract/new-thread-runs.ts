import { expect, it } from "vitest";
import type { CreateThreadInput, InsertRunOptions } from "../../../src/storage/types.js";
import {
  claimFor,
  expectDomainError,
  id,
  newRun,
  type StorageFactory,
  useStorage,
} from "./helpers.js";

// `Storage.insertRunOnNewThread`: a new thread and its first run in one commit, or nothing.

const options: InsertRunOptions = { reject_if_busy: false, mark_thread_busy: true };
const thread = (threadId: string): CreateThreadInput => ({
  thread_id: threadId,
  metadata: { copilotkit: { agent: "echo", user: "user:a" } },
  if_exists: "raise",
  principal: "user:a",
});

export function describeNewThreadRuns(factory: StorageFactory): void {
  const context = useStorage(factory);

  it("writes both in one commit: the thread with its metadata and owner, busy, and the run", async () => {
    const storage = context.storage;
    const threadId = id();
    const run = newRun(threadId, { principal: "user:a" });
    const before = storage.writeCounts().commits;
    const inserted = await storage.insertRunOnNewThread!(thread(threadId), run, options);
    expect(storage.writeCounts().commits - before).toBe(1);
    expect(inserted).toMatchObject({ run_id: run.run_id, thread_id: threadId, status: "pending" });
    expect(await storage.getRun(run.run_id)).toEqual(inserted);
    expect(await storage.getThread(threadId)).toMatchObject({
      metadata: { copilotkit: { agent: "echo", user: "user:a" } },
      principal: "user:a",
      status: "busy",
      hidden: false,
    });
    expect(
      await storage.searchThreads({
        metadata: { copilotkit: { agent: "echo", user: "user:a" } },
        limit: 10,
        offset: 0,
      }),
    ).toHaveLength(1);
  });

  it("claims the run with its insert when given a claim: the only run of its new thread", async () => {
    const storage = context.storage;
    const threadId = id();
    const run = newRun(threadId, { principal: "user:a" });
    const claim = claimFor("replica-1");
    const inserted = await storage.insertRunOnNewThread!(thread(threadId), run, {
      ...options,
      claim,
    });
    expect(inserted).toMatchObject({
      owner: "replica-1",
      lease_epoch: 1,
      segments: [claim.segment],
    });
    expect(await storage.getRun(run.run_id)).toEqual(inserted);
  });

  it("writes nothing and answers null when the thread exists", async () => {
    const storage = context.storage;
    const threadId = id();
    await storage.createThread({
      thread_id: threadId,
      metadata: { mine: 1 },
      if_exists: "raise",
      principal: "user:b",
    });
    const run = newRun(threadId);
    expect(await storage.insertRunOnNewThread!(thread(threadId), run, options)).toBeNull();
    expect(await storage.getRun(run.run_id)).toBeNull();
    expect(await storage.getThread(threadId)).toMatchObject({
      metadata: { mine: 1 },
      principal: "user:b",
      status: "idle",
    });
  });

  it("keeps no thread when the run's insert fails", async () => {
    const storage = context.storage;
    const threadId = id();
    const run = newRun(threadId);
    const taken = newRun(threadId, { run_id: run.run_id });
    const first = newRun(id(), { run_id: run.run_id });
    await storage.insertRunOnNewThread!(thread(first.thread_id), first, options);
    await expectDomainError(
      storage.insertRunOnNewThread!(thread(threadId), taken, options),
      "conflict",
    );
    expect(await storage.getThread(threadId)).toBeNull();
  });
}
