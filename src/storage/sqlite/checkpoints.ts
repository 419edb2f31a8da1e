import { randomUUID } from "node:crypto";
import type Database from "better-sqlite3";
import { conflict, notFound } from "../../util/errors.js";
import type { CheckpointRecord, NewCheckpoint, ThreadStatus } from "../types.js";
import { assertObject, toJson } from "./json.js";
import { type CheckpointRow, nowIso, rethrowCheck, sqliteCode, toCheckpoint } from "./mapping.js";
import { OF_CHECKPOINT, packJson } from "./packed-json.js";

interface ThreadPointer {
  checkpoint_id: string | null;
}

/** The pointer of a thread without checkpoints. */
const NO_CHECKPOINT: ThreadPointer = { checkpoint_id: null };

/** Checkpoints of a thread and the thread's "current checkpoint" pointer (values, messages). */
export class CheckpointRepository {
  readonly #threadPointer: Database.Statement<[string], ThreadPointer>;
  readonly #select: Database.Statement<[string, string], CheckpointRow>;
  readonly #insert: Database.Statement;
  readonly #setCurrent: Database.Statement;
  readonly #setCurrentAndStatus: Database.Statement;
  readonly #setPointer: Database.Statement;
  readonly #nextSeq: Database.Statement<[], { next: number }>;
  readonly #listNewest: Database.Statement<[string, number], CheckpointRow>;
  readonly #listBefore: Database.Statement<[string, number, number], CheckpointRow>;
  readonly #listAllOldest: Database.Statement<[string], CheckpointRow>;
  readonly #addTx: Database.Transaction<
    (threadId: string, checkpoint: NewCheckpoint) => CheckpointRecord
  >;
  readonly #restoreTx: Database.Transaction<
    (threadId: string, checkpointId: string | null, discardRunId: string | undefined) => void
  >;
  readonly #deleteOfRun: Database.Statement<[string, string]>;
  readonly #listTx: Database.Transaction<
    (threadId: string, limit: number, before: string | undefined) => CheckpointRecord[]
  >;

  constructor(db: Database.Database) {
    this.#threadPointer = db.prepare("SELECT checkpoint_id FROM threads WHERE thread_id = ?");
    this.#select = db.prepare(
      "SELECT * FROM checkpoints WHERE thread_id = ? AND checkpoint_id = ?",
    );
    this.#insert = db.prepare(
      `INSERT INTO checkpoints
         (seq, checkpoint_id, thread_id, parent_checkpoint_id, created_at, "values", messages, metadata)
       VALUES
         (@seq, @checkpoint_id, @thread_id, @parent_checkpoint_id, @created_at, @values, @messages, @metadata)`,
    );
    this.#setCurrent = db.prepare(
      `UPDATE threads SET "values" = ?, messages = ?, checkpoint_id = ?, updated_at = ?
       WHERE thread_id = ?`,
    );
    this.#setCurrentAndStatus = db.prepare(
      `UPDATE threads SET "values" = ?, messages = ?, checkpoint_id = ?, status = ?, updated_at = ?
       WHERE thread_id = ?`,
    );
    this.#setPointer = db.prepare("UPDATE threads SET checkpoint_id = ? WHERE thread_id = ?");
    this.#nextSeq = db.prepare("SELECT coalesce(max(seq), 0) + 1 AS next FROM checkpoints");
    this.#listNewest = db.prepare(
      "SELECT * FROM checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT ?",
    );
    this.#listBefore = db.prepare(
      "SELECT * FROM checkpoints WHERE thread_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
    );
    this.#listAllOldest = db.prepare("SELECT * FROM checkpoints WHERE thread_id = ? ORDER BY seq");
    this.#addTx = db.transaction((threadId, checkpoint) => this.#add(threadId, checkpoint));
    this.#deleteOfRun = db.prepare(
      "DELETE FROM checkpoints WHERE thread_id = ? AND json_extract(metadata, '$.run_id') = ?",
    );
    this.#restoreTx = db.transaction((threadId, checkpointId, discardRunId) =>
      this.#restore(threadId, checkpointId, discardRunId),
    );
    this.#listTx = db.transaction((threadId, limit, before) => this.#list(threadId, limit, before));
  }

  add(threadId: string, checkpoint: NewCheckpoint): CheckpointRecord {
    return this.#addTx.immediate(threadId, checkpoint);
  }

  /**
   * `add` inside the caller's transaction (a run's end), setting the thread's status in the
   * same UPDATE: no savepoint of its own (and its sub-journal's page copies) and no second
   * UPDATE of the thread row and its status and recency indexes.
   * `seq`: the seq to insert it under (`nextSeq()`, read in the same transaction), when the
   * run's output written just before refers to it (output-state.ts).
   */
  addEnding(
    threadId: string,
    checkpoint: NewCheckpoint,
    status: ThreadStatus,
    seq?: number,
  ): CheckpointRecord {
    return this.#add(threadId, checkpoint, status, undefined, seq);
  }

  /** Inside a transaction: the seq the next checkpoint inserted gets (SQLite's own rowid rule). */
  nextSeq(): number {
    return this.#nextSeq.get()!.next;
  }

  /**
   * `addEnding` for a thread created in the same transaction: it has no checkpoint yet, so
   * its pointer is not read.
   */
  addEndingToNewThread(
    threadId: string,
    checkpoint: NewCheckpoint,
    status: ThreadStatus,
    seq?: number,
  ): CheckpointRecord {
    return this.#add(threadId, checkpoint, status, NO_CHECKPOINT, seq);
  }

  get(threadId: string, checkpointId: string): CheckpointRecord | null {
    const row = this.#select.get(threadId, checkpointId);
    return row === undefined ? null : toCheckpoint(row);
  }

  /** Newest first. Throws not_found for an unknown thread or an unknown `before` checkpoint. */
  list(threadId: string, options: { limit: number; before?: string }): CheckpointRecord[] {
    // A read transaction, so the `before` lookup and the page come from one snapshot.
    return this.#listTx.deferred(threadId, options.limit, options.before);
  }

  restore(threadId: string, checkpointId: string | null, discardRunId?: string): void {
    this.#restoreTx.immediate(threadId, checkpointId, discardRunId);
  }

  /**
   * Copies every checkpoint of `fromThread` to `toThread` in creation order, with new ids and
   * parent links remapped. Returns old id → new id. Runs inside the caller's transaction.
   */
  copyAll(fromThread: string, toThread: string): Map<string, string> {
    const idMap = new Map<string, string>();
    for (const row of this.#listAllOldest.all(fromThread)) {
      const newId = randomUUID();
      idMap.set(row.checkpoint_id, newId);
      this.#insert.run({
        seq: null,
        checkpoint_id: newId,
        thread_id: toThread,
        parent_checkpoint_id:
          row.parent_checkpoint_id === null ? null : (idMap.get(row.parent_checkpoint_id) ?? null),
        created_at: row.created_at,
        values: row.values,
        messages: row.messages,
        metadata: row.metadata,
      });
    }
    return idMap;
  }

  /** Points the thread at a checkpoint without touching its values (used by copy). */
  setCurrentPointer(threadId: string, checkpointId: string | null): void {
    this.#setPointer.run(checkpointId, threadId);
  }

  #requirePointer(threadId: string): ThreadPointer {
    const pointer = this.#threadPointer.get(threadId);
    if (pointer === undefined) throw notFound("thread", threadId);
    return pointer;
  }

  #requireRow(threadId: string, checkpointId: string): CheckpointRow {
    const row = this.#select.get(threadId, checkpointId);
    if (row === undefined) throw notFound("checkpoint", checkpointId);
    return row;
  }

  #add(
    threadId: string,
    checkpoint: NewCheckpoint,
    status?: ThreadStatus,
    known?: ThreadPointer,
    seq?: number,
  ): CheckpointRecord {
    const pointer = known ?? this.#requirePointer(threadId);
    assertObject(checkpoint.metadata, "checkpoint metadata");
    const parent =
      checkpoint.parent_checkpoint_id === undefined
        ? pointer.checkpoint_id
        : checkpoint.parent_checkpoint_id;
    if (parent !== null) this.#requireRow(threadId, parent);
    const now = nowIso();
    // The thread's state, megabytes after a long answer: packed (packed-json.ts).
    const values = packJson(checkpoint.values);
    const messages = packJson(checkpoint.messages);
    const metadata = toJson(checkpoint.metadata);
    try {
      this.#insert.run({
        seq: seq ?? null,
        checkpoint_id: checkpoint.checkpoint_id,
        thread_id: threadId,
        parent_checkpoint_id: parent,
        created_at: now,
        values,
        messages,
        metadata,
      });
    } catch (err) {
      if (sqliteCode(err) === "SQLITE_CONSTRAINT_UNIQUE") {
        throw conflict(`checkpoint ${checkpoint.checkpoint_id} already exists`);
      }
      throw err;
    }
    // The thread's state is the checkpoint's: not stored again (OF_CHECKPOINT).
    if (status === undefined) {
      this.#setCurrent.run(OF_CHECKPOINT, OF_CHECKPOINT, checkpoint.checkpoint_id, now, threadId);
    } else {
      try {
        this.#setCurrentAndStatus.run(
          OF_CHECKPOINT,
          OF_CHECKPOINT,
          checkpoint.checkpoint_id,
          status,
          now,
          threadId,
        );
      } catch (err) {
        rethrowCheck(err, "thread status");
      }
    }
    // What the row now holds, without reading it back: a packed state read back would be
    // inflated and parsed again at every run's end, megabytes after a long answer. A packed
    // value is the one given (its JSON text is never whole to parse).
    const stored = <T>(text: string | Buffer, given: T): T =>
      typeof text === "string" ? (JSON.parse(text) as T) : given;
    return {
      checkpoint_id: checkpoint.checkpoint_id,
      thread_id: threadId,
      parent_checkpoint_id: parent,
      created_at: now,
      values: stored(values, checkpoint.values),
      messages: stored(messages, checkpoint.messages),
      metadata: JSON.parse(metadata) as Record<string, unknown>,
    };
  }

  #list(threadId: string, limit: number, before: string | undefined): CheckpointRecord[] {
    this.#requirePointer(threadId);
    const rows =
      before === undefined
        ? this.#listNewest.all(threadId, limit)
        : this.#listBefore.all(threadId, this.#requireRow(threadId, before).seq, limit);
    return rows.map(toCheckpoint);
  }

  #restore(threadId: string, checkpointId: string | null, discardRunId: string | undefined): void {
    this.#requirePointer(threadId);
    if (discardRunId !== undefined) this.#deleteOfRun.run(threadId, discardRunId);
    if (checkpointId === null) {
      this.#setCurrent.run("null", "null", null, nowIso(), threadId);
      return;
    }
    const row = this.#requireRow(threadId, checkpointId);
    this.#setCurrent.run(OF_CHECKPOINT, OF_CHECKPOINT, row.checkpoint_id, nowIso(), threadId);
  }
}
