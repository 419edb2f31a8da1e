import { notFound } from "../../util/errors.js";
import type { RetentionBatch } from "../retention.js";
import type { Database } from "./connection.js";
import { deleteRunsWithHiddenThreads } from "./run-deletion.js";

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
      const runs = await db.query<{ run_id: string; thread_id: string | null }>(
        `SELECT r.run_id, r.thread_id FROM run_expiries e JOIN runs r ON r.run_id = e.run_id
         WHERE e.expires_at < $1 AND ${FINISHED}
         ORDER BY e.expires_at LIMIT $2 FOR UPDATE OF r SKIP LOCKED`,
        [now, limit],
      );
      return deleteRunsWithHiddenThreads(db, runs.rows);
    });
  }
}
