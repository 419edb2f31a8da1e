import type Database from "better-sqlite3";
import { conflict } from "../../errors.js";
import type { InsertRunOptions, NewRun, RunFrame, RunPatch, RunRecord } from "../types.js";
import type { FrameRepository } from "./frames.js";
import { assertObject, toJson } from "./json.js";
import { addMs, isoTimestamp, nowIso, nullableIso, rethrowCheck, sqliteCode } from "./mapping.js";
import { MetadataIndex } from "./metadata-index.js";
import { IN_PARTS, packJsonParts } from "./packed-json.js";

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

  constructor(db: Database.Database, frames: FrameRepository) {
    this.#metadata = new MetadataIndex(db, "run_metadata");
    this.#frames = frames;
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
          owner, lease_expires_at, lease_epoch, cancel_requested, last_seq, trace_context)
       VALUES
         (@run_id, @thread_id, @agent_id, @kind, @status, @created_at, @updated_at, @creation,
          @metadata, @output, @interrupts, @resume, @segments, @start_after, @checkpoint_before,
          @principal, @owner, @lease_expires_at, @lease_epoch, @cancel_requested, @last_seq,
          @trace_context)`,
    );
    this.#insertOutputPart = db.prepare(
      "INSERT INTO run_output_parts (run_id, part, data) VALUES (?, ?, ?)",
    );
    this.#insertPlannedTx = db.transaction((record) => this.#insertPlanned(record));
    this.#insertFinishedTx = db.transaction((record, patch, frames) =>
      this.#insertFinished(record, patch, frames),
    );
  }

  /**
   * The record `RunRepository.insert` would write for this run, told without a read: a
   * stateless run with a hidden thread of its own (nothing else can be pending on it), claimed
   * by its insert and due now, no queue limit for the insert to count. Undefined otherwise.
   */
  plan(run: NewRun, options: InsertRunOptions): RunRecord | undefined {
    const { claim } = options;
    if (
      claim === undefined ||
      run.kind !== "stateless" ||
      options.create_hidden_thread !== true ||
      options.reject_if_busy === true ||
      options.mark_thread_busy === true ||
      options.queue_limit !== undefined
    ) {
      return undefined;
    }
    const startAfter = isoTimestamp(run.start_after, "start_after");
    if (Date.parse(startAfter) > claim.now.getTime()) return undefined;
    assertObject(run.creation, "run creation");
    assertObject(run.metadata, "run metadata");
    const now = nowIso();
    return {
      run_id: run.run_id,
      thread_id: run.thread_id,
      agent_id: run.agent_id,
      kind: run.kind,
      status: "pending",
      created_at: now,
      updated_at: now,
      // As read back from the row: what JSON keeps of them.
      creation: JSON.parse(toJson(run.creation)) as Record<string, unknown>,
      metadata: JSON.parse(toJson(run.metadata)) as Record<string, unknown>,
      output: null,
      interrupts: [],
      resume: null,
      // Claimed at once: as `claim` would leave it (a first claim is epoch 1).
      segments: [claim.segment],
      start_after: startAfter,
      checkpoint_before: null,
      owner: claim.owner,
      lease_expires_at: addMs(claim.now, claim.leaseMs),
      lease_epoch: 1,
      cancel_requested: null,
      last_seq: 0,
      principal: run.principal ?? null,
      trace_context: run.trace_context ?? null,
    };
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

  #insertFinished(record: RunRecord, patch: RunPatch, frames: RunFrame[]): RunRecord {
    const finished: RunRecord = { ...record, thread_id: null, updated_at: nowIso() };
    for (const [column, value] of Object.entries(patch)) {
      if (value !== undefined) (finished as unknown as Record<string, unknown>)[column] = value;
    }
    // The row goes first (the frames refer to it), already holding the frames' last seq.
    finished.last_seq = frames.reduce((last, frame) => Math.max(last, frame.seq), 0);
    const packed = finished.output === null ? "null" : packJsonParts(finished.output);
    this.#write(finished, typeof packed === "string" ? packed : IN_PARTS);
    if (typeof packed !== "string") {
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
