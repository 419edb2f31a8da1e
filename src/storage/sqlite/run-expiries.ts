import type Database from "better-sqlite3";
import { notFound } from "../../util/errors.js";
import type { RetentionBatch } from "../retention.js";
import { deleteRunsWithHiddenThreads, prepareRunDeletion } from "./run-deletion.js";

/** Runs a write through the storage's group commit (as retention.ts's SqliteWrite). */
type SqliteWrite = <T>(work: () => T) => Promise<T>;

const FINISHED = "r.status IN ('success', 'error', 'timeout')";

/**
 * Run expiries on SQLite (migration 016; see RetentionStore in ../retention.ts): when a run is
 * to be deleted, and the batches that delete the finished runs whose time has come. Each write
 * goes through the group commit, a batch in one transaction of its own.
 */
export class SqliteRunExpiries {
  readonly #db: Database.Database;
  readonly #write: SqliteWrite;
  readonly #s: ReturnType<typeof prepare>;
  readonly #deleteTx: Database.Transaction<(now: string, limit: number) => RetentionBatch>;

  constructor(db: Database.Database, write: SqliteWrite) {
    this.#db = db;
    this.#write = write;
    this.#s = prepare(db);
    this.#deleteTx = db.transaction((now, limit) => this.#deleteExpired(now, limit));
  }

  setRunExpiry(runId: string, expiresAt: string): Promise<void> {
    return this.#write(() => {
      if (this.#s.upsert.run(runId, expiresAt, runId).changes === 0) throw notFound("run", runId);
    });
  }

  async runExpiries(runIds: readonly string[]): Promise<Map<string, string>> {
    const expiries = new Map<string, string>();
    if (runIds.length === 0) return expiries;
    const rows = this.#db
      .prepare<string[], { run_id: string; expires_at: string }>(
        `SELECT run_id, expires_at FROM run_expiries
         WHERE run_id IN (${runIds.map(() => "?").join(", ")})`,
      )
      .all(...runIds);
    for (const row of rows) expiries.set(row.run_id, row.expires_at);
    return expiries;
  }

  deleteExpiredRuns(now: string, limit: number): Promise<RetentionBatch> {
    return this.#write(() => this.#deleteTx.immediate(now, limit));
  }

  #deleteExpired(now: string, limit: number): RetentionBatch {
    return deleteRunsWithHiddenThreads(this.#s, this.#s.expired.all(now, limit));
  }
}

function prepare(db: Database.Database) {
  return {
    // Inserts only for a run that is there (a run id that is not is no foreign-key error).
    upsert: db.prepare<[string, string, string]>(
      `INSERT INTO run_expiries (run_id, expires_at)
       SELECT ?, ? WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = ?)
       ON CONFLICT (run_id) DO UPDATE SET expires_at = excluded.expires_at`,
    ),
    expired: db.prepare<[string, number], { run_id: string; thread_id: string | null }>(
      `SELECT r.run_id, r.thread_id FROM run_expiries e JOIN runs r ON r.run_id = e.run_id
       WHERE e.expires_at < ? AND ${FINISHED}
       ORDER BY e.expires_at LIMIT ?`,
    ),
    ...prepareRunDeletion(db),
  };
}
