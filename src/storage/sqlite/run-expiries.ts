import type Database from "better-sqlite3";
import { notFound } from "../../util/errors.js";
import { noneRemoved, type RetentionBatch, type RetentionRemoved } from "../retention.js";

/** Runs a write through the storage's group commit (as retention.ts's SqliteWrite). */
type SqliteWrite = <T>(work: () => T) => Promise<T>;

const FINISHED = "r.status IN ('success', 'error', 'timeout')";

interface Tally {
  count: number;
  bytes: number;
}

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
    const s = this.#s;
    const removed = noneRemoved();
    const runs = s.expired.all(now, limit);
    for (const run of runs) {
      add(removed, "frames", s.framesOfRun.get(run.run_id)!);
      // Frames, webhook deliveries, run metadata and the expiry go with the run (ON DELETE CASCADE).
      removed.runs += s.deleteRun.run(run.run_id).changes;
      if (run.thread_id === null) continue;
      const checkpoints = s.checkpointsOfThread.get(run.thread_id)!;
      // Only the run's own hidden thread, and never one a pending run still needs.
      if (s.deleteHiddenThread.run({ id: run.thread_id }).changes === 1) {
        removed.threads += 1;
        add(removed, "checkpoints", checkpoints);
      }
    }
    return { handled: runs.length, removed };
  }
}

function prepare(db: Database.Database) {
  const tally = (sql: string) => db.prepare<[string], Tally>(sql);
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
    deleteRun: db.prepare<[string]>("DELETE FROM runs WHERE run_id = ?"),
    deleteHiddenThread: db.prepare<[{ id: string }]>(
      `DELETE FROM threads WHERE thread_id = @id AND hidden = 1 AND NOT EXISTS (
         SELECT 1 FROM runs WHERE thread_id = @id AND status = 'pending')`,
    ),
    framesOfRun: tally(
      `SELECT coalesce(sum(frames), 0) AS count, coalesce(sum(octet_length(data)), 0) AS bytes
       FROM run_frames WHERE run_id = ?`,
    ),
    checkpointsOfThread: tally(
      `SELECT count(*) AS count,
              coalesce(sum(octet_length("values") + octet_length(messages)), 0) AS bytes
       FROM checkpoints WHERE thread_id = ?`,
    ),
  };
}

function add(removed: RetentionRemoved, kind: "frames" | "checkpoints", tally: Tally): void {
  removed[kind] += tally.count;
  removed.bytes += tally.bytes;
}
