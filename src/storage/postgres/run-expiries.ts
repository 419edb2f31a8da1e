import { notFound } from "../../util/errors.js";
import { noneRemoved, type RetentionBatch, type RetentionRemoved } from "../retention.js";
import type { Database, Queryable } from "./connection.js";

const FINISHED = "r.status IN ('success', 'error', 'timeout')";

/**
 * Run expiries on PostgreSQL (migration 016; see RetentionStore in ../retention.ts). A batch
 * locks its runs FOR UPDATE SKIP LOCKED, threads as deleteFinishedStatelessRuns does, so two
 * replicas sweeping at once each delete other runs, and a run deleted meanwhile (by a user, by
 * another rule) is simply not there any more: no batch fails on what another removed.
 */
export class PostgresRunExpiries {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async setRunExpiry(runId: string, expiresAt: string): Promise<void> {
    // Inserted only for a run that is there: a run id that is not is no foreign-key error.
    const result = await this.#db.query(
      `INSERT INTO run_expiries (run_id, expires_at)
       SELECT run_id, $2 FROM runs WHERE run_id = $1
       ON CONFLICT (run_id) DO UPDATE SET expires_at = excluded.expires_at`,
      [runId, expiresAt],
    );
    if (result.rowCount === 0) throw notFound("run", runId);
  }

  async runExpiries(runIds: readonly string[]): Promise<Map<string, string>> {
    const expiries = new Map<string, string>();
    if (runIds.length === 0) return expiries;
    const result = await this.#db.query<{ run_id: string; expires_at: string }>(
      "SELECT run_id, expires_at FROM run_expiries WHERE run_id = ANY($1::text[])",
      [runIds],
    );
    for (const row of result.rows) expiries.set(row.run_id, row.expires_at);
    return expiries;
  }

  deleteExpiredRuns(now: string, limit: number): Promise<RetentionBatch> {
    return this.#db.transaction(async (db) => {
      const removed = noneRemoved();
      const runs = await db.query<{ run_id: string; thread_id: string | null }>(
        `SELECT r.run_id, r.thread_id FROM run_expiries e JOIN runs r ON r.run_id = e.run_id
         WHERE e.expires_at < $1 AND ${FINISHED}
         ORDER BY e.expires_at LIMIT $2 FOR UPDATE OF r SKIP LOCKED`,
        [now, limit],
      );
      const runIds = runs.rows.map((r) => r.run_id);
      if (runIds.length === 0) return { handled: 0, removed };
      const threadIds = runs.rows.flatMap((r) => (r.thread_id === null ? [] : [r.thread_id]));
      // Only the runs' own hidden threads, and never one a pending run still needs.
      const threads = await db.query<{ thread_id: string }>(
        `SELECT thread_id FROM threads t
         WHERE thread_id = ANY($1::text[]) AND hidden
           AND NOT EXISTS (SELECT 1 FROM runs r
                           WHERE r.thread_id = t.thread_id AND r.status = 'pending')
         FOR UPDATE SKIP LOCKED`,
        [threadIds],
      );
      const hidden = threads.rows.map((t) => t.thread_id);
      add(removed, "frames", await framesOfRuns(db, runIds));
      add(removed, "checkpoints", await checkpointsOf(db, hidden));
      // Frames, webhook deliveries and the expiry go with the runs (ON DELETE CASCADE),
      // checkpoints with the threads.
      const deletedRuns = await db.query("DELETE FROM runs WHERE run_id = ANY($1::text[])", [
        runIds,
      ]);
      removed.runs = deletedRuns.rowCount ?? 0;
      const deletedThreads = await db.query(
        "DELETE FROM threads WHERE thread_id = ANY($1::text[])",
        [hidden],
      );
      removed.threads = deletedThreads.rowCount ?? 0;
      return { handled: runIds.length, removed };
    });
  }
}

interface Tally {
  count: number;
  bytes: number;
}

async function framesOfRuns(db: Queryable, runIds: string[]): Promise<Tally> {
  const result = await db.query<Tally>(
    `SELECT count(*)::int AS count, coalesce(sum(octet_length(data)), 0)::bigint AS bytes
     FROM run_frames WHERE run_id = ANY($1::text[])`,
    [runIds],
  );
  return result.rows[0]!;
}

async function checkpointsOf(db: Queryable, threadIds: string[]): Promise<Tally> {
  if (threadIds.length === 0) return { count: 0, bytes: 0 };
  const result = await db.query<Tally>(
    `SELECT count(*)::int AS count,
            coalesce(sum(octet_length("values"::text) + octet_length(messages::text)), 0)::bigint
              AS bytes
     FROM checkpoints WHERE thread_id = ANY($1::text[])`,
    [threadIds],
  );
  return result.rows[0]!;
}

function add(removed: RetentionRemoved, kind: "frames" | "checkpoints", tally: Tally): void {
  removed[kind] += tally.count;
  removed.bytes += tally.bytes;
}
