import { randomUUID } from "node:crypto";
import type pg from "pg";
import { conflict, notFound } from "../../util/errors.js";
import type { CreateThreadInput, ThreadRecord, ThreadSearch, ThreadStatus } from "../types.js";
import { type Database, pgCode, type Queryable, TRANSACTION } from "./connection.js";
import { assertObject, entryDigests, toJson } from "./json.js";
import { nowIso, rethrowInvalid, THREAD_COLUMNS, type ThreadRow, toThread } from "./mapping.js";

export const INSERT_THREAD = `
  INSERT INTO threads
    (thread_id, created_at, updated_at, metadata, metadata_digest, status, "values",
     values_digest, messages, checkpoint_id, hidden, principal)
  VALUES ($1, $2, $2, $3, $4, $6, 'null', '{}', 'null', NULL, $5, $7)`;

/** Threads, thread search, and the multi-table thread operations (delete, copy). */
export class ThreadRepository {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async create(input: CreateThreadInput): Promise<{ thread: ThreadRecord; created: boolean }> {
    assertObject(input.metadata, "thread metadata");
    const params = [
      input.thread_id,
      nowIso(),
      toJson(input.metadata),
      entryDigests(input.metadata),
      input.hidden === true,
      input.status ?? "idle",
      input.principal ?? null,
    ];
    // Insert-or-read, looping only if the existing thread is deleted between the two statements.
    // The read goes to the write's own connection: in a group, the thread may be an earlier
    // write's, not committed yet.
    return this.#db.write(async (db) => {
      for (;;) {
        let inserted: pg.QueryResult<ThreadRow>;
        try {
          inserted = await db.query<ThreadRow>(
            `${INSERT_THREAD} ON CONFLICT (thread_id) DO NOTHING RETURNING ${THREAD_COLUMNS}`,
            params,
          );
        } catch (err) {
          rethrowInvalid(err, "thread");
        }
        const row = inserted.rows[0];
        if (row !== undefined) return { thread: toThread(row), created: true };
        if (input.if_exists === "raise") {
          throw conflict(`thread ${input.thread_id} already exists`);
        }
        const existing = await this.get(input.thread_id, db);
        if (existing !== null) return { thread: existing, created: false };
      }
    });
  }

  async get(threadId: string, db: Queryable = this.#db): Promise<ThreadRecord | null> {
    const result = await db.query<ThreadRow>(
      `SELECT ${THREAD_COLUMNS} FROM threads WHERE thread_id = $1`,
      [threadId],
    );
    const row = result.rows[0];
    return row === undefined ? null : toThread(row);
  }

  /** Shallow merge in JS: `json` has no merge operator, and jsonb's `||` would reorder keys. */
  async mergeMetadata(threadId: string, patch: Record<string, unknown>): Promise<ThreadRecord> {
    assertObject(patch, "thread metadata");
    return this.#db.write(async (db) => {
      const current = await db.query<{ metadata: Record<string, unknown> }>(
        "SELECT metadata FROM threads WHERE thread_id = $1 FOR NO KEY UPDATE",
        [threadId],
      );
      const row = current.rows[0];
      if (row === undefined) throw notFound("thread", threadId);
      const merged = { ...row.metadata, ...patch };
      try {
        const updated = await db.query<ThreadRow>(
          `UPDATE threads SET metadata = $2, metadata_digest = $3, updated_at = $4
           WHERE thread_id = $1 RETURNING ${THREAD_COLUMNS}`,
          [threadId, toJson(merged), entryDigests(merged), nowIso()],
        );
        return toThread(updated.rows[0] as ThreadRow);
      } catch (err) {
        rethrowInvalid(err, "thread metadata");
      }
    }, TRANSACTION);
  }

  async setStatus(threadId: string, status: ThreadStatus): Promise<void> {
    await this.#db.write(async (db) => {
      let result: pg.QueryResult;
      try {
        result = await db.query(
          "UPDATE threads SET status = $2, updated_at = $3 WHERE thread_id = $1",
          [threadId, status, nowIso()],
        );
      } catch (err) {
        rethrowInvalid(err, "thread status");
      }
      if (result.rowCount === 0) throw notFound("thread", threadId);
    });
  }

  /**
   * The thread row is locked first: insertRun locks it too, so a run cannot become pending
   * between the busy check and the delete.
   */
  async delete(threadId: string): Promise<void> {
    await this.#db.write(async (db) => {
      const locked = await db.query("SELECT 1 FROM threads WHERE thread_id = $1 FOR UPDATE", [
        threadId,
      ]);
      if (locked.rowCount === 0) throw notFound("thread", threadId);
      const pending = await db.query(
        "SELECT 1 FROM runs WHERE thread_id = $1 AND status = 'pending' LIMIT 1",
        [threadId],
      );
      if (pending.rowCount !== 0) throw conflict(`thread ${threadId} has a pending run`);
      // Cascades to checkpoints; runs keep existing with thread_id NULL.
      await db.query("DELETE FROM threads WHERE thread_id = $1", [threadId]);
    }, TRANSACTION);
  }

  /** A visible, idle copy with the same metadata, values, messages and remapped checkpoints. */
  async copy(
    threadId: string,
    newThreadId: string,
    principal: string | null,
  ): Promise<ThreadRecord> {
    return this.#db.write(async (db) => {
      // FOR SHARE holds off checkpoint writers (they update the thread row) until the copy is done.
      const source = await db.query<{ checkpoint_id: string | null }>(
        "SELECT checkpoint_id FROM threads WHERE thread_id = $1 FOR SHARE",
        [threadId],
      );
      const sourceRow = source.rows[0];
      if (sourceRow === undefined) throw notFound("thread", threadId);
      try {
        await db.query(
          `INSERT INTO threads
             (thread_id, created_at, updated_at, metadata, metadata_digest, status, "values",
              values_digest, messages, checkpoint_id, hidden, principal)
           SELECT $2, $3, $3, metadata, metadata_digest, 'idle', "values", values_digest, messages,
                  NULL, false, $4
           FROM threads WHERE thread_id = $1`,
          [threadId, newThreadId, nowIso(), principal],
        );
      } catch (err) {
        if (pgCode(err) === "23505") throw conflict(`thread ${newThreadId} already exists`);
        rethrowInvalid(err, "thread");
      }
      const current = await copyCheckpoints(db, threadId, newThreadId, sourceRow.checkpoint_id);
      const copied = await db.query<ThreadRow>(
        `UPDATE threads SET checkpoint_id = $2 WHERE thread_id = $1 RETURNING ${THREAD_COLUMNS}`,
        [newThreadId, current],
      );
      return toThread(copied.rows[0] as ThreadRow);
    }, TRANSACTION);
  }

  async search(search: ThreadSearch): Promise<ThreadRecord[]> {
    const where = ["NOT hidden"];
    const params: unknown[] = [];
    if (search.status !== undefined) {
      params.push(search.status);
      where.push(`status = $${params.length}`);
    }
    if (search.principal !== undefined) {
      params.push(search.principal);
      where.push(`principal = $${params.length}`);
    }
    if (search.metadata !== undefined) {
      assertObject(search.metadata, "metadata filter");
      const digests = entryDigests(search.metadata);
      if (digests.length > 0) {
        params.push(digests);
        where.push(`metadata_digest @> $${params.length}::text[]`);
      }
    }
    if (search.values !== undefined) {
      assertObject(search.values, "values filter");
      const digests = entryDigests(search.values);
      if (digests.length > 0) {
        params.push(digests);
        where.push(`values_digest @> $${params.length}::text[]`);
      }
    }
    params.push(search.limit, search.offset);
    const result = await this.#db.query<ThreadRow>(
      `SELECT ${THREAD_COLUMNS} FROM threads WHERE ${where.join(" AND ")}
       ORDER BY created_at DESC, thread_id DESC
       LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return result.rows.map(toThread);
  }
}

/**
 * Copies every checkpoint of `fromThread` to `toThread` in creation order, with new ids and parent
 * links remapped (a parent outside the thread becomes null). The data never leaves the database:
 * only ids come back to build the map. Returns the new id of `currentId`.
 */
async function copyCheckpoints(
  db: Queryable,
  fromThread: string,
  toThread: string,
  currentId: string | null,
): Promise<string | null> {
  const source = await db.query<{ checkpoint_id: string; parent_checkpoint_id: string | null }>(
    "SELECT checkpoint_id, parent_checkpoint_id FROM checkpoints WHERE thread_id = $1 ORDER BY seq",
    [fromThread],
  );
  if (source.rows.length === 0) return null;
  const idMap = new Map<string, string>();
  for (const row of source.rows) idMap.set(row.checkpoint_id, randomUUID());
  const oldIds = source.rows.map((row) => row.checkpoint_id);
  const newIds = oldIds.map((old) => idMap.get(old));
  const parents = source.rows.map((row) =>
    row.parent_checkpoint_id === null ? null : (idMap.get(row.parent_checkpoint_id) ?? null),
  );
  // Identity values follow the ORDER BY, so the copies keep the originals' order.
  await db.query(
    `INSERT INTO checkpoints
       (checkpoint_id, thread_id, parent_checkpoint_id, created_at, "values", values_digest,
        messages, metadata, run_id)
     SELECT m.new_id, $1, m.new_parent, c.created_at, c."values", c.values_digest, c.messages,
            c.metadata, c.run_id
     FROM checkpoints c
     JOIN unnest($2::text[], $3::text[], $4::text[]) AS m(old_id, new_id, new_parent)
       ON c.checkpoint_id = m.old_id
     ORDER BY c.seq`,
    [toThread, oldIds, newIds, parents],
  );
  return currentId === null ? null : (idMap.get(currentId) ?? null);
}
