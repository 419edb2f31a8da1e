import type { RunRecord } from "../types.js";
import type { Database } from "./connection.js";
import type { WriteOptions } from "./group-commit.js";
import { addMs, RUN_COLUMNS, type RunRow, toRun } from "./mapping.js";

/**
 * A run is claimable when it is pending, unowned (or its owner's lease ran out), due, and its
 * thread is free: it is the oldest pending run of its thread (runs on one thread go one at a
 * time, oldest first) and no other pending run on the thread holds a live lease (a resumed older
 * run must not start while a newer one executes). `$1` is now, `$2` the agent ids or NULL.
 *
 * Both thread checks are correlated subqueries the planner cannot turn into joins (a scalar
 * subquery with LIMIT; EXISTS with OFFSET 0): each stays an index lookup on
 * runs_pending_by_thread per candidate. As joins, a fresh or bursty queue table (statistics not
 * yet gathered) got an O(pending²) plan: 70 ms per claim at 1,000 pending runs.
 */
const CLAIMABLE = `
  r.status = 'pending'
  AND (r.owner IS NULL OR r.lease_expires_at <= $1)
  AND r.start_after <= $1
  AND ($2::text[] IS NULL OR r.agent_id = ANY ($2::text[]))
  AND r.seq = (
    SELECT o.seq FROM runs o
    WHERE o.thread_id = r.thread_id AND o.status = 'pending'
    ORDER BY o.created_at, o.seq
    LIMIT 1)
  AND NOT EXISTS (
    SELECT 1 FROM runs o
    WHERE o.thread_id = r.thread_id AND o.status = 'pending' AND o.seq <> r.seq
      AND o.owner IS NOT NULL AND o.lease_expires_at > $1
    OFFSET 0)`;

/**
 * Sent with BEGIN (one round trip): the claim walks runs_claimable oldest first and stops at the
 * first runnable run. Without these the planner, misled by missing statistics, may read and sort
 * every pending run instead; with them the plan is the same on an empty or a huge queue.
 */
const CLAIM_PLAN =
  "SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off; SET LOCAL enable_sort = off";
/** Back to the defaults for the writes that follow a claim in the same group transaction. */
const DEFAULT_PLAN =
  "SET LOCAL enable_seqscan TO DEFAULT; SET LOCAL enable_bitmapscan TO DEFAULT; SET LOCAL enable_sort TO DEFAULT";

/**
 * Step 1: the oldest claimable run whose thread row nobody else holds, locking that thread row.
 * SKIP LOCKED lets replicas claiming together each take a different thread instead of queueing.
 */
const CANDIDATE_SQL = `
  SELECT r.seq FROM runs r JOIN threads t ON t.thread_id = r.thread_id
  WHERE ${CLAIMABLE}
  ORDER BY r.created_at, r.seq
  LIMIT 1
  FOR NO KEY UPDATE OF t SKIP LOCKED`;

/**
 * Step 2, a new statement and so a new snapshot taken while holding the thread lock: every
 * insertRun, resume (updateRun to pending) and claim on that thread takes the same lock, so
 * this re-check sees all of them and the claim is decided as if the thread were serialized.
 */
const CLAIM_SQL = `
  UPDATE runs r SET owner = $3, lease_expires_at = $4,
    lease_epoch = CASE WHEN r.owner IS NOT DISTINCT FROM $3 THEN r.lease_epoch ELSE r.lease_epoch + 1 END
  WHERE r.seq = $5 AND ${CLAIMABLE}
  RETURNING ${RUN_COLUMNS}`;

const CLAIM_OPTIONS: WriteOptions = {
  transaction: true,
  setup: CLAIM_PLAN,
  teardown: DEFAULT_PLAN,
};

/** Candidates looked at per claim before answering null (each one lost to a concurrent change). */
const ATTEMPTS = 3;

/** The claim/lease protocol several replicas use to share the run queue. */
export class RunClaims {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async claim(
    owner: string,
    leaseMs: number,
    now: Date,
    agentIds?: string[],
  ): Promise<RunRecord | null> {
    if (agentIds !== undefined && agentIds.length === 0) return null;
    const nowIso = now.toISOString();
    const agents = agentIds ?? null;
    const lease = addMs(now, leaseMs);
    return this.#db.write(async (db) => {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        const candidate = await db.query<{ seq: number }>(CANDIDATE_SQL, [nowIso, agents]);
        const seq = candidate.rows[0]?.seq;
        if (seq === undefined) return null;
        const claimed = await db.query<RunRow>(CLAIM_SQL, [nowIso, agents, owner, lease, seq]);
        const row = claimed.rows[0];
        if (row !== undefined) return toRun(row);
      }
      return null;
    }, CLAIM_OPTIONS);
  }

  /**
   * One statement, so the check and the claim are atomic: a concurrent claimer waits on the row
   * and then re-evaluates the WHERE clause against the winner's owner and lease.
   */
  async claimById(
    runId: string,
    owner: string,
    leaseMs: number,
    now: Date,
  ): Promise<RunRecord | null> {
    const result = await this.#db.write((db) =>
      db.query<RunRow>(
        // A new owner starts a new epoch; the same owner taking its own run back keeps it.
        `UPDATE runs SET owner = $2, lease_expires_at = $3,
         lease_epoch = CASE WHEN owner IS NOT DISTINCT FROM $2 THEN lease_epoch ELSE lease_epoch + 1 END
       WHERE run_id = $1 AND status IN ('pending', 'interrupted')
         AND (owner IS NULL OR lease_expires_at <= $4)
       RETURNING ${RUN_COLUMNS}`,
        [runId, owner, addMs(now, leaseMs), now.toISOString()],
      ),
    );
    const row = result.rows[0];
    return row === undefined ? null : toRun(row);
  }

  async renewLeases(owner: string, leaseMs: number, now: Date): Promise<string[]> {
    // One statement for every run the replica holds, in a group of its own (see `ownGroup`).
    // The lease runs from the caller's `now`, the instant the engine also counts it from, so the
    // two agree on when it ends; a wait in the write queue ends it that much early, never late.
    const result = await this.#db.write(
      (db) =>
        db.query<{ run_id: string }>(
          `UPDATE runs SET lease_expires_at = $1 WHERE owner = $2 AND status = 'pending'
           RETURNING run_id`,
          [addMs(now, leaseMs), owner],
        ),
      { ownGroup: true },
    );
    return result.rows.map((row) => row.run_id);
  }

  async expired(now: Date): Promise<RunRecord[]> {
    const result = await this.#db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs
       WHERE status = 'pending' AND owner IS NOT NULL AND lease_expires_at <= $1
       ORDER BY created_at, seq`,
      [now.toISOString()],
    );
    return result.rows.map(toRun);
  }

  async nextStartAfter(): Promise<string | null> {
    const result = await this.#db.query<{ next: string | null }>(
      "SELECT min(start_after) AS next FROM runs WHERE status = 'pending' AND owner IS NULL",
    );
    return result.rows[0]?.next ?? null;
  }
}
