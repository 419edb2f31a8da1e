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
  /**
   * A query function on `client` that counts and translates errors (see connection.ts). Each
   * query awaits `before` once it is written: what was sent ahead of it is answered first.
   */
  on(client: pg.PoolClient, wrote: () => void, before: () => Promise<void>): WriteQueryable;
  /** The group must not go on: a deadlock victim, a serialization failure, a lock wait cut short. */
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

/**
 * The most writes one group holds; a longer queue is split over several groups, each on its own
 * connection. The bound keeps a group short: its writes go out one after another, and it holds
 * all their row locks until it commits.
 */
export const DEFAULT_WRITES_PER_GROUP = 64;

/**
 * How long a statement of a group waits for a row lock before the group gives up
 * (`SET LOCAL lock_timeout`). A group holds the locks of all its writes until it commits, across
 * runs, so two groups (on two replicas, or two connections of one) that take the same rows in
 * opposite orders deadlock, and PostgreSQL would notice only after `deadlock_timeout` (1 s by
 * default). Three replicas with no bound lost whole seconds that way and missed lease renewals.
 * A wait this long is not one group waiting for another to commit (a group commits within a few
 * milliseconds): the group is rolled back, which frees its locks, and its writes run alone.
 */
export const GROUP_LOCK_TIMEOUT_MS = 100;

/** The group gave up (see GROUP_LOCK_TIMEOUT_MS): it was rolled back, its writes run alone. */
class RunAlone extends Error {}

/**
 * Group commit on PostgreSQL, as SQLite has it (../sqlite/group-commit.ts): the writes requested
 * during one turn of the event loop run on one pooled connection in one transaction, each inside
 * its own SAVEPOINT, and their promises settle after COMMIT.
 *
 * Why: every commit waits for its WAL flush and costs the database a commit record; a group of
 * concurrent runs' writes pays one of each instead of one per write. The savepoint control
 * (`BEGIN; SAVEPOINT w` before the first write, `RELEASE SAVEPOINT w; SAVEPOINT w` between
 * writes) is written ahead of the write's first statement and answered in the same round trip,
 * so a grouped write costs its own statements' round trips, and the group one COMMIT.
 *
 * Nothing is weakened:
 * - a promise resolves only once COMMIT has returned, so a read issued after it (on any pooled
 *   connection, READ COMMITTED) sees the write; a read issued before is ordered before it, as a
 *   write nobody has seen resolve has not happened yet — reads are not queued;
 * - a write that throws is rolled back to its savepoint and rejects alone; the others still
 *   commit;
 * - a group that waits for a lock longer than GROUP_LOCK_TIMEOUT_MS, is a deadlock victim or
 *   meets a serialization failure gives up: it is rolled back (releasing every lock it held),
 *   and its writes then run alone, one after another in their order, each as an unbatched
 *   write would (its own transaction, retried as a deadlock victim). Alone, a write holds no
 *   lock of another run's while it waits, which is what a cycle of waits needs;
 * - when the transaction itself fails (the connection is lost, COMMIT refused), every write of
 *   the group rejects with a `GroupCommitError`, and the connection is discarded;
 * - writes of one group run in the order they were requested.
 *
 * At most `maxGroups` groups are in flight at once, each on its own connection; while they are,
 * new writes wait and then go out together in the next group. More than one: a group's writes
 * go out one after another, each awaiting its statements' answers, so a single lane bounds a
 * replica's writes by the database's latency (measured: one lane halved runs/s on a busy
 * machine). A run's own writes are issued one after another, so its rows are in one group at a
 * time; a lease renewal (every run the replica holds) and writes to a shared thread are the ones
 * that can cross another group.
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
      await this.#alone(writes[0]!);
      return;
    }
    let results: PromiseSettledResult<unknown>[];
    try {
      results = await this.#inOneTransaction(writes);
    } catch (err) {
      if (!(err instanceof RunAlone)) {
        for (const queued of writes) queued.reject(err);
        return;
      }
      // In order, each committed before the next starts, as the group would have run them.
      for (const queued of writes) await this.#alone(queued);
      return;
    }
    writes.forEach((queued, i) => {
      const result = results[i]!;
      if (result.status === "fulfilled") queued.resolve(result.value);
      else queued.reject(result.reason);
    });
  }

  async #alone(write: QueuedWrite): Promise<void> {
    try {
      write.resolve(await this.#connection.alone(write));
    } catch (err) {
      write.reject(err);
    }
  }

  async #inOneTransaction(writes: QueuedWrite[]): Promise<PromiseSettledResult<unknown>[]> {
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
      const results: PromiseSettledResult<unknown>[] = [];
      // Control text that goes out ahead of the next write (BEGIN, RELEASE/SAVEPOINT, setup).
      let pending = `BEGIN; SET LOCAL lock_timeout = '${GROUP_LOCK_TIMEOUT_MS}ms'; SAVEPOINT w`;
      for (const write of writes) {
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
          results.push({ status: "fulfilled", value });
          if (write.teardown !== undefined) pending = `${write.teardown}; ${pending}`;
        } catch (reason) {
          await answered().catch(() => undefined);
          if (lost !== undefined) throw lost;
          // Control refused: the transaction (or its savepoint) is not what the write ran in.
          if (controlFailed !== undefined) throw controlFailed;
          if (retryable(reason)) {
            await client.query("ROLLBACK").catch(() => undefined);
            throw new RunAlone();
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
      if (err instanceof RunAlone) throw err;
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
