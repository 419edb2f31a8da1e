import type pg from "pg";
import type { WriteCounter } from "../write-counts.js";

/** What a write runs its statements on: the group's connection, or the pool when alone. */
export interface WriteQueryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}

/** How a write wants to run when it is alone in its turn (in a group it always has a savepoint). */
export interface WriteOptions {
  /** Its statements must be atomic together: alone, it gets BEGIN … COMMIT. */
  transaction?: boolean;
  /** `SET LOCAL …` for the write's own statements (the claim's plan settings). */
  setup?: string;
  /** Undoes `setup` for the writes after it in the same transaction. */
  teardown?: string;
}

interface QueuedWrite extends WriteOptions {
  work: (db: WriteQueryable) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/** What the group needs from the connection layer (connection.ts), kept narrow for testing. */
export interface GroupConnection {
  readonly pool: pg.Pool;
  readonly counter: WriteCounter;
  /** Runs a write alone, as it would run without grouping. */
  alone(write: QueuedWrite): Promise<unknown>;
  /** A query function on `client` that counts and translates errors (see connection.ts). */
  on(client: pg.PoolClient, wrote: () => void): WriteQueryable;
  retryable(err: unknown): boolean;
}

/** The group's transaction ended without a commit: none of its writes was kept. */
export class GroupCommitError extends Error {
  constructor(size: number, cause: unknown, committing: boolean) {
    const reason = cause instanceof Error ? cause.message : String(cause);
    super(
      committing
        ? `PostgreSQL did not confirm the commit of ${size} grouped writes (${reason}): their outcome is unknown`
        : `the PostgreSQL transaction of ${size} grouped writes failed and was rolled back, none of them was kept: ${reason}`,
      { cause },
    );
    this.name = "GroupCommitError";
  }
}

/** Writes per transaction at most: a longer queue is split over several connections. */
/**
 * The most writes one group may hold. The default is 1, so by default nothing is grouped. A group
 * holds the row locks of all its writes until it commits, across different runs. With several
 * replicas, groups on different replicas then deadlock. PostgreSQL only notices after
 * `deadlock_timeout` (1 s), and a replica stalled by a few of those in a row can miss its lease
 * renewal. Measured with three replicas and a burst of 45 runs: runs were executed twice and
 * failed ("frame N already exists").
 */
export const DEFAULT_WRITES_PER_GROUP = 1;
/**
 * Attempts of a group that PostgreSQL aborted as a deadlock victim (or a serialization failure).
 * The whole group is rolled back and run again: rolling back only the victim's savepoint would
 * keep the locks the earlier writes of the group hold, and the deadlock with them.
 */
const ATTEMPTS = 3;

/** A write of the group was a deadlock victim: the group starts over. */
class RetryGroup extends Error {}

/**
 * Group commit on PostgreSQL, as SQLite has it (../sqlite/group-commit.ts): the writes requested
 * during one turn of the event loop run on one pooled connection in one transaction, each inside
 * its own SAVEPOINT, and their promises settle after COMMIT.
 *
 * Why: every commit waits for its WAL flush; a group of concurrent runs' writes pays one flush
 * (and one BEGIN/COMMIT round trip pair) instead of one each. Savepoint control rides in the
 * same round trip as the transaction's own control (`RELEASE w; SAVEPOINT w` between writes is
 * one simple query), so a grouped write costs its statements plus one round trip.
 *
 * Nothing is weakened:
 * - a promise resolves only once COMMIT has returned, so a read issued after it (on any pooled
 *   connection, READ COMMITTED) sees the write; a read issued before is ordered before it, as a
 *   write nobody has seen resolve has not happened yet — reads are not queued;
 * - a write that throws is rolled back to its savepoint and rejects alone; the others still
 *   commit. A deadlock victim or a serialization failure is different: the whole group is rolled
 *   back (releasing every lock it held) and run again, as the unbatched transactions are;
 * - when the transaction itself fails (the connection is lost, COMMIT refused), every write of
 *   the group rejects with a `GroupCommitError`, and the connection is discarded;
 * - writes of one group run in the order they were requested.
 *
 * At most `maxGroups` groups are in flight at once, each on its own connection; while they are,
 * new writes wait and then go out together in the next group. More than one: a group's
 * statements go out one round trip after another (pg has no pipelining), so a single lane
 * bounds a replica's writes by the database's latency (measured: one lane halved runs/s on a
 * busy machine). The price: a group holds the row locks of all its writes until COMMIT, so two
 * groups taking the same rows in opposite orders deadlock; PostgreSQL notices after
 * `deadlock_timeout` (1 s) and the victim group starts over. A run's own writes are issued one
 * after another, so its rows are in one group at a time; a lease renewal (every run the replica
 * holds) is the one write that can cross another group.
 */
export class PgGroupCommit {
  readonly #connection: GroupConnection;
  readonly #maxGroups: number;
  readonly #writesPerGroup: number;
  #queue: QueuedWrite[] = [];
  #scheduled = false;
  #inFlight = 0;
  readonly #groups = new Set<Promise<void>>();

  constructor(
    connection: GroupConnection,
    maxGroups: number,
    writesPerGroup = DEFAULT_WRITES_PER_GROUP,
  ) {
    this.#connection = connection;
    this.#maxGroups = Math.max(1, maxGroups);
    this.#writesPerGroup = Math.max(1, writesPerGroup);
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
      const writes = this.#queue.splice(0, this.#writesPerGroup);
      this.#inFlight++;
      const group = this.#commit(writes).finally(() => {
        this.#inFlight--;
        this.#groups.delete(group);
        if (this.#queue.length > 0) this.#schedule();
      });
      this.#groups.add(group);
    }
  }

  async #commit(writes: QueuedWrite[]): Promise<void> {
    if (writes.length === 1) {
      const [only] = writes as [QueuedWrite];
      try {
        only.resolve(await this.#connection.alone(only));
      } catch (err) {
        only.reject(err);
      }
      return;
    }
    let results: PromiseSettledResult<unknown>[] | undefined;
    for (let attempt = 1; results === undefined; attempt++) {
      try {
        results = await this.#inOneTransaction(writes, attempt < ATTEMPTS);
      } catch (err) {
        if (err instanceof RetryGroup) continue;
        for (const queued of writes) queued.reject(err);
        return;
      }
    }
    writes.forEach((queued, i) => {
      const result = results[i]!;
      if (result.status === "fulfilled") queued.resolve(result.value);
      else queued.reject(result.reason);
    });
  }

  async #inOneTransaction(
    writes: QueuedWrite[],
    mayRetry: boolean,
  ): Promise<PromiseSettledResult<unknown>[]> {
    const { pool, counter, retryable } = this.#connection;
    const client = await pool.connect();
    // A connection that breaks between two of our queries is reported as an event, not by a
    // query: without a listener that event would end the process.
    let lost: Error | undefined;
    const onError = (err: Error) => {
      lost = err;
    };
    client.on("error", onError);
    let wrote = false;
    const db = this.#connection.on(client, () => {
      wrote = true;
    });
    let committing = false;
    let broken: Error | undefined;
    try {
      const results: PromiseSettledResult<unknown>[] = [];
      // Control text that goes out with the next round trip (BEGIN, RELEASE/SAVEPOINT, setup).
      let pending = "BEGIN; SAVEPOINT w";
      for (const write of writes) {
        const control = [pending, write.setup].filter((text) => text !== undefined && text !== "");
        if (control.length > 0) await client.query(control.join("; "));
        pending = "RELEASE SAVEPOINT w; SAVEPOINT w";
        try {
          results.push({ status: "fulfilled", value: await write.work(db) });
          if (write.teardown !== undefined) pending = `${write.teardown}; ${pending}`;
        } catch (reason) {
          if (lost !== undefined) throw lost;
          if (mayRetry && retryable(reason)) {
            await client.query("ROLLBACK").catch(() => undefined);
            throw new RetryGroup();
          }
          // Undoes this write alone (its setup too); throws if the transaction is gone.
          await client.query("ROLLBACK TO SAVEPOINT w");
          // Still inside savepoint w, now empty: the next write starts there.
          pending = "";
          results.push({ status: "rejected", reason });
        }
      }
      committing = true;
      await client.query("COMMIT");
      if (wrote) counter.commit();
      return results;
    } catch (err) {
      if (err instanceof RetryGroup) throw err;
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

function hasSqlState(err: unknown): boolean {
  return (
    err instanceof Error && "code" in err && typeof err.code === "string" && err.code.length === 5
  );
}
