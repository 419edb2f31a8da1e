import type Database from "better-sqlite3";
import { conflict, notFound } from "../../util/errors.js";
import type { CreateThreadInput, ThreadRecord, ThreadSearch, ThreadStatus } from "../types.js";
import type { CheckpointRepository } from "./checkpoints.js";
import { assertObject, canonicalEntries, toJson } from "./json.js";
import { nowIso, rethrowCheck, sqliteCode, type ThreadRow, toThread } from "./mapping.js";
import { MetadataIndex } from "./metadata-index.js";
import { isOfCheckpoint } from "./packed-json.js";
import { StatementCache } from "./statements.js";

/** Threads, their metadata index (thread_metadata) and thread search. */
export class ThreadRepository {
  readonly #checkpoints: CheckpointRepository;
  readonly #cache: StatementCache;
  readonly #select: Database.Statement<[string], ThreadRow>;
  readonly #checkpointState: Database.Statement<[string], Pick<ThreadRow, "values" | "messages">>;
  readonly #insert: Database.Statement;
  readonly #updateMetadata: Database.Statement;
  readonly #metadata: MetadataIndex;
  readonly #updateStatus: Database.Statement;
  readonly #hasPendingRun: Database.Statement<[string], { one: number }>;
  readonly #deleteIfIdle: Database.Statement<[{ id: string }]>;
  readonly #createTx: Database.Transaction<
    (input: CreateThreadInput) => { thread: ThreadRecord; created: boolean }
  >;
  readonly #mergeTx: Database.Transaction<
    (threadId: string, patch: Record<string, unknown>) => ThreadRecord
  >;
  readonly #deleteTx: Database.Transaction<(threadId: string) => void>;
  readonly #copyTx: Database.Transaction<
    (threadId: string, newThreadId: string, principal: string | null) => ThreadRecord
  >;

  constructor(db: Database.Database, checkpoints: CheckpointRepository) {
    this.#checkpoints = checkpoints;
    this.#cache = new StatementCache(db);
    this.#select = db.prepare("SELECT * FROM threads WHERE thread_id = ?");
    this.#checkpointState = db.prepare(
      'SELECT "values", messages FROM checkpoints WHERE checkpoint_id = ?',
    );
    this.#insert = db.prepare(
      `INSERT INTO threads
         (thread_id, created_at, updated_at, metadata, status, "values", messages, checkpoint_id, hidden,
          principal)
       VALUES
         (@thread_id, @created_at, @updated_at, @metadata, @status, @values, @messages, @checkpoint_id, @hidden,
          @principal)`,
    );
    this.#updateMetadata = db.prepare(
      "UPDATE threads SET metadata = ?, updated_at = ? WHERE thread_id = ?",
    );
    this.#metadata = new MetadataIndex(db, "thread_metadata");
    this.#updateStatus = db.prepare(
      "UPDATE threads SET status = ?, updated_at = ? WHERE thread_id = ?",
    );
    this.#hasPendingRun = db.prepare(
      "SELECT 1 AS one FROM runs WHERE thread_id = ? AND status = 'pending' LIMIT 1",
    );
    this.#deleteIfIdle = db.prepare(
      `DELETE FROM threads WHERE thread_id = @id AND NOT EXISTS (
         SELECT 1 FROM runs WHERE thread_id = @id AND status = 'pending')`,
    );
    this.#createTx = db.transaction((input) => this.#create(input));
    this.#mergeTx = db.transaction((threadId, patch) => this.#merge(threadId, patch));
    this.#deleteTx = db.transaction((threadId) => this.#deleteThread(threadId));
    this.#copyTx = db.transaction((threadId, newThreadId, principal) =>
      this.#copy(threadId, newThreadId, principal),
    );
  }

  create(input: CreateThreadInput): { thread: ThreadRecord; created: boolean } {
    return this.#createTx.immediate(input);
  }

  mergeMetadata(threadId: string, patch: Record<string, unknown>): ThreadRecord {
    return this.#mergeTx.immediate(threadId, patch);
  }

  delete(threadId: string): void {
    this.#deleteTx.immediate(threadId);
  }

  /** A visible, idle copy with the same metadata, values, messages and remapped checkpoints. */
  copy(threadId: string, newThreadId: string, principal: string | null): ThreadRecord {
    return this.#copyTx.immediate(threadId, newThreadId, principal);
  }

  get(threadId: string): ThreadRecord | null {
    const row = this.#select.get(threadId);
    return row === undefined ? null : this.#toThread(row);
  }

  readonly #toThread = (row: ThreadRow): ThreadRecord => toThread(this.#withState(row));

  /**
   * The row with its state as stored: a thread whose state is its current checkpoint's
   * (OF_CHECKPOINT, packed-json.ts) reads it from there.
   */
  #withState(row: ThreadRow): ThreadRow {
    const values = isOfCheckpoint(row.values);
    const messages = isOfCheckpoint(row.messages);
    if (!values && !messages) return row;
    const state =
      row.checkpoint_id === null ? undefined : this.#checkpointState.get(row.checkpoint_id);
    if (state === undefined) {
      throw new Error(`thread ${row.thread_id}: its state is its checkpoint's, which is missing`);
    }
    return {
      ...row,
      values: values ? state.values : row.values,
      messages: messages ? state.messages : row.messages,
    };
  }

  require(threadId: string): ThreadRecord {
    const thread = this.get(threadId);
    if (thread === null) throw notFound("thread", threadId);
    return thread;
  }

  #create(input: CreateThreadInput): { thread: ThreadRecord; created: boolean } {
    const existing = this.get(input.thread_id);
    if (existing !== null) {
      if (input.if_exists === "do_nothing") return { thread: existing, created: false };
      throw conflict(`thread ${input.thread_id} already exists`);
    }
    return { thread: this.insertNew(input), created: true };
  }

  /**
   * Inside the caller's transaction: a new thread, without looking for one of that id first
   * (its primary key refuses it: conflict). For a thread whose id nobody else knows.
   */
  insertNew(input: CreateThreadInput): ThreadRecord {
    assertObject(input.metadata, "thread metadata");
    const now = nowIso();
    const metadataJson = toJson(input.metadata);
    try {
      this.#insert.run({
        thread_id: input.thread_id,
        created_at: now,
        updated_at: now,
        metadata: metadataJson,
        status: input.status ?? "idle",
        values: "null",
        messages: "null",
        checkpoint_id: null,
        hidden: input.hidden === true ? 1 : 0,
        principal: input.principal ?? null,
      });
    } catch (err) {
      if (sqliteCode(err) === "SQLITE_CONSTRAINT_PRIMARYKEY") {
        throw conflict(`thread ${input.thread_id} already exists`);
      }
      rethrowCheck(err, "thread");
    }
    this.#metadata.put(input.thread_id, input.metadata);
    // What the row now holds, without reading it back.
    const thread: ThreadRecord = {
      thread_id: input.thread_id,
      created_at: now,
      updated_at: now,
      metadata: JSON.parse(metadataJson) as Record<string, unknown>,
      status: input.status ?? "idle",
      values: null,
      messages: null,
      checkpoint_id: null,
      hidden: input.hidden === true,
      principal: input.principal ?? null,
    };
    return thread;
  }

  #merge(threadId: string, patch: Record<string, unknown>): ThreadRecord {
    assertObject(patch, "thread metadata");
    const thread = this.require(threadId);
    const merged = { ...thread.metadata, ...patch };
    this.#updateMetadata.run(toJson(merged), nowIso(), threadId);
    this.#metadata.put(threadId, patch);
    return this.require(threadId);
  }

  setStatus(threadId: string, status: ThreadStatus): void {
    let changes: number;
    try {
      changes = this.#updateStatus.run(status, nowIso(), threadId).changes;
    } catch (err) {
      rethrowCheck(err, "thread status");
    }
    if (changes === 0) throw notFound("thread", threadId);
  }

  #deleteThread(threadId: string): void {
    // Cascades to checkpoints and thread_metadata; runs keep existing with thread_id NULL.
    if (this.#deleteIfIdle.run({ id: threadId }).changes === 1) return;
    // Nothing deleted: say why.
    if (this.#hasPendingRun.get(threadId) !== undefined) {
      throw conflict(`thread ${threadId} has a pending run`);
    }
    throw notFound("thread", threadId);
  }

  #copy(threadId: string, newThreadId: string, principal: string | null): ThreadRecord {
    // The row as stored: its state is copied as it is (packed or not), never parsed and packed
    // again, as the checkpoints are (copyAll).
    const row = this.#select.get(threadId);
    if (row === undefined) throw notFound("thread", threadId);
    const source = this.#withState(row);
    if (this.get(newThreadId) !== null) throw conflict(`thread ${newThreadId} already exists`);
    const now = nowIso();
    this.#insert.run({
      thread_id: newThreadId,
      created_at: now,
      updated_at: now,
      metadata: source.metadata,
      status: "idle",
      values: source.values,
      messages: source.messages,
      checkpoint_id: null,
      hidden: 0,
      principal,
    });
    this.#metadata.copy(threadId, newThreadId);
    const idMap = this.#checkpoints.copyAll(threadId, newThreadId);
    const current =
      source.checkpoint_id === null ? null : (idMap.get(source.checkpoint_id) ?? null);
    this.#checkpoints.setCurrentPointer(newThreadId, current);
    return this.require(newThreadId);
  }

  search(search: ThreadSearch): ThreadRecord[] {
    const where = ["t.hidden = 0"];
    const params: unknown[] = [];
    if (search.status !== undefined) {
      where.push("t.status = ?");
      params.push(search.status);
    }
    if (search.principal !== undefined) {
      where.push("t.principal = ?");
      params.push(search.principal);
    }
    if (search.metadata !== undefined) {
      assertObject(search.metadata, "metadata filter");
      const clauses = this.#metadata.clauses(
        "t.thread_id",
        search.metadata,
        search.limit + search.offset,
      );
      if (clauses === null) return [];
      where.push(...clauses.where);
      params.push(...clauses.params);
    }
    if (search.values !== undefined) {
      assertObject(search.values, "values filter");
      const entries = canonicalEntries(search.values);
      if (entries.length > 0) {
        // A thread whose state is its checkpoint's (OF_CHECKPOINT) is matched on that.
        where.push(
          `acp_json_contains(CASE WHEN t."values" = x'03' THEN (SELECT c."values" FROM checkpoints c
             WHERE c.checkpoint_id = t.checkpoint_id) ELSE t."values" END, ?)`,
        );
        params.push(JSON.stringify(entries));
      }
    }
    const sql = `SELECT t.* FROM threads t WHERE ${where.join(" AND ")}
      ORDER BY t.created_at DESC, t.thread_id DESC LIMIT ? OFFSET ?`;
    params.push(search.limit, search.offset);
    const rows = this.#cache.get(sql).all(...params) as ThreadRow[];
    return rows.map(this.#toThread);
  }
}
