import type pg from "pg";
import { conflict, notFound } from "../../util/errors.js";
import type { CheckpointRecord, NewCheckpoint } from "../types.js";
import { type Database, pgCode, type Queryable, TRANSACTION } from "./connection.js";
import { assertObject, entryDigests, toJson } from "./json.js";
import {
  CHECKPOINT_COLUMNS,
  type CheckpointRow,
  nowIso,
  rethrowInvalid,
  toCheckpoint,
} from "./mapping.js";

/** Checkpoints of a thread and the thread's "current checkpoint" pointer (values, messages). */
export class CheckpointRepository {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async add(threadId: string, checkpoint: NewCheckpoint): Promise<CheckpointRecord> {
    return this.#db.write((db) => this.addIn(db, threadId, checkpoint), TRANSACTION);
  }

  /** `add` inside the caller's transaction (a run's end: checkpoint and outcome in one commit). */
  async addIn(
    db: Queryable,
    threadId: string,
    checkpoint: NewCheckpoint,
  ): Promise<CheckpointRecord> {
    assertObject(checkpoint.metadata, "checkpoint metadata");
    const values = toJson(checkpoint.values);
    const valuesDigest = entryDigests(checkpoint.values);
    const messages = toJson(checkpoint.messages);
    const runId = checkpoint.metadata.run_id;
    // Locking the thread serializes writers, so "parent = current checkpoint" stays linear.
    const pointer = await lockThread(db, threadId);
    const parent =
      checkpoint.parent_checkpoint_id === undefined ? pointer : checkpoint.parent_checkpoint_id;
    if (parent !== null) await requireCheckpoint(db, threadId, parent);
    const now = nowIso();
    let inserted: pg.QueryResult<CheckpointRow>;
    try {
      inserted = await db.query<CheckpointRow>(
        `INSERT INTO checkpoints
           (checkpoint_id, thread_id, parent_checkpoint_id, created_at, "values", values_digest,
            messages, metadata, run_id)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
         RETURNING ${CHECKPOINT_COLUMNS}`,
        [
          checkpoint.checkpoint_id,
          threadId,
          parent,
          now,
          values,
          valuesDigest,
          messages,
          toJson(checkpoint.metadata),
          typeof runId === "string" && !runId.includes("\u0000") ? runId : null,
        ],
      );
    } catch (err) {
      if (pgCode(err) === "23505") {
        throw conflict(`checkpoint ${checkpoint.checkpoint_id} already exists`);
      }
      rethrowInvalid(err, "checkpoint");
    }
    await db.query(
      `UPDATE threads SET "values" = $2, values_digest = $3, messages = $4, checkpoint_id = $5,
         updated_at = $6
       WHERE thread_id = $1`,
      [threadId, values, valuesDigest, messages, checkpoint.checkpoint_id, now],
    );
    return toCheckpoint(inserted.rows[0] as CheckpointRow);
  }

  async get(threadId: string, checkpointId: string): Promise<CheckpointRecord | null> {
    const result = await this.#db.query<CheckpointRow>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints WHERE thread_id = $1 AND checkpoint_id = $2`,
      [threadId, checkpointId],
    );
    const row = result.rows[0];
    return row === undefined ? null : toCheckpoint(row);
  }

  /**
   * Newest first. Throws not_found for an unknown thread or an unknown `before` checkpoint; those
   * are only looked up when the page comes back empty (a non-empty page proves both exist).
   */
  async list(
    threadId: string,
    options: { limit: number; before?: string },
  ): Promise<CheckpointRecord[]> {
    const before = options.before ?? null;
    const page = await this.#db.query<CheckpointRow>(
      `SELECT ${CHECKPOINT_COLUMNS} FROM checkpoints
       WHERE thread_id = $1
         AND ($3::text IS NULL OR seq < (
           SELECT seq FROM checkpoints WHERE thread_id = $1 AND checkpoint_id = $3))
       ORDER BY seq DESC LIMIT $2`,
      [threadId, options.limit, before],
    );
    if (page.rows.length > 0) return page.rows.map(toCheckpoint);
    const found = await this.#db.query<{ thread: boolean; before: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM threads WHERE thread_id = $1) AS thread,
              EXISTS (SELECT 1 FROM checkpoints WHERE thread_id = $1 AND checkpoint_id = $2)
                AS before`,
      [threadId, before],
    );
    const row = found.rows[0];
    if (row?.thread !== true) throw notFound("thread", threadId);
    if (before !== null && row.before !== true) throw notFound("checkpoint", before);
    return [];
  }

  async restore(
    threadId: string,
    checkpointId: string | null,
    discardRunId: string | undefined,
  ): Promise<void> {
    await this.#db.write(async (db) => {
      await lockThread(db, threadId);
      if (discardRunId !== undefined && !discardRunId.includes("\u0000")) {
        await db.query("DELETE FROM checkpoints WHERE thread_id = $1 AND run_id = $2", [
          threadId,
          discardRunId,
        ]);
      }
      if (checkpointId === null) {
        await db.query(
          `UPDATE threads SET "values" = 'null', values_digest = '{}', messages = 'null',
             checkpoint_id = NULL, updated_at = $2
           WHERE thread_id = $1`,
          [threadId, nowIso()],
        );
        return;
      }
      const restored = await db.query(
        `UPDATE threads t SET "values" = c."values", values_digest = c.values_digest,
           messages = c.messages, checkpoint_id = c.checkpoint_id, updated_at = $3
         FROM checkpoints c
         WHERE t.thread_id = $1 AND c.thread_id = $1 AND c.checkpoint_id = $2`,
        [threadId, checkpointId, nowIso()],
      );
      // Also when the checkpoint was the discarded run's own: the transaction rolls back.
      if (restored.rowCount === 0) throw notFound("checkpoint", checkpointId);
    }, TRANSACTION);
  }
}

/** Locks the thread row against other writers and returns its current checkpoint id. */
async function lockThread(db: Queryable, threadId: string): Promise<string | null> {
  const result = await db.query<{ checkpoint_id: string | null }>(
    "SELECT checkpoint_id FROM threads WHERE thread_id = $1 FOR NO KEY UPDATE",
    [threadId],
  );
  const row = result.rows[0];
  if (row === undefined) throw notFound("thread", threadId);
  return row.checkpoint_id;
}

async function requireCheckpoint(db: Queryable, threadId: string, checkpointId: string) {
  const result = await db.query(
    "SELECT 1 FROM checkpoints WHERE thread_id = $1 AND checkpoint_id = $2",
    [threadId, checkpointId],
  );
  if (result.rowCount === 0) throw notFound("checkpoint", checkpointId);
}
