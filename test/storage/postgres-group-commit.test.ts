import { afterAll, afterEach, describe, expect, it } from "vitest";
import {
  GROUP_LOCK_TIMEOUT_MS,
  GroupCommitError,
} from "../../src/storage/postgres/group-commit.js";
import type { RunFrame } from "../../src/storage/types.js";
import { expectDomainError, id, makeRun, makeThread, PAST } from "./contract/helpers.js";
import {
  type DisposablePostgresStorage,
  dropLeftoverSchemas,
  openDisposable,
  requirePostgres,
} from "./pg-helpers.js";

// PostgreSQL group commit (src/storage/postgres/group-commit.ts), beyond what the contract suite
// can see: the writes of one event-loop turn share one transaction, each in its own savepoint.
// Every write below is issued within one turn (no await between them), so they form one group.

await requirePostgres();
afterAll(dropLeftoverSchemas);

const open: DisposablePostgresStorage[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((storage) => storage.close()));
});

/**
 * The tests count groups by their commits, so the group's time budget is raised well past what
 * their writes take on a busy machine (at the default, slow round trips could split a group);
 * the budget's own test sets one it can outlast.
 */
const UNHURRIED_BUDGET_MS = 10_000;

async function storage(
  poolSize = 4,
  groupBudgetMs = UNHURRIED_BUDGET_MS,
): Promise<DisposablePostgresStorage> {
  const opened = await openDisposable(poolSize, { groupBudgetMs });
  open.push(opened);
  return opened;
}

const frame = (runId: string, seq: number): RunFrame => ({
  run_id: runId,
  seq,
  mode: "custom",
  data: `{"n":${seq}}`,
});

describe("PostgreSQL group commit", () => {
  it("commits the writes of one turn in one transaction and fails only the one that broke", async () => {
    const db = await storage();
    const thread = await makeThread(db);
    const run = await makeRun(db, thread.thread_id);
    const before = db.writeCounts().commits;
    const results = await Promise.allSettled([
      db.appendFrames([frame(run.run_id, 1), frame(run.run_id, 2)]),
      // Repeats seq 1 of the write before it: this write fails as a whole, and alone.
      db.appendFrames([frame(run.run_id, 3), frame(run.run_id, 1)]),
      db.setThreadStatus(thread.thread_id, "busy"),
      db.appendFrames([frame(run.run_id, 4)]),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "fulfilled",
    ]);
    await expectDomainError(
      Promise.reject((results[1] as PromiseRejectedResult).reason),
      "conflict",
    );
    expect((await db.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1, 2, 4]);
    expect((await db.getThread(thread.thread_id))?.status).toBe("busy");
    expect((await db.getRun(run.run_id))?.last_seq).toBe(4);
    // One commit for the three writes that succeeded.
    expect(db.writeCounts().commits - before).toBe(1);
  });

  it("sends a group of one-step writes at once, and when one fails runs them again one by one: only that one is lost", async () => {
    const db = await storage();
    const thread = await makeThread(db);
    const runs = [await makeRun(db, thread.thread_id), await makeRun(db, thread.thread_id)];
    const before = db.writeCounts().commits;
    await Promise.all(runs.map((run) => db.appendFrames([frame(run.run_id, 1)])));
    // Two appends in one group, one commit.
    expect(db.writeCounts().commits - before).toBe(1);
    const again = db.writeCounts().commits;
    const results = await Promise.allSettled([
      db.appendFrames([frame(runs[0]!.run_id, 2)]),
      // Seq 1 exists: this write fails, and with it the group's first attempt.
      db.appendFrames([frame(runs[1]!.run_id, 1)]),
      db.appendFrames([frame(runs[1]!.run_id, 2)]),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
    await expectDomainError(
      Promise.reject((results[1] as PromiseRejectedResult).reason),
      "conflict",
    );
    for (const run of runs) {
      expect((await db.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1, 2]);
    }
    // The first attempt was rolled back whole; the second, one by one, committed once.
    expect(db.writeCounts().commits - again).toBe(1);
  });

  it("runs the writes of a group in the order they were requested, each seeing the ones before", async () => {
    const db = await storage();
    const threadId = id();
    const runId = id();
    const [created, inserted, , merged] = await Promise.all([
      db.createThread({ thread_id: threadId, metadata: { a: 1 }, if_exists: "raise" }),
      // Needs the thread created just before, not committed yet: same transaction.
      db.insertRun(
        {
          run_id: runId,
          thread_id: threadId,
          agent_id: "agent-a",
          kind: "stateful",
          creation: {},
          metadata: {},
          start_after: PAST,
        },
        { reject_if_busy: true },
      ),
      db.setThreadStatus(threadId, "busy"),
      db.mergeThreadMetadata(threadId, { b: 2 }),
      db.setThreadStatus(threadId, "interrupted"),
    ]);
    expect(created.created).toBe(true);
    expect(inserted.thread_id).toBe(threadId);
    expect(merged.metadata).toEqual({ a: 1, b: 2 });
    expect(merged.status).toBe("busy");
    const thread = await db.getThread(threadId);
    expect(thread?.status).toBe("interrupted");
    expect(thread?.metadata).toEqual({ a: 1, b: 2 });
  });

  it("settles a write only after its commit: a read issued after it resolves sees it", async () => {
    const db = await storage();
    const thread = await makeThread(db);
    const run = await makeRun(db, thread.thread_id);
    let committedFrames: number | undefined;
    const writes = [1, 2, 3].map((seq) =>
      db.appendFrames([frame(run.run_id, seq)]).then(async () => {
        // A read on another pooled connection, issued in the resolution of the write.
        committedFrames ??= (await db.readFrames(run.run_id, 0)).length;
      }),
    );
    await Promise.all(writes);
    // The whole group committed before the first promise resolved.
    expect(committedFrames).toBe(3);
  });

  it("keeps a claim's plan settings to the claim: the writes after it in the group plan as usual", async () => {
    const db = await storage();
    const thread = await makeThread(db);
    await makeRun(db, thread.thread_id);
    const [claimed, setting] = await Promise.all([
      db.claimRun("replica-a", 30_000, new Date()),
      db.database.write(async (tx) => (await tx.query("SHOW enable_seqscan")).rows[0]),
      db.setThreadStatus(thread.thread_id, "busy"),
    ]);
    expect(claimed?.owner).toBe("replica-a");
    expect(setting).toEqual({ enable_seqscan: "on" });
  });

  it("fails every write of the group, and nothing of it is kept, when the transaction is lost", async () => {
    const db = await storage();
    const thread = await makeThread(db);
    const run = await makeRun(db, thread.thread_id);
    const results = await Promise.allSettled([
      db.appendFrames([frame(run.run_id, 1)]),
      // The connection of the group's transaction dies under it.
      db.database.write((tx) => tx.query("SELECT pg_terminate_backend(pg_backend_pid())")),
      db.setThreadStatus(thread.thread_id, "busy"),
    ]);
    for (const result of results) {
      expect(result.status).toBe("rejected");
      const reason = (result as PromiseRejectedResult).reason;
      expect(reason).toBeInstanceOf(GroupCommitError);
      expect((reason as Error).message).toMatch(/3 grouped writes .*none of them was kept/);
    }
    expect(await db.readFrames(run.run_id, 0)).toEqual([]);
    expect((await db.getThread(thread.thread_id))?.status).toBe("idle");
    // The broken connection was discarded: the storage goes on working.
    await db.appendFrames([frame(run.run_id, 1)]);
    expect((await db.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1]);
  });

  it("takes many concurrent writes in a few transactions, every one of them committed", async () => {
    const db = await storage(10);
    const threads = await Promise.all(Array.from({ length: 300 }, () => makeThread(db)));
    const runs = await Promise.all(threads.map((t) => makeRun(db, t.thread_id)));
    const before = db.writeCounts().commits;
    await Promise.all(
      runs.map((run) => db.appendFrames([frame(run.run_id, 1), frame(run.run_id, 2)])),
    );
    for (const run of runs) {
      expect((await db.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1, 2]);
    }
    // Issued in one turn: groups of at most 64 writes, so 5 commits or a few more (writes
    // queued after the first groups went out go in later ones), not 300.
    const commits = db.writeCounts().commits - before;
    expect(commits).toBeGreaterThanOrEqual(Math.ceil(runs.length / 64));
    expect(commits).toBeLessThan(runs.length / 4);
  });

  it("gets through two groups in flight that deadlock on the same rows, by running the waiting write on its own", async () => {
    const db = await storage(10);
    const thread = await makeThread(db);
    const [a, b] = [await makeRun(db, thread.thread_id), await makeRun(db, thread.thread_id)];
    const touch =
      (runId: string) => (tx: { query(text: string, values: unknown[]): Promise<unknown> }) =>
        tx.query("UPDATE runs SET last_seq = last_seq + 1 WHERE run_id = $1", [runId]);
    let bTaken!: () => void;
    const bIsTaken = new Promise<void>((resolve) => {
      bTaken = resolve;
    });
    // First group: a, then (once the second group holds b) b. Second group, in flight at the
    // same time: b, then a. A certain deadlock: one group gives up on its waiting write (the lock
    // wait times out, or PostgreSQL aborts it), commits the write before it, and runs it alone.
    const first = [
      db.database.write(touch(a.run_id)),
      db.database.write(async (tx) => {
        await bIsTaken;
        return touch(b.run_id)(tx);
      }),
    ];
    await new Promise((resolve) => setImmediate(resolve));
    const second = [
      db.database.write(async (tx) => {
        const result = await touch(b.run_id)(tx);
        bTaken();
        return result;
      }),
      db.database.write(touch(a.run_id)),
    ];
    const before = db.writeCounts().giveUps;
    await Promise.all([...first, ...second]);
    expect((await db.getRun(a.run_id))?.last_seq).toBe(2);
    expect((await db.getRun(b.run_id))?.last_seq).toBe(2);
    // Counted, by what ended the wait: at least one group gave up (both may).
    const after = db.writeCounts().giveUps;
    const gaveUp = after.lock_timeout - before.lock_timeout + (after.deadlock - before.deadlock);
    expect(gaveUp).toBeGreaterThanOrEqual(1);
    expect(after.serialization).toBe(before.serialization);
  });

  it("gives up on a write that waits past the lock timeout: the writes before it commit, it runs alone, the rest after it", async () => {
    const db = await storage(10);
    const thread = await makeThread(db);
    const [a, b, c] = [
      await makeRun(db, thread.thread_id),
      await makeRun(db, thread.thread_id),
      await makeRun(db, thread.thread_id),
    ];
    // Another session holds b's row well past the group's lock timeout, then lets go.
    const holder = await db.database.pool.connect();
    await holder.query("BEGIN");
    await holder.query("SELECT 1 FROM runs WHERE run_id = $1 FOR UPDATE", [b.run_id]);
    const released = new Promise((resolve) => setTimeout(resolve, GROUP_LOCK_TIMEOUT_MS * 3)).then(
      async () => {
        await holder.query("COMMIT");
        holder.release();
      },
    );
    const order: string[] = [];
    const touch = (run: { run_id: string }, name: string) =>
      db.database.write(async (tx) => {
        await tx.query("UPDATE runs SET last_seq = last_seq + 1 WHERE run_id = $1", [run.run_id]);
        order.push(name);
      });
    const before = db.writeCounts();
    // One group; b waits for the holder.
    await Promise.all([touch(a, "a"), touch(b, "b"), touch(c, "c"), released]);
    const after = db.writeCounts();
    for (const run of [a, b, c]) expect((await db.getRun(run.run_id))?.last_seq).toBe(1);
    // The group committed a and gave up on b, which then ran alone once the holder let go;
    // c went to the next group, after b. Each ran once: three commits.
    expect(order).toEqual(["a", "b", "c"]);
    expect(after.commits - before.commits).toBe(3);
    expect(after.giveUps.lock_timeout - before.giveUps.lock_timeout).toBe(1);
    expect(after.giveUps.deadlock - before.giveUps.deadlock).toBe(0);
  });

  it("commits what it has run once its time budget is spent: the writes left go to the next group, in order", async () => {
    // Long enough that the two short writes fit in the second group on a busy machine.
    const budgetMs = 250;
    const db = await storage(4, budgetMs);
    const thread = await makeThread(db);
    const runs = [
      await makeRun(db, thread.thread_id),
      await makeRun(db, thread.thread_id),
      await makeRun(db, thread.thread_id),
    ];
    const order: number[] = [];
    const before = db.writeCounts().commits;
    await Promise.all(
      runs.map((run, i) =>
        db.database.write(async (tx) => {
          // The first write alone outlasts the group's budget.
          if (i === 0) await tx.query(`SELECT pg_sleep(${(budgetMs * 2) / 1000})`);
          await tx.query("UPDATE runs SET last_seq = last_seq + 1 WHERE run_id = $1", [run.run_id]);
          order.push(i);
        }),
      ),
    );
    expect(order).toEqual([0, 1, 2]);
    for (const run of runs) expect((await db.getRun(run.run_id))?.last_seq).toBe(1);
    // The first write in one group, the two after it in the next.
    expect(db.writeCounts().commits - before).toBe(2);
  });

  it("gives a lease renewal a group of its own: it holds every run's row, and waits for none of them in a group", async () => {
    const db = await storage();
    const thread = await makeThread(db);
    await makeRun(db, thread.thread_id);
    const claimed = await db.claimRun("replica-a", 30_000, new Date());
    expect(claimed?.owner).toBe("replica-a");
    const other = await makeThread(db);
    const before = db.writeCounts().commits;
    const [, renewed] = await Promise.all([
      db.setThreadStatus(other.thread_id, "busy"),
      db.renewLeases("replica-a", 30_000, new Date()),
      db.setThreadStatus(other.thread_id, "idle"),
    ]);
    expect(renewed).toEqual([claimed?.run_id]);
    // Three groups (one grouped transaction would be one commit).
    expect(db.writeCounts().commits - before).toBe(3);
  });

  it("runs a write alone in the turn as before: one statement, one commit, no savepoint", async () => {
    const db = await storage();
    const thread = await makeThread(db);
    const before = db.writeCounts();
    await db.setThreadStatus(thread.thread_id, "busy");
    const after = db.writeCounts();
    expect(after.commits - before.commits).toBe(1);
    expect(after.statements.update - before.statements.update).toBe(1);
    await expectDomainError(db.setThreadStatus(id(), "busy"), "not_found");
  });
});

describe("PostgreSQL write alone, outside a transaction", () => {
  /**
   * A certain deadlock in which the write is the victim: its one statement takes `first`, then
   * waits for `second`, which another session holds; that session then waits for `first`. The
   * write waited first, so its deadlock check (deadlock_timeout after its wait began) runs
   * first, and PostgreSQL aborts its statement, not the other session's.
   */
  async function deadlockAgainst(
    db: DisposablePostgresStorage,
    first: string,
    second: string,
    before?: string,
  ) {
    const other = await db.database.pool.connect();
    await other.query("BEGIN");
    await other.query("SELECT 1 FROM runs WHERE run_id = $1 FOR UPDATE", [second]);
    let attempts = 0;
    const write = db.database.write(async (tx) => {
      if (before !== undefined) {
        await tx.query("UPDATE runs SET last_seq = last_seq + 1 WHERE run_id = $1", [before]);
      }
      attempts++;
      // One statement, its two updates in this order.
      await tx.query(`DO $$ BEGIN
        UPDATE runs SET last_seq = last_seq + 1 WHERE run_id = '${first}';
        UPDATE runs SET last_seq = last_seq + 1 WHERE run_id = '${second}';
      END $$`);
    });
    write.catch(() => undefined);
    // Until the write waits for `second` (blocked by this session), however busy the machine.
    const otherPid = (await other.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows[0]!
      .pid;
    for (let waited = 0; waited < 30_000; waited += 20) {
      const blocked = await db.database.pool.query(
        "SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
        [otherPid],
      );
      if (blocked.rowCount! > 0) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await other.query("UPDATE runs SET last_seq = last_seq + 10 WHERE run_id = $1", [first]);
    await other.query("COMMIT");
    other.release();
    return { write, attempts: () => attempts };
  }

  it("runs a deadlock victim again while none of its writes went through", async () => {
    const db = await storage();
    const thread = await makeThread(db);
    const [a, b] = [await makeRun(db, thread.thread_id), await makeRun(db, thread.thread_id)];
    const { write, attempts } = await deadlockAgainst(db, a.run_id, b.run_id);
    await write;
    expect(attempts()).toBe(2);
    // The other session's +10 and the write's +1 on a; the write's +1 on b, once.
    expect((await db.getRun(a.run_id))?.last_seq).toBe(11);
    expect((await db.getRun(b.run_id))?.last_seq).toBe(1);
  });

  it("does not run it again once one of its statements has written: it fails with the deadlock", async () => {
    const db = await storage();
    const thread = await makeThread(db);
    const [a, b, c] = [
      await makeRun(db, thread.thread_id),
      await makeRun(db, thread.thread_id),
      await makeRun(db, thread.thread_id),
    ];
    const { write, attempts } = await deadlockAgainst(db, a.run_id, b.run_id, c.run_id);
    await expect(write).rejects.toMatchObject({ code: "40P01" });
    expect(attempts()).toBe(1);
    expect((await db.getRun(c.run_id))?.last_seq).toBe(1);
    expect((await db.getRun(a.run_id))?.last_seq).toBe(10);
    expect((await db.getRun(b.run_id))?.last_seq).toBe(0);
  });
});
