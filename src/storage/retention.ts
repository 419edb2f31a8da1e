/**
 * The storage side of retention (the sweeps themselves are in src/retention): each call handles
 * one small batch in one transaction, so a sweep never holds the database for long, and says
 * how many candidates it handled (a batch shorter than `limit` means there is nothing more).
 *
 * "Finished" means a terminal status (success, error, timeout). An interrupted run waits for an
 * answer and a pending one is queued or executing: no rule touches either, nor anything a
 * pending run needs.
 */

/** What a batch removed. `bytes`: stored JSON text of the frames and checkpoints removed. */
export interface RetentionRemoved {
  runs: number;
  threads: number;
  checkpoints: number;
  frames: number;
  bytes: number;
}

export interface RetentionBatch {
  /** Candidates handled (runs or threads); fewer than the limit when none are left. */
  handled: number;
  removed: RetentionRemoved;
  /** Where the next batch of the same sweep continues (idle threads), when it is not done. */
  cursor?: string;
}

/** What `idleThreads` does to a thread idle too long. */
export type IdleThreadStrategy = "delete" | "keep-latest";

/**
 * The thread metadata that keeps a thread out of the idle-thread rule: `{"retention": "keep"}`.
 * Documented in docs/storage.md.
 */
export const RETENTION_OPT_OUT = { key: "retention", value: "keep" } as const;

export interface RetentionStore {
  /**
   * Deletes up to `limit` stateless runs that finished before `before` (ISO time of their last
   * update), oldest first, with their frames, webhook deliveries, and their hidden thread with
   * its checkpoints when it is still there.
   */
  deleteFinishedStatelessRuns(before: string, limit: number): Promise<RetentionBatch>;
  /**
   * Compacts the frames of up to `limit` runs that finished before `before`: every frame before
   * the run's last `final` frame goes; that frame stays, with its seq, so a replay (from 0 or
   * from any position before it) gets the run's outcome, and `last_seq` is unchanged. A run
   * whose final frame was never stored keeps all its frames. Each run is handled once.
   */
  compactFinishedRunFrames(before: string, limit: number): Promise<RetentionBatch>;
  /**
   * Looks at up to `limit` visible threads not updated since `before`, least recently updated
   * first, after `cursor` (from the previous batch of the same sweep), and handles those idle:
   * no run of theirs updated since `before` or pending, not opted out (RETENTION_OPT_OUT).
   * `delete` removes each with its runs (and their frames) and checkpoints; `keep-latest` keeps
   * the thread and its runs and removes every checkpoint but the current one (which then has
   * no parent). A sweep that follows the cursors looks at each old thread once.
   */
  sweepIdleThreads(
    before: string,
    strategy: IdleThreadStrategy,
    limit: number,
    cursor?: string,
  ): Promise<RetentionBatch>;
  /**
   * Gives freed space back to the file system where the backend can (SQLite files made with
   * incremental auto-vacuum), at most `maxPages` pages per call; returns the bytes released.
   */
  reclaimSpace(maxPages: number): Promise<number>;
  /**
   * Runs `sweep` unless another replica is sweeping the same database (PostgreSQL: an advisory
   * lock held for the whole sweep); returns false, without running it, when one is.
   */
  exclusively(sweep: () => Promise<void>): Promise<boolean>;
  /**
   * Sets when a run is to be deleted (an MCP task's granted ttl): `expiresAt`, an ISO time.
   * Replaces the run's earlier expiry; not_found when the run is not there. The expiry goes with
   * its run.
   */
  setRunExpiry(runId: string, expiresAt: string): Promise<void>;
  /** The expiries of those of `runIds` that have one (ISO times), by run id. */
  runExpiries(runIds: readonly string[]): Promise<Map<string, string>>;
  /**
   * Deletes up to `limit` finished runs whose expiry is before `now`, soonest first, as
   * `deleteFinishedStatelessRuns` deletes a run (its frames, webhook deliveries, and its own
   * hidden thread with its checkpoints when no pending run needs it). A run still pending or
   * interrupted at its expiry stays, and goes at the first batch after it has finished. Runs
   * another replica's batch is deleting are passed over (PostgreSQL: skipped row locks).
   */
  deleteExpiredRuns(now: string, limit: number): Promise<RetentionBatch>;
}

export function noneRemoved(): RetentionRemoved {
  return { runs: 0, threads: 0, checkpoints: 0, frames: 0, bytes: 0 };
}

/**
 * The idle-thread sweep's cursor: where the last batch stopped, in the order both backends walk
 * idle threads (updated_at, then thread_id). Opaque to the sweeper.
 */
export function idleThreadCursor(last: { updated_at: string; thread_id: string }): string {
  return JSON.stringify([last.updated_at, last.thread_id]);
}

export function parseIdleThreadCursor(cursor: string): [string, string] {
  const parsed = JSON.parse(cursor) as unknown;
  if (
    !Array.isArray(parsed) ||
    parsed.length !== 2 ||
    !parsed.every((v) => typeof v === "string")
  ) {
    throw new Error(`not a retention cursor: ${cursor}`);
  }
  return parsed as [string, string];
}
