import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { PostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import type { RunPatch } from "../../src/storage/types.js";
import { isClaimLost } from "../../src/util/errors.js";
import {
  claimFor,
  expectDomainError,
  id,
  makeRun,
  makeThread,
  newRun,
  seqFrame,
  sleep,
} from "./contract/helpers.js";
import { dropLeftoverSchemas, openDisposable, requirePostgres } from "./pg-helpers.js";

// The statements PostgreSQL folds a stateless run into (runs.ts, run-update.ts): its insert with
// the hidden thread in one statement, and its end (frames, outcome, the thread's deletion) in
// one statement after the thread's lock. Each refusal must still write nothing.

await requirePostgres();
afterAll(dropLeftoverSchemas);

const frame = seqFrame;

const success: RunPatch = { status: "success", owner: null, lease_expires_at: null };

let storage: PostgresStorage;
afterEach(async () => {
  await storage?.close();
});

async function statelessRun(owner: string, leaseMs?: number) {
  const run = await storage.insertRun(newRun(id(), { kind: "stateless" }), {
    reject_if_busy: false,
    create_hidden_thread: true,
    claim: claimFor(owner, leaseMs),
  });
  expect(run.owner).toBe(owner);
  return run;
}

describe("PostgreSQL: a stateless run's insert in one statement", () => {
  it("creates the hidden busy thread with the claimed run", async () => {
    storage = await openDisposable(2);
    const run = await statelessRun("replica-a");
    expect(run.lease_epoch).toBe(1);
    expect(run.segments).toHaveLength(1);
    const thread = await storage.getThread(run.thread_id!);
    expect(thread).toMatchObject({ hidden: true, status: "busy", checkpoint_id: null });
  });

  it("inserts nothing when the thread exists, and a taken run id leaves no thread behind", async () => {
    storage = await openDisposable(2);
    const thread = await makeThread(storage);
    const options = { reject_if_busy: false, create_hidden_thread: true } as const;
    await expectDomainError(
      storage.insertRun(newRun(thread.thread_id, { kind: "stateless" }), options),
      "conflict",
    );
    expect(await storage.countRuns({ thread_id: thread.thread_id }, 10)).toBe(0);
    const first = await statelessRun("replica-a");
    const again = { ...newRun(id(), { kind: "stateless" }), run_id: first.run_id };
    await expectDomainError(storage.insertRun(again, options), "conflict");
    expect(await storage.getThread(again.thread_id)).toBeNull();
  });
});

describe("PostgreSQL: a run's end that deletes its thread, in one statement", () => {
  it("writes the frames and the outcome, and sets thread_id NULL on the thread's other runs", async () => {
    storage = await openDisposable(2);
    const thread = await makeThread(storage);
    const older = await makeRun(storage, thread.thread_id);
    await storage.finishRun(older.run_id, { status: "success" }, { status: "idle" });
    const run = await storage.insertRun(newRun(thread.thread_id), {
      reject_if_busy: false,
      claim: claimFor("replica-a"),
    });
    const fence = { owner: "replica-a", epoch: run.lease_epoch };
    const ended = await storage.finishRun(run.run_id, success, { delete: true }, fence, {
      frames: [frame(run.run_id, 1), frame(run.run_id, 2, "final")],
    });
    expect(ended).toMatchObject({ status: "success", thread_id: null, last_seq: 2, owner: null });
    expect(await storage.getRun(run.run_id)).toEqual(ended);
    expect((await storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1, 2]);
    expect(await storage.getThread(thread.thread_id)).toBeNull();
    expect((await storage.getRun(older.run_id))?.thread_id).toBeNull();
  });

  it("is refused, writing nothing, while another run on the thread is pending", async () => {
    storage = await openDisposable(2);
    const thread = await makeThread(storage);
    const run = await storage.insertRun(newRun(thread.thread_id), {
      reject_if_busy: false,
      claim: claimFor("replica-a"),
    });
    const queued = await makeRun(storage, thread.thread_id);
    const fence = { owner: "replica-a", epoch: run.lease_epoch };
    await expectDomainError(
      storage.finishRun(run.run_id, success, { delete: true }, fence, {
        frames: [frame(run.run_id, 1, "final")],
      }),
      "conflict",
    );
    expect(await storage.getRun(run.run_id)).toMatchObject({
      status: "pending",
      owner: "replica-a",
      thread_id: thread.thread_id,
      last_seq: 0,
    });
    expect(await storage.readFrames(run.run_id, 0)).toEqual([]);
    expect(await storage.getThread(thread.thread_id)).not.toBeNull();
    expect((await storage.getRun(queued.run_id))?.status).toBe("pending");
  });

  it("is refused whole under a claim another replica took over", async () => {
    storage = await openDisposable(2);
    const run = await statelessRun("replica-a", 50);
    await sleep(70);
    const taken = await storage.claimRun("replica-b", 30_000, new Date());
    expect(taken?.run_id).toBe(run.run_id);
    const err = await storage
      .finishRun(
        run.run_id,
        success,
        { delete: true },
        { owner: "replica-a", epoch: run.lease_epoch },
        { frames: [frame(run.run_id, 1, "final")] },
      )
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(isClaimLost(err), String(err)).toBe(true);
    expect(await storage.readFrames(run.run_id, 0)).toEqual([]);
    expect(await storage.getRun(run.run_id)).toMatchObject({
      owner: "replica-b",
      status: "pending",
      thread_id: run.thread_id,
    });
    expect(await storage.getThread(run.thread_id!)).not.toBeNull();
  });

  it("answers a frame that exists with a conflict, writing nothing", async () => {
    storage = await openDisposable(2);
    const run = await statelessRun("replica-a");
    const fence = { owner: "replica-a", epoch: run.lease_epoch };
    await storage.appendFrames([frame(run.run_id, 1)], fence);
    await expectDomainError(
      storage.finishRun(run.run_id, success, { delete: true }, fence, {
        frames: [frame(run.run_id, 1), frame(run.run_id, 2, "final")],
      }),
      "conflict",
    );
    expect((await storage.getRun(run.run_id))?.status).toBe("pending");
    expect((await storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1]);
    expect(await storage.getThread(run.thread_id!)).not.toBeNull();
  });

  it("answers not_found for a run that does not exist", async () => {
    storage = await openDisposable(2);
    await expectDomainError(
      storage.finishRun(
        id(),
        success,
        { delete: true },
        { owner: "replica-a", epoch: 1 },
        {
          frames: [],
        },
      ),
      "not_found",
    );
  });
});

// runs.ts and run-update.ts read back only what the server does not know (the insert's epoch
// and checkpoint, the update's unpatched columns): the records they build must be the rows.
describe("PostgreSQL: the records a run's writes answer are the stored rows", () => {
  it("answers a run's insert and its ends as a read of the row answers them", async () => {
    storage = await openDisposable(2);
    const claimed = await storage.insertRun(
      newRun(id(), {
        kind: "stateless",
        metadata: { tag: "x", n: [1, { a: null }] },
        creation: { input: { messages: [{ role: "user", content: "hé \u2028" }] }, d: 1.5e-7 },
        principal: "alice",
        trace_context: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
      }),
      { reject_if_busy: false, create_hidden_thread: true, claim: claimFor("replica-a") },
    );
    expect(claimed).toEqual(await storage.getRun(claimed.run_id));
    const thread = await makeThread(storage);
    await storage.addCheckpoint(thread.thread_id, {
      checkpoint_id: id(),
      values: { a: 1 },
      messages: [],
      metadata: {},
    });
    const later = new Date(Date.now() + 60_000).toISOString();
    const waiting = await storage.insertRun(newRun(thread.thread_id, { start_after: later }), {
      reject_if_busy: true,
      mark_thread_busy: true,
      claim: claimFor("replica-a"),
    });
    expect(waiting.owner).toBeNull();
    expect(waiting.checkpoint_before).not.toBeNull();
    expect(waiting).toEqual(await storage.getRun(waiting.run_id));

    const fence = { owner: "replica-a", epoch: claimed.lease_epoch };
    const patched = await storage.updateRun(
      claimed.run_id,
      { interrupts: [{ id: "i", value: { q: [1, 2] } }], cancel_requested: "interrupt" },
      fence,
    );
    expect(patched).toEqual(await storage.getRun(claimed.run_id));
    const ended = await storage.finishRun(
      claimed.run_id,
      {
        ...success,
        output: { values: { done: true } },
        segments: [{ ...claimed.segments[0]!, ended_at: new Date().toISOString() }],
        cancel_requested: null,
      },
      { delete: true },
      fence,
      { frames: [frame(claimed.run_id, 1), frame(claimed.run_id, 2)] },
    );
    expect(ended).toEqual(await storage.getRun(claimed.run_id));
    expect(ended.last_seq).toBe(2);
    const other = await storage.finishRun(
      waiting.run_id,
      { status: "error", output: { error: "e" } },
      { status: "idle" },
    );
    expect(other).toEqual(await storage.getRun(waiting.run_id));
  });
});
