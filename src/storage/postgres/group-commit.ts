import {
  DEFAULT_WRITES_PER_GROUP,
  GROUP_BUDGET_MS,
  GROUP_LOCK_TIMEOUT_MS,
  GroupCommitError,
  type GroupConnection,
  type GroupOutcome,
  type QueuedWrite,
  type WriteOptions,
  type WriteQueryable,
} from "./group-writes.js";

export {
  DEFAULT_WRITES_PER_GROUP,
  GROUP_BUDGET_MS,
  GROUP_LOCK_TIMEOUT_MS,
  GroupCommitError,
  type GroupConnection,
  type WriteOptions,
  type WriteQueryable,
} from "./group-writes.js";

/**
 * Group commit on PostgreSQL, as SQLite has it (../sqlite/group-commit.ts): the writes requested
 * during one turn of the event loop run on one pooled connection in one transaction, each inside
 * its own SAVEPOINT, and their promises settle after COMMIT.
 *
 * Why: every commit waits for its WAL flush and costs the database a commit record; a group of
 * concurrent runs' writes pays one of each instead of one per write. The savepoint control
 * (`BEGIN; SET LOCAL lock_timeout …; SAVEPOINT w` before the first write, `RELEASE SAVEPOINT w;
 * SAVEPOINT w` between writes) is written ahead of the write's first statement and answered in
 * the same round trip, so a grouped write costs its own statements' round trips, and the group
 * one COMMIT.
 *
 * Nothing is weakened:
 * - a promise resolves only once COMMIT has returned, so a read issued after it (on any pooled
 *   connection, READ COMMITTED) sees the write; a read issued before is ordered before it, as a
 *   write nobody has seen resolve has not happened yet — reads are not queued;
 * - a write that throws is rolled back to its savepoint and rejects alone; the others still
 *   commit;
 * - a write of a group that waits for a lock longer than GROUP_LOCK_TIMEOUT_MS, is a deadlock
 *   victim or meets a serialization failure is rolled back to its savepoint, and the group
 *   commits the writes before it, which releases their locks and so breaks any cycle of waits
 *   through the group. That write then runs alone, as an unbatched write would, and the writes
 *   after it go back to the front of the queue once it has, so their order holds;
 * - a group takes writes for GROUP_BUDGET_MS at most, then commits: the writes left go back to
 *   the front of the queue;
 * - when the transaction itself fails (the connection is lost, COMMIT refused), every write of
 *   the group rejects with a `GroupCommitError`, and the connection is discarded;
 * - writes of one group run in the order they were requested.
 *
 * A group made only of `pipelined` writes (a run's insert, its end, its frames: one statement
 * or a few issued together) takes a shorter way: BEGIN, every write's statements and then
 * COMMIT go out without waiting in between, no savepoint, so the group costs two round trips
 * however many writes it holds, and each write only its own statements. When any of them fails
 * nothing is kept: the transaction is rolled back and the group's writes go back to the front
 * of the queue, to run one by one as above, where each failure is told apart and handled as
 * described. Failures are rare (a conflict, a lock wait cut short, a lost claim), so the common
 * case pays no savepoint, and the rare one runs its writes twice, the first time rolled back.
 *
 * At most `maxGroups` groups are in flight at once, each on its own connection; while they are,
 * new writes wait and then go out together in the next group. More than one: a group's writes
 * go out one after another, each awaiting its statements' answers, so a single lane bounds a
 * replica's writes by the database's latency (measured: one lane halved runs/s on a busy
 * machine). A run's own writes are issued one after another, so its rows are in one group at a
 * time; writes to a shared thread can cross another group, and a lease renewal (every run the
 * replica holds) never shares a group (`ownGroup`).
 */
export class PgGroupCommit {
  readonly #connection: GroupConnection;
  readonly #maxGroups: number;
  readonly #writesPerGroup: number;
  readonly #budgetMs: number;
  #queue: QueuedWrite[] = [];
  #scheduled = false;
  #inFlight = 0;
  readonly #groups = new Set<Promise<void>>();

  constructor(
    connection: GroupConnection,
    maxGroups: number,
    writesPerGroup = DEFAULT_WRITES_PER_GROUP,
    budgetMs = GROUP_BUDGET_MS,
  ) {
    this.#connection = connection;
    this.#maxGroups = Math.max(1, maxGroups);
    this.#writesPerGroup = Math.max(1, writesPerGroup);
    this.#budgetMs = budgetMs;
  }

  /** Runs `work` in the next group; resolves with its result once that group is committed. */
  run<T>(work: (db: WriteQueryable) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({
        ...options,
        work,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.#schedule();
    });
  }

  /** Waits until every write queued so far has settled (close() calls it before ending the pool). */
  async drain(): Promise<void> {
    while (this.#queue.length > 0 || this.#groups.size > 0) {
      this.#flush();
      await Promise.allSettled([...this.#groups]);
    }
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(() => {
      this.#scheduled = false;
      this.#flush();
    });
  }

  #flush(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#maxGroups) {
      const writes = this.#queue.splice(0, this.#groupLength());
      this.#inFlight++;
      const group = this.#commit(writes).finally(() => {
        this.#inFlight--;
        this.#groups.delete(group);
        if (this.#queue.length > 0) this.#schedule();
      });
      this.#groups.add(group);
    }
  }

  /** How many writes from the front of the queue the next group takes. */
  #groupLength(): number {
    const queue = this.#queue;
    if (queue[0]?.ownGroup) return 1;
    let n = 1;
    while (n < queue.length && n < this.#writesPerGroup && !queue[n]!.ownGroup) n++;
    return n;
  }

  async #commit(writes: QueuedWrite[]): Promise<void> {
    if (writes.length === 1) {
      await this.#alone(writes[0]!);
      return;
    }
    if (writes.every(isPipelined)) {
      let settled: boolean;
      try {
        settled = await this.#pipelined(writes);
      } catch (err) {
        for (const queued of writes) queued.reject(err);
        return;
      }
      if (!settled) {
        // Rolled back: one by one now, in order, ahead of what was queued meanwhile.
        for (const queued of writes) queued.oneByOne = true;
        this.#queue.unshift(...writes);
        this.#schedule();
      }
      return;
    }
    let outcome: GroupOutcome;
    try {
      outcome = await this.#inOneTransaction(writes);
    } catch (err) {
      for (const queued of writes) queued.reject(err);
      return;
    }
    outcome.results.forEach((result, i) => {
      const queued = writes[i]!;
      if (result.status === "fulfilled") queued.resolve(result.value);
      else queued.reject(result.reason);
    });
    if (outcome.giveUp !== undefined) await this.#alone(outcome.giveUp);
    if (outcome.rest.length > 0) {
      this.#queue.unshift(...outcome.rest);
      this.#schedule();
    }
  }

  async #alone(write: QueuedWrite): Promise<void> {
    try {
      write.resolve(await this.#connection.alone(write));
    } catch (err) {
      write.reject(err);
    }
  }

  /**
   * The group's writes sent at once in one transaction, without savepoints (see the class's
   * comment). True once committed and settled; false when a write failed and the transaction
   * was rolled back, nothing of it kept and nothing settled. Throws GroupCommitError when the
   * COMMIT went out and its outcome is not known or it was refused.
   */
  async #pipelined(writes: QueuedWrite[]): Promise<boolean> {
    const { pool, counter } = this.#connection;
    const client = await pool.connect();
    let lost: Error | undefined;
    const onError = (err: Error) => {
      lost = err;
    };
    client.on("error", onError);
    let wrote = false;
    const begin = client.query(`BEGIN; SET LOCAL lock_timeout = '${GROUP_LOCK_TIMEOUT_MS}ms'`);
    begin.catch(() => undefined);
    const db = this.#connection.on(
      client,
      () => {
        wrote = true;
      },
      async () => {
        await begin;
      },
    );
    let committing = false;
    let broken: Error | undefined;
    try {
      // Each write issues its statements as it is called: they go out in the group's order.
      const results = await Promise.allSettled(writes.map((write) => started(write, db)));
      await begin;
      if (lost !== undefined) throw lost;
      if (results.some((result) => result.status === "rejected")) {
        await client.query("ROLLBACK");
        return false;
      }
      committing = true;
      const done = await client.query("COMMIT");
      if (done.command !== "COMMIT") throw abortedAtCommit();
      if (wrote) counter.commit();
      results.forEach((result, i) => {
        writes[i]!.resolve((result as PromiseFulfilledResult<unknown>).value);
      });
      return true;
    } catch (err) {
      broken = lost ?? (err as Error);
      const rolledBack = await client.query("ROLLBACK").then(
        () => true,
        () => false,
      );
      if (rolledBack && lost === undefined) broken = undefined;
      // Nothing was committed before COMMIT went out: the writes can run again.
      if (!committing) return false;
      const unknown = lost !== undefined || !hasSqlState(err);
      throw new GroupCommitError(writes.length, err, unknown);
    } finally {
      client.off("error", onError);
      client.release(broken);
    }
  }

  async #inOneTransaction(writes: QueuedWrite[]): Promise<GroupOutcome> {
    const { pool, counter, givesUp } = this.#connection;
    const client = await pool.connect();
    const started = performance.now();
    // A connection that breaks between two of our queries is reported as an event, not by a
    // query: without a listener that event would end the process.
    let lost: Error | undefined;
    const onError = (err: Error) => {
      lost = err;
    };
    client.on("error", onError);
    let wrote = false;
    /** The control written ahead of the current write's first statement, not awaited yet. */
    let control: Promise<unknown> | undefined;
    let controlFailed: unknown;
    const answered = async () => {
      const pending = control;
      control = undefined;
      await pending;
    };
    const db = this.#connection.on(
      client,
      () => {
        wrote = true;
      },
      answered,
    );
    let committing = false;
    let broken: Error | undefined;
    try {
      const outcome: GroupOutcome = { results: [], rest: [] };
      // Control text that goes out ahead of the next write (BEGIN, RELEASE/SAVEPOINT, setup).
      let pending = `BEGIN; SET LOCAL lock_timeout = '${GROUP_LOCK_TIMEOUT_MS}ms'; SAVEPOINT w`;
      for (const [i, write] of writes.entries()) {
        if (i > 0 && performance.now() - started > this.#budgetMs) {
          outcome.rest = writes.slice(i);
          break;
        }
        const text = [pending, write.setup].filter((t) => t !== undefined && t !== "").join("; ");
        pending = "RELEASE SAVEPOINT w; SAVEPOINT w";
        if (text !== "") {
          // Written now (the pool pipelines), answered before the write's first statement.
          control = client.query(text);
          control.catch((err: unknown) => {
            controlFailed = err;
          });
        }
        try {
          const value = await write.work(db);
          await answered();
          if (controlFailed !== undefined) throw controlFailed;
          outcome.results.push({ status: "fulfilled", value });
          if (write.teardown !== undefined) pending = `${write.teardown}; ${pending}`;
        } catch (reason) {
          await answered().catch(() => undefined);
          if (lost !== undefined) throw lost;
          // Control refused: the transaction (or its savepoint) is not what the write ran in.
          if (controlFailed !== undefined) throw controlFailed;
          // Undoes this write alone (its setup too); throws if the transaction is gone.
          await client.query("ROLLBACK TO SAVEPOINT w");
          // Still inside savepoint w, now empty: the next write starts there.
          pending = "";
          const givenUp = givesUp(reason);
          if (givenUp !== null) {
            // The writes before it commit now, which lets go of their locks; it runs alone.
            counter.giveUp(givenUp);
            outcome.giveUp = write;
            outcome.rest = writes.slice(i + 1);
            break;
          }
          outcome.results.push({ status: "rejected", reason });
        }
      }
      committing = true;
      const done = await client.query("COMMIT");
      // COMMIT of an aborted transaction is answered ROLLBACK, not with an error.
      if (done.command !== "COMMIT") throw abortedAtCommit();
      if (wrote) counter.commit();
      return outcome;
    } catch (err) {
      broken = lost ?? (err as Error);
      await client.query("ROLLBACK").then(
        () => {
          if (lost === undefined) broken = undefined;
        },
        () => undefined,
      );
      // A refused COMMIT is an error reply (with a SQLSTATE): rolled back. No reply: unknown.
      const unknown = committing && (lost !== undefined || !hasSqlState(err));
      throw new GroupCommitError(writes.length, err, unknown);
    } finally {
      client.off("error", onError);
      // A connection that failed mid-transaction is discarded, not handed to the next caller.
      client.release(broken);
    }
  }
}

/** The write's work, called now; one that throws before its first await rejects. */
function started(write: QueuedWrite, db: WriteQueryable): Promise<unknown> {
  try {
    return write.work(db);
  } catch (err) {
    return Promise.reject(err);
  }
}

/** Whether a write can go in a pipelined group (see PgGroupCommit). */
function isPipelined(write: QueuedWrite): boolean {
  return (
    write.pipelined === true &&
    write.oneByOne !== true &&
    write.ownGroup !== true &&
    write.setup === undefined &&
    write.teardown === undefined
  );
}

/** COMMIT answered ROLLBACK: the transaction had failed, and nothing of it was kept. */
export function abortedAtCommit(): Error {
  return Object.assign(new Error("the transaction had failed: COMMIT rolled it back"), {
    code: "25P02",
  });
}

function hasSqlState(err: unknown): boolean {
  return (
    err instanceof Error && "code" in err && typeof err.code === "string" && err.code.length === 5
  );
}
