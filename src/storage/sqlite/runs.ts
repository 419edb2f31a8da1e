import type Database from "better-sqlite3";
import { claimLost, conflict, notFound, queueFull } from "../../util/errors.js";
import type {
  Fence,
  InsertRunOptions,
  NewRun,
  RunCountFilter,
  RunPatch,
  RunRecord,
  RunSearch,
} from "../types.js";
import { assertObject, toJson } from "./json.js";
import {
  addMs,
  isoTimestamp,
  nowIso,
  type RunRow,
  rethrowCheck,
  sqliteCode,
  toRun,
} from "./mapping.js";
import { MetadataIndex } from "./metadata-index.js";
import { outputOfCheckpoint, type StoredState } from "./output-state.js";
import { IN_PARTS, packJsonParts } from "./packed-json.js";
import { PATCH_COLUMNS, patchValue, RETURNING_ALL_BUT_OUTPUT } from "./run-columns.js";
import { RunSearches } from "./run-search.js";
import { StatementCache } from "./statements.js";

/**
 * The claim query. A run is claimable when it is pending, unowned (or its owner's lease ran
 * out), due, and its thread is free: no older pending run on that thread (claimed or still
 * waiting) and no other pending run on it under a live lease (a resumed older run must not
 * start while a newer one executes).
 *
 * `INDEXED BY`: the partial index of pending runs holds every column the outer filter reads, in
 * queue order. Without statistics SQLite prefers `runs_by_status (status=?)` and fetches each
 * pending row from the table (measured: a third of the storage time of a run at 50 clients).
 * The subqueries look at the thread's pending runs only (`runs_pending_by_thread`), not all
 * of its runs (`runs_by_thread`, which the planner may rate alike, both being partial).
 */
const CLAIM_SQL = `
  SELECT r.* FROM runs r INDEXED BY runs_claimable
  WHERE r.status = 'pending'
    AND (r.owner IS NULL OR r.lease_expires_at <= @now)
    AND r.start_after <= @now
    AND (@agents IS NULL OR r.agent_id IN (SELECT value FROM json_each(@agents)))
    AND NOT EXISTS (
      SELECT 1 FROM runs o INDEXED BY runs_pending_by_thread
      WHERE o.thread_id = r.thread_id AND o.status = 'pending'
        AND (o.created_at < r.created_at OR (o.created_at = r.created_at AND o.seq < r.seq))
    )
    AND NOT EXISTS (
      SELECT 1 FROM runs o INDEXED BY runs_pending_by_thread
      WHERE o.thread_id = r.thread_id AND o.status = 'pending' AND o.seq <> r.seq
        AND o.owner IS NOT NULL AND o.lease_expires_at > @now
    )
  ORDER BY r.created_at, r.seq
  LIMIT 1`;

/**
 * A claim by another owner starts a new epoch, so that the previous owner's fenced writes are
 * refused. The same owner taking its own run back (its lease lapsed under it, and it executes
 * the run still) keeps the epoch: its execution goes on under the claim it holds.
 */
const NEXT_EPOCH =
  "lease_epoch = CASE WHEN owner IS @owner THEN lease_epoch ELSE lease_epoch + 1 END";

/** Runs: insertion with the busy check, search, updates, and the claim/lease protocol. */
export class RunRepository {
  readonly #cache: StatementCache;
  readonly #metadata: MetadataIndex;
  /** Searches and counts (run-search.ts). */
  readonly #searches: RunSearches;
  readonly #select: Database.Statement<[string], RunRow>;
  readonly #threadCheckpoint: Database.Statement<[string], { checkpoint_id: string | null }>;
  readonly #insertHiddenThread: Database.Statement<
    [{ id: string; now: string; principal: string | null }]
  >;
  readonly #hasPending: Database.Statement<[string], { one: number }>;
  readonly #markBusy: Database.Statement<[string, string]>;
  readonly #insert: Database.Statement<[Record<string, unknown>], RunRow>;
  readonly #delete: Database.Statement;
  readonly #pendingOfThread: Database.Statement<[string], RunRow>;
  readonly #claimCandidate: Database.Statement<[{ now: string; agents: string | null }], RunRow>;
  readonly #setLease: Database.Statement<[{ owner: string; lease: string; seq: number }], RunRow>;
  readonly #claimById: Database.Statement<
    [{ run_id: string; owner: string; lease: string; now: string }],
    RunRow
  >;
  readonly #renew: Database.Statement<[string, string], { run_id: string }>;
  readonly #expired: Database.Statement<[string], RunRow>;
  readonly #nextStart: Database.Statement<[], { next: string | null }>;
  readonly #insertTx: Database.Transaction<(run: NewRun, options: InsertRunOptions) => RunRecord>;
  readonly #exists: Database.Statement<[string], { one: number }>;
  readonly #threadOf: Database.Statement<[string], { thread_id: string | null }>;
  readonly #updateTx: Database.Transaction<
    (runId: string, patch: RunPatch, fence: Fence | undefined) => RunRecord
  >;
  readonly #deleteTx: Database.Transaction<(runId: string) => void>;
  readonly #insertOutputPart: Database.Statement<[string, number, Buffer]>;
  readonly #outputParts: Database.Statement<[string], { data: Buffer }>;
  readonly #checkpointState: Database.Statement<[number], StoredState>;
  readonly #claimTx: Database.Transaction<
    (owner: string, leaseMs: number, now: Date, agents: string | null) => RunRecord | null
  >;

  constructor(db: Database.Database) {
    this.#cache = new StatementCache(db);
    this.#metadata = new MetadataIndex(db, "run_metadata");
    this.#searches = new RunSearches(this.#cache, this.#metadata, (row) => this.#toRun(row));
    this.#select = db.prepare("SELECT * FROM runs WHERE run_id = ?");
    this.#threadCheckpoint = db.prepare("SELECT checkpoint_id FROM threads WHERE thread_id = ?");
    this.#insertHiddenThread = db.prepare(
      `INSERT INTO threads
         (thread_id, created_at, updated_at, metadata, status, "values", messages, checkpoint_id, hidden,
          principal)
       VALUES (@id, @now, @now, '{}', 'busy', 'null', 'null', NULL, 1, @principal)`,
    );
    this.#hasPending = db.prepare(
      "SELECT 1 AS one FROM runs WHERE thread_id = ? AND status = 'pending' LIMIT 1",
    );
    this.#insert = db.prepare(
      `INSERT INTO runs
         (run_id, thread_id, agent_id, kind, status, created_at, updated_at, creation, metadata,
          output, interrupts, resume, segments, start_after, checkpoint_before, principal,
          owner, lease_expires_at, lease_epoch, trace_context, face)
       VALUES
         (@run_id, @thread_id, @agent_id, @kind, 'pending', @now, @now, @creation, @metadata,
          'null', '[]', 'null', @segments, @start_after, @checkpoint_before, @principal,
          @owner, @lease_expires_at, @lease_epoch, @trace_context, @face)
       RETURNING *`,
    );
    this.#markBusy = db.prepare(
      "UPDATE threads SET status = 'busy', updated_at = ? WHERE thread_id = ?",
    );
    this.#delete = db.prepare("DELETE FROM runs WHERE run_id = ?");
    // `INDEXED BY`: the thread's pending runs in order, not all its runs (which the planner may
    // prefer without statistics, both indexes being partial).
    this.#pendingOfThread = db.prepare(
      `SELECT * FROM runs INDEXED BY runs_pending_by_thread
       WHERE thread_id = ? AND status = 'pending' ORDER BY created_at, seq`,
    );
    this.#claimCandidate = db.prepare(CLAIM_SQL);
    this.#setLease = db.prepare(
      `UPDATE runs SET owner = @owner, lease_expires_at = @lease, ${NEXT_EPOCH}
       WHERE seq = @seq RETURNING *`,
    );
    // One statement, so the check and the claim are atomic without a transaction.
    this.#claimById = db.prepare(
      `UPDATE runs SET owner = @owner, lease_expires_at = @lease, ${NEXT_EPOCH}
       WHERE run_id = @run_id AND status IN ('pending', 'interrupted')
         AND (owner IS NULL OR lease_expires_at <= @now)
       RETURNING *`,
    );
    this.#renew = db.prepare(
      `UPDATE runs INDEXED BY runs_claimable SET lease_expires_at = ?
       WHERE owner = ? AND status = 'pending'
       RETURNING run_id`,
    );
    this.#expired = db.prepare(
      `SELECT * FROM runs INDEXED BY runs_claimable
       WHERE status = 'pending' AND owner IS NOT NULL AND lease_expires_at <= ?
       ORDER BY created_at, seq`,
    );
    this.#nextStart = db.prepare(
      // The partial index covers both columns (see CLAIM_SQL on INDEXED BY).
      `SELECT min(start_after) AS next FROM runs INDEXED BY runs_claimable
       WHERE status = 'pending' AND owner IS NULL`,
    );
    this.#insertTx = db.transaction((run, options) => this.#insertRun(run, options));
    this.#exists = db.prepare("SELECT 1 AS one FROM runs WHERE run_id = ?");
    this.#threadOf = db.prepare("SELECT thread_id FROM runs WHERE run_id = ?");
    this.#updateTx = db.transaction((runId, patch, fence) => this.#updateRun(runId, patch, fence));
    this.#deleteTx = db.transaction((runId) => this.#deleteRun(runId));
    this.#insertOutputPart = db.prepare(
      "INSERT INTO run_output_parts (run_id, part, data) VALUES (?, ?, ?)",
    );
    this.#outputParts = db.prepare(
      "SELECT data FROM run_output_parts WHERE run_id = ? ORDER BY part",
    );
    this.#checkpointState = db.prepare('SELECT "values", messages FROM checkpoints WHERE seq = ?');
    this.#claimTx = db.transaction((owner, leaseMs, now, agents) =>
      this.#claim(owner, leaseMs, now, agents),
    );
  }

  /** A row as a record, an output stored in parts or with its checkpoint's state read back. */
  readonly #toRun = (row: RunRow): RunRecord =>
    toRun(
      row,
      (runId) => this.#outputParts.all(runId).map((part) => part.data),
      (seq) => this.#checkpointState.get(seq),
    );

  insert(run: NewRun, options: InsertRunOptions): RunRecord {
    return this.#insertTx.immediate(run, options);
  }

  get(runId: string): RunRecord | null {
    const row = this.#select.get(runId);
    return row === undefined ? null : this.#toRun(row);
  }

  search(search: RunSearch): RunRecord[] {
    return this.#searches.search(search);
  }

  countSearch(search: RunSearch): number {
    return this.#searches.countSearch(search);
  }

  count(filter: RunCountFilter, limit: number): number {
    return this.#searches.count(filter, limit);
  }

  pendingOfThread(threadId: string): RunRecord[] {
    return this.#pendingOfThread.all(threadId).map(this.#toRun);
  }

  update(runId: string, patch: RunPatch, fence?: Fence): RunRecord {
    return this.#updateTx.immediate(runId, patch, fence);
  }

  /**
   * Inside the caller's transaction: the patch, and the run detached from its thread (thread_id
   * NULL), in one statement, for a run whose thread is deleted next. Deleting the thread would
   * set it NULL all the same (ON DELETE SET NULL), but as a second write of the whole row, which
   * SQLite rewrites with its output: a 10 MB answer read back and written again.
   */
  updateDetached(
    runId: string,
    patch: RunPatch,
    fence: Fence | undefined,
    lastSeq?: number,
  ): RunRecord {
    return this.#updateRun(runId, patch, fence, { detach: true, lastSeq });
  }

  /**
   * Inside the caller's transaction: `update`'s patch, with `lastSeq` as the run's last stored
   * frame when given (frames appended just before, `appendLeavingLastSeq`), in one statement.
   * `stateOf`: the seq of the checkpoint written in the same transaction whose state the
   * output holds (output-state.ts).
   */
  updateInTransaction(
    runId: string,
    patch: RunPatch,
    fence: Fence | undefined,
    lastSeq?: number,
    stateOf?: number,
  ): RunRecord {
    return this.#updateRun(runId, patch, fence, { lastSeq, stateOf });
  }

  /** The run's thread id (null once detached); undefined when there is no such run. */
  threadOf(runId: string): string | null | undefined {
    return this.#threadOf.get(runId)?.thread_id;
  }

  delete(runId: string): void {
    this.#deleteTx.immediate(runId);
  }

  claim(owner: string, leaseMs: number, now: Date, agentIds?: string[]): RunRecord | null {
    if (agentIds !== undefined && agentIds.length === 0) return null;
    const agents = agentIds === undefined ? null : JSON.stringify(agentIds);
    return this.#claimTx.immediate(owner, leaseMs, now, agents);
  }

  /**
   * Claims one run regardless of queue order when it is pending or interrupted and nobody holds a
   * live lease on it. An interrupted run is exclusive too: a second caller gets null.
   */
  claimById(runId: string, owner: string, leaseMs: number, now: Date): RunRecord | null {
    const row = this.#claimById.get({
      run_id: runId,
      owner,
      lease: addMs(now, leaseMs),
      now: now.toISOString(),
    });
    return row === undefined ? null : this.#toRun(row);
  }

  renewLeases(owner: string, leaseMs: number, now: Date): string[] {
    return this.#renew.all(addMs(now, leaseMs), owner).map((row) => row.run_id);
  }

  expired(now: Date): RunRecord[] {
    return this.#expired.all(now.toISOString()).map(this.#toRun);
  }

  nextStartAfter(): string | null {
    return this.#nextStart.get()?.next ?? null;
  }

  #insertRun(run: NewRun, options: InsertRunOptions): RunRecord {
    if (options.queue_limit !== undefined) {
      const pending = this.count(
        { agent_id: run.agent_id, status: "pending" },
        options.queue_limit,
      );
      if (pending >= options.queue_limit) throw queueFull(run.agent_id, pending);
    }
    if (options.create_hidden_thread) {
      try {
        this.#insertHiddenThread.run({
          id: run.thread_id,
          now: nowIso(),
          principal: run.principal ?? null,
        });
      } catch (err) {
        if (sqliteCode(err) === "SQLITE_CONSTRAINT_PRIMARYKEY") {
          throw conflict(`thread ${run.thread_id} already exists`);
        }
        throw err;
      }
    }
    // A hidden thread inserted just now has no checkpoint: nothing to read back.
    const thread = options.create_hidden_thread
      ? { checkpoint_id: null }
      : this.#threadCheckpoint.get(run.thread_id);
    if (thread === undefined) throw notFound("thread", run.thread_id);
    // A hidden thread was created just now: nothing else can be pending on it. (Only looked up
    // when something depends on it.)
    const threadFree =
      options.create_hidden_thread === true ||
      (!options.reject_if_busy && options.claim === undefined) ||
      this.#hasPending.get(run.thread_id) === undefined;
    if (options.reject_if_busy && !threadFree) {
      throw conflict(`thread ${run.thread_id} is busy`);
    }
    assertObject(run.creation, "run creation");
    assertObject(run.metadata, "run metadata");
    const startAfter = isoTimestamp(run.start_after, "start_after");
    const { claim } = options;
    const claimed =
      claim !== undefined && threadFree && Date.parse(startAfter) <= claim.now.getTime();
    if (options.mark_thread_busy) this.#markBusy.run(nowIso(), run.thread_id);
    let row: RunRow | undefined;
    try {
      row = this.#insert.get({
        run_id: run.run_id,
        thread_id: run.thread_id,
        agent_id: run.agent_id,
        kind: run.kind,
        now: nowIso(),
        creation: toJson(run.creation),
        metadata: toJson(run.metadata),
        start_after: startAfter,
        checkpoint_before: thread.checkpoint_id,
        principal: run.principal ?? null,
        // Claimed at once: as `claim` would leave it (a first claim is epoch 1).
        segments: claimed ? toJson([claim.segment]) : "[]",
        owner: claimed ? claim.owner : null,
        lease_expires_at: claimed ? addMs(claim.now, claim.leaseMs) : null,
        lease_epoch: claimed ? 1 : 0,
        trace_context: run.trace_context ?? null,
        face: run.face ?? null,
      });
    } catch (err) {
      // The run_id UNIQUE index decides, rather than a read before every insert.
      if (sqliteCode(err) === "SQLITE_CONSTRAINT_UNIQUE") {
        throw conflict(`run ${run.run_id} already exists`);
      }
      rethrowCheck(err, "run");
    }
    this.#metadata.put(run.run_id, run.metadata);
    return this.#toRun(row!);
  }

  /**
   * One statement: only the patched columns are written (no read of the row first, no
   * re-serializing what did not change), and RETURNING gives the updated record.
   */
  #updateRun(
    runId: string,
    patch: RunPatch,
    fence: Fence | undefined,
    also: { detach?: boolean; lastSeq?: number; stateOf?: number } = {},
  ): RunRecord {
    const columns: string[] = [];
    const params: Record<string, unknown> = { run_id: runId, updated_at: nowIso() };
    // The fence is part of the statement's WHERE: checked and written in one step.
    let fenced = "";
    if (fence !== undefined) {
      fenced = " AND owner = @fence_owner AND lease_epoch = @fence_epoch";
      params.fence_owner = fence.owner;
      params.fence_epoch = fence.epoch;
    }
    let outputParts: Buffer[] | undefined;
    for (const column of PATCH_COLUMNS) {
      const value = patch[column];
      if (value === undefined) continue;
      columns.push(column);
      if (column === "output" && also.stateOf !== undefined) {
        params.output = outputOfCheckpoint(value as Record<string, unknown>, also.stateOf);
      } else if (column === "output") {
        // Megabytes for a long answer: packed, in parts written after the row (packed-json.ts).
        const packed = packJsonParts(value);
        if (typeof packed !== "string") outputParts = packed;
        params.output = typeof packed === "string" ? packed : IN_PARTS;
      } else {
        params[column] = patchValue(column, value);
      }
    }
    const assigned = columns.map((column) => `${column} = @${column}`);
    if (also.detach) assigned.push("thread_id = NULL");
    if (also.lastSeq !== undefined) {
      assigned.push("last_seq = @last_seq");
      params.last_seq = also.lastSeq;
    }
    const assignments = assigned.join(", ");
    // A run's output can be megabytes (a long answer): the one just written is the patch's,
    // so it is not read back and parsed again.
    const returning = patch.output === undefined ? "*" : RETURNING_ALL_BUT_OUTPUT;
    const sql = `UPDATE runs SET ${assignments}${assignments ? ", " : ""}updated_at = @updated_at
       WHERE run_id = @run_id${fenced} RETURNING ${returning}`;
    let row: RunRow | undefined;
    try {
      row = this.#cache.get(sql).get(params) as RunRow | undefined;
    } catch (err) {
      rethrowCheck(err, "run patch");
    }
    if (row === undefined) {
      if (fence !== undefined && this.#exists.get(runId) !== undefined) throw claimLost(runId);
      throw notFound("run", runId);
    }
    // The row's trigger has removed the parts of an output written before (migration 008).
    if (outputParts !== undefined) {
      for (const [index, part] of outputParts.entries()) {
        this.#insertOutputPart.run(runId, index, part);
      }
    }
    return patch.output === undefined
      ? this.#toRun(row)
      : { ...this.#toRun(row), output: patch.output };
  }

  #deleteRun(runId: string): void {
    const run = this.#require(runId);
    if (run.status === "pending") throw conflict(`run ${runId} is pending`);
    // Frames and webhook deliveries go with it (ON DELETE CASCADE).
    this.#delete.run(runId);
  }

  #claim(owner: string, leaseMs: number, now: Date, agents: string | null): RunRecord | null {
    const row = this.#claimCandidate.get({ now: now.toISOString(), agents });
    if (row === undefined) return null;
    const claimed = this.#setLease.get({ owner, lease: addMs(now, leaseMs), seq: row.seq });
    return claimed === undefined ? null : this.#toRun(claimed);
  }

  #require(runId: string): RunRecord {
    const run = this.get(runId);
    if (run === null) throw notFound("run", runId);
    return run;
  }
}
