import { conflict, notFound, queueFull } from "../../util/errors.js";
import type {
  CreateThreadInput,
  Fence,
  FinishRunWrites,
  InsertRunOptions,
  NewRun,
  RunCountFilter,
  RunFrame,
  RunPatch,
  RunRecord,
  RunSearch,
  ThreadOnFinish,
} from "../types.js";
import type { CheckpointRepository } from "./checkpoints.js";
import {
  type Database,
  PIPELINED,
  PIPELINED_TRANSACTION,
  pgCode,
  type Queryable,
  TRANSACTION,
} from "./connection.js";
import type { FrameRepository } from "./frames.js";
import { insertFinishedRun } from "./held-runs.js";
import { assertObject, entryDigests, toJson } from "./json.js";
import { KnownRuns } from "./known-runs.js";
import { isoTimestamp, nowIso, type RunRow, rethrowInvalid, toRun } from "./mapping.js";
import { countRuns, countSearchRuns, pendingRunsOfThread, searchRuns } from "./run-search.js";
import {
  COUNT_PENDING_OF_AGENT,
  claimParams,
  DELETE_THREAD_UNLESS_PENDING,
  GET_RUN,
  INSERT_RUN,
  INSERT_RUN_WITH_NEW_THREAD,
  INSERT_RUN_WITH_THREAD,
  type InsertedRow,
  insertedRun,
  isQueueCount,
  LOCK_THREAD,
  LOCK_THREAD_OF_RUN,
  LOCK_THREAD_OF_RUN_TO_DELETE,
  lastColumns,
  MARK_THREAD_BUSY,
  RUN_EXISTS,
  runParams,
  SET_THREAD_STATUS,
} from "./run-statements.js";
import { endRunDeletingThread, type KnownRun, updateRunRow } from "./run-update.js";
import { SharedReads } from "./shared-reads.js";

/**
 * Runs: insertion with the busy check, updates, ends and deletion. Statements: run-statements.ts;
 * searches and counts: run-search.ts; claims: run-claims.ts.
 */
export class RunRepository {
  readonly #db: Database;
  readonly #frames: FrameRepository;
  readonly #checkpoints: CheckpointRepository;
  /** The unchanging columns of runs this replica inserted claimed (see known-runs.ts). */
  readonly #known = new KnownRuns();
  /** Queue counts asked for together share a statement (see shared-reads.ts). */
  readonly #queueCounts = new SharedReads<number>();

  constructor(db: Database, frames: FrameRepository, checkpoints: CheckpointRepository) {
    this.#db = db;
    this.#frames = frames;
    this.#checkpoints = checkpoints;
  }

  /**
   * Locks the thread row, then inserts with the busy check in the same transaction: a second
   * insert on the thread (this replica or another) waits on the lock and then sees this run as
   * pending. The INSERT is a statement after the lock, so its snapshot sees every run committed
   * before the lock was granted. A stateless run creates its hidden thread in the same statement
   * (#insertWithHiddenThread).
   */
  async insert(run: NewRun, options: InsertRunOptions): Promise<RunRecord> {
    assertObject(run.creation, "run creation");
    assertObject(run.metadata, "run metadata");
    const startAfter = isoTimestamp(run.start_after, "start_after");
    if (options.create_hidden_thread) return this.#insertWithHiddenThread(run, startAfter, options);
    return this.#db.write(
      async (db) => {
        if (options.queue_limit !== undefined) {
          const pending = await this.pendingOfAgent(run.agent_id, options.queue_limit, db);
          if (pending >= options.queue_limit) throw queueFull(run.agent_id, pending);
        }
        // Marking the thread busy locks its row as the SELECT … FOR NO KEY UPDATE does; the
        // mark is undone with the rest when the busy check refuses the run. The INSERT goes out
        // with it (and BEGIN), one round trip: it needs nothing the lock answers, and its snapshot
        // is still taken once the lock is held (statements run in the order they were sent).
        const locking = db.query(
          options.mark_thread_busy ? MARK_THREAD_BUSY : LOCK_THREAD,
          options.mark_thread_busy ? [run.thread_id, nowIso()] : [run.thread_id],
        );
        const params = runParams(run, startAfter);
        const inserting = db.query<InsertedRow>(INSERT_RUN, [
          ...params,
          options.reject_if_busy,
          ...claimParams(options.claim),
          ...lastColumns(run),
        ]);
        inserting.catch(() => undefined);
        if ((await locking).rowCount === 0) {
          // No thread: the INSERT found none either and wrote nothing.
          await inserting.catch(() => undefined);
          throw notFound("thread", run.thread_id);
        }
        let inserted: Awaited<ReturnType<Queryable["query"]>>;
        try {
          inserted = await inserting;
        } catch (err) {
          // The run id is taken (by an earlier run, or a concurrent insert on another thread).
          if (pgCode(err) === "23505") throw conflict(`run ${run.run_id} already exists`);
          rethrowInvalid(err, "run");
        }
        const row = inserted.rows[0] as InsertedRow | undefined;
        // The thread is locked and exists: no row means the busy check said no.
        if (row === undefined) throw conflict(`thread ${run.thread_id} is busy`);
        return this.#known.remember(insertedRun(run, params, options.claim, row));
        // With a queue limit the count is answered before the rest goes out.
      },
      options.queue_limit === undefined ? PIPELINED_TRANSACTION : TRANSACTION,
    );
  }

  /**
   * A stateless run and its hidden thread in one statement, committed on its own: one round
   * trip where BEGIN, two INSERTs and COMMIT took four. Nothing needs the thread's lock: the row
   * is new, and a run on a thread of that id inserted meanwhile elsewhere makes the thread's
   * insert do nothing, so no run is inserted either (the thread exists: a conflict). A run id
   * already taken fails the statement, the thread's insert with it.
   */
  async #insertWithHiddenThread(
    run: NewRun,
    startAfter: string,
    options: InsertRunOptions,
  ): Promise<RunRecord> {
    const columns = runParams(run, startAfter);
    const params = [
      ...columns,
      ...claimParams(options.claim),
      options.queue_limit ?? null,
      ...lastColumns(run),
    ];
    const row = await this.#insertRunWithThread(params);
    if (row === undefined) {
      await this.#throwIfQueueFull(run, options);
      throw conflict(`thread ${run.thread_id} already exists`);
    }
    return this.#known.remember(
      insertedRun(run, columns, options.claim, { ...row, checkpoint_before: null }),
    );
  }

  /**
   * An insert with its thread was refused: the queue was full, or the thread exists. Only then
   * is the queue counted again, to tell the two apart.
   */
  async #throwIfQueueFull(run: NewRun, options: InsertRunOptions): Promise<void> {
    if (options.queue_limit === undefined) return;
    const pending = await this.pendingOfAgent(run.agent_id, options.queue_limit);
    if (pending >= options.queue_limit) throw queueFull(run.agent_id, pending);
  }

  /**
   * A new thread (`thread`: its metadata and owner; `if_exists` does not apply) and a run on
   * it, in one statement (see INSERT_RUN_WITH_NEW_THREAD): the thread created busy, the run
   * claimed when `options.claim` is given and it is due. Null, having written nothing, when a
   * thread of that id exists. A failure of the run's insert (its id taken) writes no thread.
   */
  async insertOnNewThread(
    thread: CreateThreadInput,
    run: NewRun,
    options: InsertRunOptions,
  ): Promise<RunRecord | null> {
    assertObject(thread.metadata, "thread metadata");
    assertObject(run.creation, "run creation");
    assertObject(run.metadata, "run metadata");
    if (thread.thread_id !== run.thread_id) {
      throw new Error(`run ${run.run_id} is not on the thread it creates (${thread.thread_id})`);
    }
    const startAfter = isoTimestamp(run.start_after, "start_after");
    const columns = runParams(run, startAfter);
    const params = [
      ...columns,
      ...claimParams(options.claim),
      options.queue_limit ?? null,
      ...lastColumns(run),
      toJson(thread.metadata),
      entryDigests(thread.metadata),
      thread.hidden === true,
      thread.principal ?? null,
    ];
    const row = await this.#insertRunWithThread(params, INSERT_RUN_WITH_NEW_THREAD);
    if (row === undefined) {
      await this.#throwIfQueueFull(run, options);
      return null;
    }
    return this.#known.remember(
      insertedRun(run, columns, options.claim, { ...row, checkpoint_before: null }),
    );
  }

  /**
   * A held insert written as inserted (see ../held-inserts.ts): `record`, planned by
   * `planHeldRun` (pending, claimed, due), and its hidden thread, as #insertWithHiddenThread
   * writes them.
   */
  async insertPlanned(record: RunRecord): Promise<RunRecord> {
    const row = await this.#insertRunWithThread([
      record.run_id,
      record.thread_id,
      record.agent_id,
      record.kind,
      record.created_at,
      toJson(record.creation),
      toJson(record.metadata),
      entryDigests(record.metadata),
      record.start_after,
      record.principal,
      record.owner,
      record.lease_expires_at,
      toJson(record.segments),
      // Due: planned only when its start is not after the claim's now.
      record.start_after,
      null,
      ...lastColumns(record),
    ]);
    if (row === undefined) throw conflict(`thread ${record.thread_id} already exists`);
    return this.#known.remember(record);
  }

  /** A held insert written once, with its end (see held-runs.ts). */
  insertFinished(record: RunRecord, patch: RunPatch, frames: RunFrame[]): Promise<RunRecord> {
    return insertFinishedRun(this.#db, record, patch, frames);
  }

  /** INSERT_RUN_WITH_THREAD (or `statement`, its kin); undefined when it inserted nothing. */
  async #insertRunWithThread(
    params: unknown[],
    statement = INSERT_RUN_WITH_THREAD,
  ): Promise<InsertedRow | undefined> {
    try {
      const inserted = await this.#db.write(
        (db) => db.query<InsertedRow>(statement, params),
        PIPELINED,
      );
      return inserted.rows[0];
    } catch (err) {
      if (pgCode(err) === "23505") throw conflict(`run ${String(params[0])} already exists`);
      rethrowInvalid(err, "run");
    }
  }

  async get(runId: string, db: Queryable = this.#db): Promise<RunRecord | null> {
    const result = await db.query<RunRow>(GET_RUN, [runId]);
    const row = result.rows[0];
    return row === undefined ? null : toRun(row);
  }

  /** The agent's pending runs, counted up to `limit` (the queue check). */
  async pendingOfAgent(agentId: string, limit: number, db: Queryable = this.#db): Promise<number> {
    const queued = await db.query<{ n: number }>(COUNT_PENDING_OF_AGENT, [
      agentId,
      Math.max(0, Math.floor(limit)),
    ]);
    return queued.rows[0]?.n ?? 0;
  }

  search(search: RunSearch): Promise<RunRecord[]> {
    return searchRuns(this.#db, search);
  }

  countSearch(search: RunSearch): Promise<number> {
    return countSearchRuns(this.#db, search);
  }

  pendingOfThread(threadId: string): Promise<RunRecord[]> {
    return pendingRunsOfThread(this.#db, threadId);
  }

  async count(filter: RunCountFilter, limit: number): Promise<number> {
    const bound = Math.max(0, Math.floor(limit));
    if (!isQueueCount(filter)) return countRuns(this.#db, filter, bound);
    const { agent_id } = filter;
    return this.#queueCounts.get(`${bound}|${agent_id}`, () =>
      this.pendingOfAgent(agent_id, bound),
    );
  }

  /**
   * The run's last frames and checkpoint (`writes`), its outcome and its thread's status or
   * deletion, in one transaction.
   */
  async finish(
    runId: string,
    patch: RunPatch,
    thread: ThreadOnFinish,
    fence?: Fence,
    writes?: FinishRunWrites,
  ): Promise<RunRecord> {
    const known = this.#known.take(runId, patch);
    if ("delete" in thread) return this.#finishDeletingThread(runId, patch, fence, writes, known);
    return this.#db.write(async (db) => {
      // The thread is locked before the run, in the order insertRun and claimRun take them. The
      // run's end needs nothing the lock answers, so both go out together (with BEGIN) and are
      // answered in that order.
      const locking = db.query<{ thread_id: string }>(LOCK_THREAD_OF_RUN, [runId]);
      const ending = this.#endWith(db, runId, patch, fence, writes?.frames, false, known);
      ending.catch(() => undefined);
      const threadId = (await locking).rows[0]?.thread_id;
      const updated = await ending;
      if (writes?.checkpoint !== undefined) {
        if (threadId === undefined) throw notFound("thread of run", runId);
        await this.#checkpoints.addIn(db, threadId, writes.checkpoint);
      }
      // A deleted thread leaves its runs with thread_id NULL: nothing to set then.
      if (threadId === undefined) return updated;
      try {
        await db.query(SET_THREAD_STATUS, [threadId, thread.status, nowIso()]);
      } catch (err) {
        rethrowInvalid(err, "thread status");
      }
      return updated;
    }, TRANSACTION);
  }

  /**
   * The run's update and its thread's deletion in one transaction. Locks as `deleteThread`
   * does (the thread first, FOR UPDATE), so a run inserted on the thread meanwhile either
   * waits and then finds it gone, or is seen pending here and the deletion is refused.
   *
   * A run that ends (the usual case: a stateless run's hidden thread) does it in two
   * statements sent together with BEGIN, one round trip: the lock, then its end and the
   * thread's DELETE as one statement (endRunDeletingThread). Otherwise step by step.
   */
  async #finishDeletingThread(
    runId: string,
    patch: RunPatch,
    fence: Fence | undefined,
    writes: FinishRunWrites | undefined,
    known: KnownRun | undefined,
  ): Promise<RunRecord> {
    const frames = writes?.frames ?? [];
    const ends = patch.status !== undefined && patch.status !== "pending";
    const foldable =
      ends &&
      (frames.length === 0 || (fence !== undefined && frames.every((f) => f.run_id === runId)));
    if (!foldable) return this.#finishDeletingThreadStepwise(runId, patch, fence, writes, known);
    return this.#db.write(async (db) => {
      // Issued together, answered in order: the end's snapshot is taken once the lock is held.
      const locking = db.query<{ thread_id: string }>(LOCK_THREAD_OF_RUN_TO_DELETE, [runId]);
      const ending = endRunDeletingThread(db, runId, patch, fence, frames, known);
      ending.catch(() => undefined);
      const threadId = (await locking).rows[0]?.thread_id;
      if (threadId === undefined) {
        // Whatever the end did is taken back with the transaction.
        await ending.catch(() => undefined);
        throw await this.#missingThreadOrRun(db, runId);
      }
      const { run, threadDeleted } = await ending;
      if (!threadDeleted) throw conflict(`thread ${threadId} has a pending run`);
      return { ...run, thread_id: null };
    }, PIPELINED_TRANSACTION);
  }

  async #finishDeletingThreadStepwise(
    runId: string,
    patch: RunPatch,
    fence: Fence | undefined,
    writes: FinishRunWrites | undefined,
    known: KnownRun | undefined,
  ): Promise<RunRecord> {
    return this.#db.write(async (db) => {
      const locked = await db.query<{ thread_id: string }>(LOCK_THREAD_OF_RUN_TO_DELETE, [runId]);
      const threadId = locked.rows[0]?.thread_id;
      if (threadId === undefined) throw await this.#missingThreadOrRun(db, runId);
      // A run that ends leaves the thread in its own UPDATE: the deletion's ON DELETE SET NULL
      // then has no row of it to write again. One still pending stays on the thread, so the
      // DELETE below sees it and refuses, as it did.
      const ends = patch.status !== undefined && patch.status !== "pending";
      const updated = await this.#endWith(db, runId, patch, fence, writes?.frames, ends, known);
      // The pending check rides in the DELETE (a statement after the lock, so it sees every run
      // committed before): cascades to checkpoints; runs keep existing with thread_id NULL.
      const deleted = await db.query(DELETE_THREAD_UNLESS_PENDING, [threadId]);
      if (deleted.rowCount === 0) throw conflict(`thread ${threadId} has a pending run`);
      return { ...updated, thread_id: null };
    }, TRANSACTION);
  }

  /** Why a run's thread could not be locked: no such run, or the run has no thread. */
  async #missingThreadOrRun(db: Queryable, runId: string): Promise<Error> {
    const exists = await db.query(RUN_EXISTS, [runId]);
    return exists.rowCount === 0 ? notFound("run", runId) : notFound("thread of run", runId);
  }

  /**
   * A run's end: its last frames, then its outcome. Under a fence the frames ride in the
   * outcome's UPDATE (updateRunRow), otherwise they are appended first.
   */
  async #endWith(
    db: Queryable,
    runId: string,
    patch: RunPatch,
    fence: Fence | undefined,
    frames: RunFrame[] | undefined,
    detachThread: boolean,
    known: KnownRun | undefined,
  ): Promise<RunRecord> {
    const fold =
      fence !== undefined &&
      frames !== undefined &&
      frames.length > 0 &&
      frames.every((f) => f.run_id === runId);
    if (fold) return updateRunRow(db, runId, patch, fence, { frames, detachThread, known });
    // Frames before the outcome: under a fence they need the run still held by it.
    if (frames !== undefined) await this.#frames.appendIn(db, frames, fence);
    return updateRunRow(db, runId, patch, fence, { detachThread, known });
  }

  /**
   * One UPDATE of the given fields. Making a run pending (a resume) takes the thread lock first,
   * like insertRun and claimRun, so "busy" and "one run per thread" see it atomically.
   */
  async update(runId: string, patch: RunPatch, fence?: Fence): Promise<RunRecord> {
    if (patch.status !== "pending") {
      const known = this.#known.take(runId, patch);
      return this.#db.write((db) => updateRunRow(db, runId, patch, fence, { known }), PIPELINED);
    }
    return this.#db.write(async (db) => {
      await db.query(LOCK_THREAD_OF_RUN, [runId]);
      return updateRunRow(db, runId, patch, fence);
    }, TRANSACTION);
  }

  async delete(runId: string): Promise<void> {
    // Frames and webhook deliveries go with it (ON DELETE CASCADE).
    await this.#db.write(async (db) => {
      const deleted = await db.query("DELETE FROM runs WHERE run_id = $1 AND status <> 'pending'", [
        runId,
      ]);
      if (deleted.rowCount !== 0) return;
      if ((await this.get(runId, db)) === null) throw notFound("run", runId);
      throw conflict(`run ${runId} is pending`);
    });
  }
}
