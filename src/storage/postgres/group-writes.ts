/**
 * What the PostgreSQL group commit (group-commit.ts) takes and gives: a write and how it wants
 * to run, the connection layer it runs on, how a group ends, and the bounds of a group.
 */
import type pg from "pg";
import type { GiveUpReason, WriteCounter } from "../write-counts.js";

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
  /**
   * Never shares a group: a write that locks many rows (every lease a replica holds) would
   * hold them all until the group commits, and wait while holding them.
   */
  ownGroup?: boolean;
  /**
   * Every statement it runs on its way to success is issued before its first await, so none
   * depends on another's answer (statements issued later only lead to its error). A group made
   * only of such writes sends them all at once, without savepoints (see PgGroupCommit).
   */
  pipelined?: boolean;
}

export interface QueuedWrite extends WriteOptions {
  work: (db: WriteQueryable) => Promise<unknown>;
  /** Its pipelined group failed: it runs again in a group that runs its writes one by one. */
  oneByOne?: boolean;
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
  /**
   * Why a write must leave the group (a lock wait cut short, a deadlock victim, a serialization
   * failure), or null when its error is its own and it rejects in the group.
   */
  givesUp(err: unknown): GiveUpReason | null;
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
 * How long a statement of a group waits for a lock before the group gives up on that write
 * (`SET LOCAL lock_timeout`, per lock acquisition). A group holds the locks of all its writes
 * until it commits, across runs, so two groups (on two replicas, or two connections of one)
 * that take the same rows in opposite orders deadlock, and PostgreSQL would notice only after
 * `deadlock_timeout` (1 s by default). Three replicas with no bound lost whole seconds that way
 * and missed lease renewals. Well above GROUP_BUDGET_MS: waiting for another group to commit
 * takes less.
 */
export const GROUP_LOCK_TIMEOUT_MS = 100;

/**
 * How long a group takes writes: past it, the group commits what it has run and the writes left
 * go back to the front of the queue, for the next group. A group's writes go out one after
 * another, a round trip or more each; 64 writes of several statements took 250 ms here. The
 * budget keeps every group's locks short, so that another group waiting for them stays well
 * under GROUP_LOCK_TIMEOUT_MS.
 */
export const GROUP_BUDGET_MS = 25;

/** How a group transaction ended: what it committed, and what it left to run. */
export interface GroupOutcome {
  /** The writes it ran, settled in order (the first `results.length` of the group). */
  results: PromiseSettledResult<unknown>[];
  /** The write it gave up on, rolled back to its savepoint: it runs alone next. */
  giveUp?: QueuedWrite;
  /** The writes after those, not run: back to the front of the queue. */
  rest: QueuedWrite[];
}
