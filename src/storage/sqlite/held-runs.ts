import type Database from "better-sqlite3";
import { conflict } from "../../util/errors.js";
import { finishedHeldRun, type HeldEnd } from "../held-inserts.js";
import type { CreateThreadInput, RunFrame, RunPatch, RunRecord } from "../types.js";
import type { CheckpointRepository } from "./checkpoints.js";
import type { FrameRepository } from "./frames.js";
import { toJson } from "./json.js";
import { isoTimestamp, nullableIso, rethrowCheck, sqliteCode } from "./mapping.js";
import { MetadataIndex } from "./metadata-index.js";
import { outputOfCheckpoint, sharesState } from "./output-state.js";
import { IN_PARTS, packJsonParts } from "./packed-json.js";
import type { ThreadRepository } from "./threads.js";

/**
 * The rows of a held insert (see `Storage.insertRunHeld`): a stateless run its insert claims,
 * whose record is known before anything is written, and which is written either as inserted
 * (pending, with its hidden thread) or, when its end came while the insert was held, once, in
 * its final state: no pending row updated afterwards (each of the `runs` indexes written twice,
 * the partial ones of pending runs entered and left), and no hidden thread created only to be
 * deleted in the next commit.
 */
export class HeldRunRows {
  readonly #metadata: MetadataIndex;
  readonly #frames: FrameRepository;
  readonly #insertHiddenThread: Database.Statement<
    [{ id: string; now: string; principal: string | null }]
  >;
  readonly #insert: Database.Statement<[Record<string, unknown>]>;
  readonly #insertOutputPart: Database.Statement<[string, number, Buffer]>;
  readonly #insertPlannedTx: Database.Transaction<(record: RunRecord) => RunRecord>;
  readonly #insertFinishedTx: Database.Transaction<
    (record: RunRecord, patch: RunPatch, frames: RunFrame[]) => RunRecord
  >;
  readonly #onNewThreadTx: Database.Transaction<
    (thread: CreateThreadInput, record: RunRecord, end: HeldEnd | undefined) => RunRecord
  >;
  readonly #threads: ThreadRepository;
  readonly #checkpoints: CheckpointRepository;

  constructor(
    db: Database.Database,
    frames: FrameRepository,
    threads: ThreadRepository,
    checkpoints: CheckpointRepository,
  ) {
    this.#metadata = new MetadataIndex(db, "run_metadata");
    this.#frames = frames;
    this.#threads = threads;
    this.#checkpoints = checkpoints;
    this.#insertHiddenThread = db.prepare(
      `INSERT INTO threads
         (thread_id, created_at, updated_at, metadata, status, "values", messages, checkpoint_id, hidden,
          principal)
       VALUES (@id, @now, @now, '{}', 'busy', 'null', 'null', NULL, 1, @principal)`,
    );
    this.#insert = db.prepare(
      `INSERT INTO runs
         (run_id, thread_id, agent_id, kind, status, created_at, updated_at, creation, metadata,
          output, interrupts, resume, segments, start_after, checkpoint_before, principal,
          owner, lease_expires_at, lease_epoch, cancel_requested, last_seq, trace_context, face)
       VALUES
         (@run_id, @thread_id, @agent_id, @kind, @status, @created_at, @updated_at, @creation,
          @metadata, @output, @interrupts, @resume, @segments, @start_after, @checkpoint_before,
          @principal, @owner, @lease_expires_at, @lease_epoch, @cancel_requested, @last_seq,
          @trace_context, @face)`,
    );
    this.#insertOutputPart = db.prepare(
      "INSERT INTO run_output_parts (run_id, part, data) VALUES (?, ?, ?)",
    );
    this.#insertPlannedTx = db.transaction((record) => this.#insertPlanned(record));
    this.#insertFinishedTx = db.transaction((record, patch, frames) =>
      this.#insertFinished(record, patch, frames),
    );
    this.#onNewThreadTx = db.transaction((thread, record, end) =>
      this.#insertOnNewThread(thread, record, end),
    );
  }

  /**
   * Writes a planned stateful run and the new thread it goes on (see
   * `Storage.insertRunOnNewThreadHeld`): as inserted (the thread busy, the run pending), or,
   * with `end`, once, as the run's end leaves them: the run's row in its final state with its
   * frames, the thread with the run's checkpoint and its status. Conflict when the thread
   * exists (nothing written).
   */
  insertOnNewThread(thread: CreateThreadInput, record: RunRecord, end?: HeldEnd): RunRecord {
    return this.#onNewThreadTx.immediate(thread, record, end);
  }

  /** Writes a planned run as inserted: its hidden thread and its pending row. */
  insertPlanned(record: RunRecord): RunRecord {
    return this.#insertPlannedTx.immediate(record);
  }

  /**
   * Writes a planned run once, as its end left it: `patch` applied, its hidden thread never
   * created (thread_id NULL, as its deletion leaves it), `frames` stored with it. Returns the
   * run as `finishRun` does.
   */
  insertFinished(record: RunRecord, patch: RunPatch, frames: RunFrame[]): RunRecord {
    return this.#insertFinishedTx.immediate(record, patch, frames);
  }

  #insertPlanned(record: RunRecord): RunRecord {
    try {
      this.#insertHiddenThread.run({
        id: record.thread_id!,
        now: record.created_at,
        principal: record.principal,
      });
    } catch (err) {
      if (sqliteCode(err) === "SQLITE_CONSTRAINT_PRIMARYKEY") {
        throw conflict(`thread ${record.thread_id} already exists`);
      }
      throw err;
    }
    this.#write(record, "null");
    return record;
  }

  #insertOnNewThread(
    thread: CreateThreadInput,
    record: RunRecord,
    end: HeldEnd | undefined,
  ): RunRecord {
    // Busy from the start, as a run's insert on a new thread leaves it.
    // Without a read first: nobody else knows the thread's id (a thread of that id: conflict).
    this.#threads.insertNew({ ...thread, status: "busy" });
    if (end === undefined) {
      this.#write(record, "null");
      return record;
    }
    const checkpoint = end.writes?.checkpoint;
    // An output holding the checkpoint's state refers to it (output-state.ts).
    const stateOf = sharesState(record.run_id, end.patch.output, checkpoint)
      ? this.#checkpoints.nextSeq()
      : undefined;
    const frames = end.writes?.frames ?? [];
    const finished = this.#insertFinished(record, end.patch, frames, true, stateOf);
    const status = "status" in end.thread ? end.thread.status : "idle";
    if (checkpoint !== undefined) {
      this.#checkpoints.addEndingToNewThread(thread.thread_id, checkpoint, status, stateOf);
    } else this.#threads.setStatus(thread.thread_id, status);
    return finished;
  }

  #insertFinished(
    record: RunRecord,
    patch: RunPatch,
    frames: RunFrame[],
    keepThread = false,
    stateOf?: number,
  ): RunRecord {
    // The row goes first (the frames refer to it), already holding the frames' last seq.
    const finished = finishedHeldRun(record, patch, frames, keepThread);
    const packed =
      finished.output === null
        ? "null"
        : stateOf !== undefined
          ? outputOfCheckpoint(finished.output, stateOf)
          : packJsonParts(finished.output);
    this.#write(
      finished,
      typeof packed === "string" || Buffer.isBuffer(packed) ? packed : IN_PARTS,
    );
    if (Array.isArray(packed)) {
      for (const [index, part] of packed.entries()) {
        this.#insertOutputPart.run(finished.run_id, index, part);
      }
    }
    if (frames.length > 0) this.#frames.appendToNewRun(finished.run_id, frames);
    return finished;
  }

  /** The run's row and its metadata index. */
  #write(record: RunRecord, output: string | Buffer): void {
    try {
      this.#insert.run({
        run_id: record.run_id,
        thread_id: record.thread_id,
        agent_id: record.agent_id,
        kind: record.kind,
        status: record.status,
        created_at: record.created_at,
        updated_at: record.updated_at,
        creation: toJson(record.creation),
        metadata: toJson(record.metadata),
        output,
        interrupts: toJson(record.interrupts),
        resume: toJson(record.resume),
        segments: toJson(record.segments),
        start_after: isoTimestamp(record.start_after, "start_after"),
        checkpoint_before: record.checkpoint_before,
        principal: record.principal,
        owner: record.owner,
        lease_expires_at: nullableIso(record.lease_expires_at, "lease_expires_at"),
        lease_epoch: record.lease_epoch,
        cancel_requested: record.cancel_requested,
        last_seq: record.last_seq,
        trace_context: record.trace_context,
        face: record.face,
      });
    } catch (err) {
      // The run_id UNIQUE index decides, rather than a read before every insert.
      if (sqliteCode(err) === "SQLITE_CONSTRAINT_UNIQUE") {
        throw conflict(`run ${record.run_id} already exists`);
      }
      rethrowCheck(err, "run");
    }
    this.#metadata.put(record.run_id, record.metadata);
  }
}
