import { createHash } from "node:crypto";
import type pg from "pg";
import {
  type IdleThreadStrategy,
  idleThreadCursor,
  noneRemoved,
  parseIdleThreadCursor,
  RETENTION_OPT_OUT,
  type RetentionBatch,
  type RetentionStore,
} from "../retention.js";
import type { Database, Queryable } from "./connection.js";
import { entryDigests } from "./json.js";
import { add, checkpointsOf, deleteRunsWithHiddenThreads, type Tally } from "./run-deletion.js";
import { PostgresRunExpiries } from "./run-expiries.js";

const FINISHED = "status IN ('success', 'error', 'timeout')";

/**
 * First key of the advisory lock a sweep holds ("ACPr"); the second is derived from the schema,
 * so replicas on one schema sweep one at a time while other schemas sweep in parallel.
 */
const SWEEP_LOCK = 0x41435072;

const schemaKey = (schema: string): number =>
  createHash("sha256").update(`retention:${schema}`).digest().readInt32BE(0);

/** The opt-out entry as containment search digests it (see json.ts). */
const OPT_OUT_DIGEST = entryDigests({ [RETENTION_OPT_OUT.key]: RETENTION_OPT_OUT.value });

/**
 * The retention batches on PostgreSQL (see ../retention.ts), each one transaction. Candidates are
 * locked FOR UPDATE SKIP LOCKED, threads first as insertRun and deleteThread lock them, so a run
 * that becomes pending meanwhile either waits for the batch and finds its thread gone, or is
 * seen pending here and its thread kept.
 */
export class PostgresRetention implements RetentionStore {
  readonly #db: Database;
  readonly #schema: string;
  readonly #expiries: PostgresRunExpiries;

  constructor(db: Database, schema: string) {
    this.#db = db;
    this.#schema = schema;
    this.#expiries = new PostgresRunExpiries(db);
  }

  setRunExpiry(runId: string, expiresAt: string): Promise<void> {
    return this.#expiries.setRunExpiry(runId, expiresAt);
  }

  runExpiries(runIds: readonly string[]): Promise<Map<string, string>> {
    return this.#expiries.runExpiries(runIds);
  }

  deleteExpiredRuns(now: string, limit: number): Promise<RetentionBatch> {
    return this.#expiries.deleteExpiredRuns(now, limit);
  }

  deleteFinishedStatelessRuns(before: string, limit: number): Promise<RetentionBatch> {
    return this.#db.transaction(async (db) => {
      const runs = await db.query<{ run_id: string; thread_id: string | null }>(
        `SELECT run_id, thread_id FROM runs
         WHERE kind = 'stateless' AND ${FINISHED} AND updated_at < $1
         ORDER BY updated_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [before, limit],
      );
      return deleteRunsWithHiddenThreads(db, runs.rows);
    });
  }

  compactFinishedRunFrames(before: string, limit: number): Promise<RetentionBatch> {
    return this.#db.transaction(async (db) => {
      const removed = noneRemoved();
      const runs = await db.query<{ run_id: string }>(
        `SELECT run_id FROM runs
         WHERE frames_compacted_at IS NULL AND ${FINISHED} AND updated_at < $1
         ORDER BY updated_at, seq LIMIT $2 FOR UPDATE SKIP LOCKED`,
        [before, limit],
      );
      const runIds = runs.rows.map((r) => r.run_id);
      if (runIds.length === 0) return { handled: 0, removed };
      // Each run's last stored frame, when it is the final one: everything before it goes. A
      // run whose final frame could not be stored keeps every frame (a replay has only those to
      // show what the run did).
      const deleted = await db.query<Tally>(
        `WITH last AS (
           SELECT ids.run_id, f.seq, f.mode FROM unnest($1::text[]) AS ids(run_id)
           CROSS JOIN LATERAL (
             SELECT seq, mode FROM run_frames
             WHERE run_frames.run_id = ids.run_id ORDER BY seq DESC LIMIT 1
           ) f
         ), gone AS (
           DELETE FROM run_frames f USING last
           WHERE last.mode = 'final' AND f.run_id = last.run_id AND f.seq < last.seq
           RETURNING octet_length(f.data) AS bytes
         )
         SELECT count(*)::int AS count, coalesce(sum(bytes), 0)::bigint AS bytes FROM gone`,
        [runIds],
      );
      add(removed, "frames", deleted.rows[0]!);
      await db.query("UPDATE runs SET frames_compacted_at = now() WHERE run_id = ANY($1::text[])", [
        runIds,
      ]);
      return { handled: runIds.length, removed };
    });
  }

  sweepIdleThreads(
    before: string,
    strategy: IdleThreadStrategy,
    limit: number,
    cursor?: string,
  ): Promise<RetentionBatch> {
    return this.#db.transaction(async (db) => {
      const removed = noneRemoved();
      // The first batch of a sweep starts at the oldest thread, each next one after the last
      // thread the previous one looked at (a row comparison the index range can use).
      const after = cursor === undefined ? null : parseIdleThreadCursor(cursor);
      // Locked like deleteThread, so no run can become pending on them from here on.
      const candidates = await db.query<{ thread_id: string; updated_at: string }>(
        `SELECT thread_id, updated_at FROM threads
         WHERE NOT hidden AND updated_at < $1
           ${after === null ? "" : "AND (updated_at, thread_id) > ($3::timestamptz, $4::text)"}
         ORDER BY updated_at, thread_id LIMIT $2 FOR UPDATE`,
        after === null ? [before, limit] : [before, limit, ...after],
      );
      // Decided in a statement of its own: its snapshot sees every run committed before the
      // locks above were granted (a statement's own snapshot predates the locks it waited for).
      const decided = await db.query<{
        thread_id: string;
        checkpoint_id: string | null;
        checkpoints: number;
      }>(
        `SELECT t.thread_id, t.checkpoint_id,
           (SELECT count(*) FROM checkpoints c WHERE c.thread_id = t.thread_id)::int AS checkpoints
         FROM threads t
         WHERE t.thread_id = ANY($1::text[]) AND t.updated_at < $2
           AND NOT (t.metadata_digest @> $3::text[])
           AND NOT EXISTS (SELECT 1 FROM runs r
                           WHERE r.thread_id = t.thread_id
                             AND (r.status = 'pending' OR r.updated_at >= $2))`,
        [candidates.rows.map((t) => t.thread_id), before, OPT_OUT_DIGEST],
      );
      const idle = decided.rows;
      if (strategy === "delete") {
        const ids = idle.map((t) => t.thread_id);
        if (ids.length > 0) {
          add(removed, "frames", await framesOfThreads(db, ids));
          add(removed, "checkpoints", await checkpointsOf(db, ids));
          const runs = await db.query("DELETE FROM runs WHERE thread_id = ANY($1::text[])", [ids]);
          removed.runs = runs.rowCount ?? 0;
          const threads = await db.query("DELETE FROM threads WHERE thread_id = ANY($1::text[])", [
            ids,
          ]);
          removed.threads = threads.rowCount ?? 0;
        }
      } else {
        for (const thread of idle.filter((t) => t.checkpoints > 1)) {
          add(removed, "checkpoints", await this.#keepLatest(db, thread));
        }
      }
      const last = candidates.rows.at(-1);
      return {
        handled: candidates.rows.length,
        removed,
        cursor: last && idleThreadCursor(last),
      };
    });
  }

  async reclaimSpace(): Promise<number> {
    // PostgreSQL's (auto)vacuum makes dead rows' space reusable; nothing to do from here.
    return 0;
  }

  async exclusively(sweep: () => Promise<void>): Promise<boolean> {
    // A session lock on a connection of its own, held across the sweep's transactions.
    const client: pg.PoolClient = await this.#db.pool.connect();
    let broken: Error | undefined;
    try {
      const taken = await client.query<{ taken: boolean }>(
        "SELECT pg_try_advisory_lock($1, $2) AS taken",
        [SWEEP_LOCK, schemaKey(this.#schema)],
      );
      if (!taken.rows[0]?.taken) return false;
      try {
        await sweep();
      } finally {
        try {
          await client.query("SELECT pg_advisory_unlock($1, $2)", [
            SWEEP_LOCK,
            schemaKey(this.#schema),
          ]);
        } catch (err) {
          // The lock goes with the connection: make the pool close it rather than reuse it.
          broken = err as Error;
        }
      }
      return true;
    } finally {
      client.release(broken);
    }
  }

  async #keepLatest(
    db: Queryable,
    thread: { thread_id: string; checkpoint_id: string | null },
  ): Promise<Tally> {
    const keep =
      thread.checkpoint_id ??
      (
        await db.query<{ checkpoint_id: string }>(
          "SELECT checkpoint_id FROM checkpoints WHERE thread_id = $1 ORDER BY seq DESC LIMIT 1",
          [thread.thread_id],
        )
      ).rows[0]?.checkpoint_id;
    if (keep === undefined) return { count: 0, bytes: 0 };
    const gone = await db.query<Tally>(
      `WITH gone AS (
         DELETE FROM checkpoints WHERE thread_id = $1 AND checkpoint_id <> $2
         RETURNING octet_length("values"::text) + octet_length(messages::text) AS bytes
       )
       SELECT count(*)::int AS count, coalesce(sum(bytes), 0)::bigint AS bytes FROM gone`,
      [thread.thread_id, keep],
    );
    // History now starts at the kept checkpoint: no parent that no longer exists.
    await db.query("UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE checkpoint_id = $1", [
      keep,
    ]);
    return gone.rows[0]!;
  }
}

async function framesOfThreads(db: Queryable, threadIds: string[]): Promise<Tally> {
  const result = await db.query<Tally>(
    `SELECT count(*)::int AS count, coalesce(sum(octet_length(f.data)), 0)::bigint AS bytes
     FROM runs r JOIN run_frames f ON f.run_id = r.run_id WHERE r.thread_id = ANY($1::text[])`,
    [threadIds],
  );
  return result.rows[0]!;
}
