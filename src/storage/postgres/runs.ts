import { conflict, notFound, queueFull } from "../../util/errors.js";
import type {
  CreateThreadInput,
  Fence,
  FinishRunWrites,
  InsertClaim,
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
  prepared,
  type Queryable,
  TRANSACTION,
} from "./connection.js";
import type { FrameRepository } from "./frames.js";
import { insertFinishedRun } from "./held-runs.js";
import { assertObject, entryDigests, toJson } from "./json.js";
import {
  addMs,
  isoTimestamp,
  nowIso,
  RUN_COLUMNS,
  type RunRow,
  rethrowInvalid,
  toRun,
} from "./mapping.js";
import { endRunDeletingThread, type KnownRun, updateRunRow } from "./run-update.js";
import { SharedReads } from "./shared-reads.js";

/** How many runs' unchanging columns a repository keeps at most (see RunRepository.#known). */
const KNOWN_RUNS = 10_000;

/**
 * The run row, its checkpoint_before read from the (locked) thread, unless `$11` asks for the
 * busy check and the thread has a pending run: then nothing is inserted. With a claim (`$12`
 * the owner, `$13` the lease's end, `$14` the open segment, `$15` now) it is inserted claimed
 * when it is due and alone on its thread, as a first claim leaves it (epoch 1).
 *
 * Only what the server does not know comes back (see `insertedRun`): whether it was claimed
 * (its epoch) and the thread's checkpoint.
 */
const INSERT_RUN = prepared(`
  INSERT INTO runs
    (run_id, thread_id, agent_id, kind, status, created_at, updated_at, creation, metadata,
     metadata_digest, output, interrupts, resume, segments, start_after, checkpoint_before,
     principal, owner, lease_expires_at, lease_epoch, trace_context)
  SELECT $1, t.thread_id, $3, $4, 'pending', $5::timestamptz, $5::timestamptz, $6::json, $7::json,
         $8::text[], 'null'::json, '[]'::json, 'null'::json,
         CASE WHEN c.claimed THEN $14::json ELSE '[]'::json END, $9::timestamptz,
         t.checkpoint_id, $10,
         CASE WHEN c.claimed THEN $12::text END,
         CASE WHEN c.claimed THEN $13::timestamptz END,
         CASE WHEN c.claimed THEN 1 ELSE 0 END, $16::text
  FROM threads t
  CROSS JOIN LATERAL (
    SELECT EXISTS (SELECT 1 FROM runs WHERE thread_id = $2 AND status = 'pending') AS busy
  ) b
  CROSS JOIN LATERAL (
    SELECT $12::text IS NOT NULL AND $9::timestamptz <= $15::timestamptz AND NOT b.busy AS claimed
  ) c
  WHERE t.thread_id = $2 AND NOT ($11::boolean AND b.busy)
  RETURNING lease_epoch, checkpoint_before`);

/**
 * A run with the thread it creates, in one statement: the thread inserted busy (nothing else
 * can be pending on it), the run as INSERT_RUN writes it on a thread with no pending run and no
 * checkpoint. `$11` the claim's owner, `$12` the lease's end, `$13` the open segment, `$14` now:
 * claimed when due. `$15` the agent's queue limit (null: none): with that many pending runs of
 * the agent neither the thread nor the run is inserted (the count reads the pending runs'
 * partial index, `pending` being written into the text). A thread of that id that exists
 * already is left as it is, and no run is inserted either. Only its epoch comes back: whether
 * it was claimed (see `insertedRun`). `thread` gives the thread's metadata, its digest, whether
 * it is hidden and its owner (SQL text: literals, or parameters after `$16`).
 */
function insertRunWithThread(thread: {
  metadata: string;
  digest: string;
  hidden: string;
  principal: string;
}) {
  return prepared(`
  WITH room AS (
    SELECT $15::integer IS NULL OR (
      SELECT count(*) FROM (
        SELECT 1 FROM runs WHERE agent_id = $3 AND status = 'pending'
        LIMIT coalesce($15::integer, 0)) limited
    ) < $15::integer AS ok
  ), thread AS (
    INSERT INTO threads
      (thread_id, created_at, updated_at, metadata, metadata_digest, status, "values",
       values_digest, messages, checkpoint_id, hidden, principal)
    SELECT $2, $5::timestamptz, $5::timestamptz, ${thread.metadata}, ${thread.digest}, 'busy',
           'null', '{}', 'null', NULL, ${thread.hidden}, ${thread.principal}
    FROM room WHERE room.ok
    ON CONFLICT (thread_id) DO NOTHING
    RETURNING thread_id
  )
  INSERT INTO runs
    (run_id, thread_id, agent_id, kind, status, created_at, updated_at, creation, metadata,
     metadata_digest, output, interrupts, resume, segments, start_after, checkpoint_before,
     principal, owner, lease_expires_at, lease_epoch, trace_context)
  SELECT $1, t.thread_id, $3, $4, 'pending', $5::timestamptz, $5::timestamptz, $6::json, $7::json,
         $8::text[], 'null'::json, '[]'::json, 'null'::json,
         CASE WHEN c.claimed THEN $13::json ELSE '[]'::json END, $9::timestamptz, NULL, $10,
         CASE WHEN c.claimed THEN $11::text END,
         CASE WHEN c.claimed THEN $12::timestamptz END,
         CASE WHEN c.claimed THEN 1 ELSE 0 END, $16::text
  FROM thread t
  CROSS JOIN LATERAL (
    SELECT $11::text IS NOT NULL AND $9::timestamptz <= $14::timestamptz AS claimed
  ) c
  RETURNING lease_epoch`);
}

/** A stateless run with its hidden thread (see #insertWithHiddenThread). */
const INSERT_RUN_WITH_THREAD = insertRunWithThread({
  metadata: "'{}'",
  digest: "'{}'",
  hidden: "true",
  principal: "$10",
});

/**
 * A stateful run with the visible thread it creates (see insertOnNewThread): `$17` the thread's
 * metadata, `$18` its digest, `$19` whether it is hidden, `$20` its owner.
 */
const INSERT_RUN_WITH_NEW_THREAD = insertRunWithThread({
  metadata: "$17::json",
  digest: "$18::text[]",
  hidden: "$19::boolean",
  principal: "$20",
});

const MARK_THREAD_BUSY = prepared(
  "UPDATE threads SET status = 'busy', updated_at = $2 WHERE thread_id = $1",
);
const LOCK_THREAD = prepared("SELECT 1 FROM threads WHERE thread_id = $1 FOR NO KEY UPDATE");
/**
 * The queue check before every run (an agent's pending runs, up to its limit). `pending` is
 * written into the text, not bound: the statement is then prepared with a plan that reads the
 * pending runs' partial index whatever the agent, which a `status = $2` could not promise (its
 * generic plan would not know `pending` is rare).
 */
const COUNT_PENDING_OF_AGENT = prepared(`SELECT count(*)::int AS n FROM (
  SELECT 1 FROM runs WHERE agent_id = $1 AND status = 'pending' LIMIT $2) limited`);

/** Only the agent and `pending`: the filter COUNT_PENDING_OF_AGENT serves. */
function isQueueCount(filter: RunCountFilter): filter is { agent_id: string; status: "pending" } {
  return (
    filter.status === "pending" &&
    filter.agent_id !== undefined &&
    filter.kind === undefined &&
    filter.thread_id === undefined
  );
}

const GET_RUN = prepared(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1`);
const RUN_EXISTS = prepared("SELECT 1 FROM runs WHERE run_id = $1");
const LOCK_THREAD_OF_RUN = prepared(`SELECT thread_id FROM threads
  WHERE thread_id = (SELECT thread_id FROM runs WHERE run_id = $1)
  FOR NO KEY UPDATE`);
const LOCK_THREAD_OF_RUN_TO_DELETE = prepared(`SELECT thread_id FROM threads
  WHERE thread_id = (SELECT thread_id FROM runs WHERE run_id = $1)
  FOR UPDATE`);
const SET_THREAD_STATUS = prepared(
  "UPDATE threads SET status = $2, updated_at = $3 WHERE thread_id = $1",
);
/** The pending check rides in the DELETE (see #finishDeletingThread). */
const DELETE_THREAD_UNLESS_PENDING = prepared(`DELETE FROM threads WHERE thread_id = $1
  AND NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = $1 AND status = 'pending')`);

/** Runs: insertion with the busy check, search, updates and deletion. Claims: run-claims.ts. */
export class RunRepository {
  readonly #db: Database;
  readonly #frames: FrameRepository;
  readonly #checkpoints: CheckpointRepository;
  /**
   * The unchanging columns of the runs this replica inserted claimed (it executes them), until
   * their end: the end's UPDATE does not read back what the server sent at the insert. They are
   * the objects of the record the engine holds while it executes the run, so keeping them costs
   * little; bounded, oldest first out. A run not in it is read back whole, as before.
   */
  readonly #known = new Map<string, KnownRun>();
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
   * before the lock was granted.
   *
   * A stateless run creates its hidden thread in the same statement (#insertWithHiddenThread).
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
          run.trace_context ?? null,
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
        return this.#remember(insertedRun(run, params, options.claim, row));
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
      run.trace_context ?? null,
    ];
    const row = await this.#insertRunWithThread(params);
    if (row === undefined) {
      await this.#throwIfQueueFull(run, options);
      throw conflict(`thread ${run.thread_id} already exists`);
    }
    return this.#remember(
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
      run.trace_context ?? null,
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
    return this.#remember(
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
      record.trace_context,
    ]);
    if (row === undefined) throw conflict(`thread ${record.thread_id} already exists`);
    return this.#remember(record);
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

  /** Keeps a run's unchanging columns when it was inserted claimed (see #known). */
  #remember(run: RunRecord): RunRecord {
    if (run.owner === null) return run;
    if (this.#known.size >= KNOWN_RUNS) {
      const oldest = this.#known.keys().next();
      if (oldest.done !== true) this.#known.delete(oldest.value);
    }
    this.#known.set(run.run_id, {
      run_id: run.run_id,
      agent_id: run.agent_id,
      kind: run.kind,
      created_at: run.created_at,
      creation: run.creation,
      metadata: run.metadata,
      trace_context: run.trace_context,
    });
    return run;
  }

  /** The run's unchanging columns if kept; a patch that ends the run lets go of them. */
  #knownFor(runId: string, patch: RunPatch): KnownRun | undefined {
    const known = this.#known.get(runId);
    if (known !== undefined && patch.status !== undefined && patch.status !== "pending") {
      this.#known.delete(runId);
    }
    return known;
  }

  async get(runId: string, db: Queryable = this.#db): Promise<RunRecord | null> {
    const result = await db.query<RunRow>(GET_RUN, [runId]);
    const row = result.rows[0];
    return row === undefined ? null : toRun(row);
  }

  async search(search: RunSearch): Promise<RunRecord[]> {
    const { where, params } = searchFilter(search);
    let order = "created_at DESC, seq DESC";
    if (search.order === "updated") {
      order = "updated_at DESC, run_id DESC";
      if (search.after !== undefined) {
        params.push(isoTimestamp(search.after.updated_at, "after.updated_at"), search.after.run_id);
        const [at, id] = [params.length - 1, params.length];
        where.push(`(updated_at, run_id) < ($${at}::timestamptz, $${id})`);
      }
    }
    const filter = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
    params.push(search.limit, search.offset);
    const result = await this.#db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs ${filter} ORDER BY ${order}
       LIMIT $${params.length - 1} OFFSET $${params.length}`,
      params,
    );
    return result.rows.map(toRun);
  }

  async countSearch(search: RunSearch): Promise<number> {
    const { where, params } = searchFilter(search);
    const filter = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
    const result = await this.#db.query<{ n: number }>(
      `SELECT count(*)::integer AS n FROM runs ${filter}`,
      params,
    );
    return result.rows[0]?.n ?? 0;
  }

  /** The agent's pending runs, counted up to `limit` (the queue check). */
  async pendingOfAgent(agentId: string, limit: number, db: Queryable = this.#db): Promise<number> {
    const queued = await db.query<{ n: number }>(COUNT_PENDING_OF_AGENT, [
      agentId,
      Math.max(0, Math.floor(limit)),
    ]);
    return queued.rows[0]?.n ?? 0;
  }

  async count(filter: RunCountFilter, limit: number): Promise<number> {
    const bound = Math.max(0, Math.floor(limit));
    if (isQueueCount(filter)) {
      const { agent_id } = filter;
      return this.#queueCounts.get(`${bound}|${agent_id}`, () =>
        this.pendingOfAgent(agent_id, bound),
      );
    }
    const where: string[] = [];
    const params: unknown[] = [];
    for (const field of ["agent_id", "status", "kind", "thread_id"] as const) {
      const value = filter[field];
      if (value !== undefined) {
        params.push(value);
        where.push(`${field} = $${params.length}`);
      }
    }
    const clause = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
    params.push(bound);
    const result = await this.#db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT 1 FROM runs ${clause} LIMIT $${params.length}) limited`,
      params,
    );
    return result.rows[0]?.n ?? 0;
  }

  async pendingOfThread(threadId: string): Promise<RunRecord[]> {
    const result = await this.#db.query<RunRow>(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = $1 AND status = 'pending'
       ORDER BY created_at, seq`,
      [threadId],
    );
    return result.rows.map(toRun);
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
    const known = this.#knownFor(runId, patch);
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
      const known = this.#knownFor(runId, patch);
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

/**
 * A new run's columns, `$1`–`$10` of INSERT_RUN and INSERT_RUN_WITH_THREAD (its trace context,
 * the last one, is `$16` of both).
 */
function runParams(run: NewRun, startAfter: string): unknown[] {
  return [
    run.run_id,
    run.thread_id,
    run.agent_id,
    run.kind,
    nowIso(),
    toJson(run.creation),
    toJson(run.metadata),
    entryDigests(run.metadata),
    startAfter,
    run.principal ?? null,
  ];
}

/** The claim taken by an insert (see `InsertRunOptions.claim`): owner, lease end, segment, now. */
function claimParams(claim: InsertClaim | undefined): unknown[] {
  return [
    claim?.owner ?? null,
    claim === undefined ? null : addMs(claim.now, claim.leaseMs),
    claim === undefined ? null : toJson([claim.segment]),
    claim?.now.toISOString() ?? null,
  ];
}

/** What an insert sends back: what the server could not know before. */
interface InsertedRow {
  lease_epoch: number;
  checkpoint_before: string | null;
}

/**
 * The record of a run just inserted, from what was sent (`columns`, runParams' values) and what
 * came back: the row as RUN_COLUMNS would have read it, without reading it. Timestamps were sent
 * as ISO text with milliseconds, which timestamptz keeps exactly; JSON columns hold the text
 * sent, parsed here as pg would parse it.
 */
function insertedRun(
  run: NewRun,
  columns: unknown[],
  claim: InsertClaim | undefined,
  row: InsertedRow,
): RunRecord {
  const [, , , , now, creation, metadata, , startAfter, principal] = columns as [
    string,
    string,
    string,
    string,
    string,
    string,
    string,
    string[],
    string,
    string | null,
  ];
  const claimed = claim !== undefined && row.lease_epoch === 1;
  return {
    run_id: run.run_id,
    thread_id: run.thread_id,
    agent_id: run.agent_id,
    kind: run.kind,
    status: "pending",
    created_at: now,
    updated_at: now,
    creation: JSON.parse(creation) as Record<string, unknown>,
    metadata: JSON.parse(metadata) as Record<string, unknown>,
    output: null,
    interrupts: [],
    resume: null,
    segments: claimed ? (JSON.parse(toJson([claim.segment])) as RunRecord["segments"]) : [],
    start_after: startAfter,
    checkpoint_before: row.checkpoint_before,
    owner: claimed ? claim.owner : null,
    lease_expires_at: claimed ? addMs(claim.now, claim.leaseMs) : null,
    lease_epoch: row.lease_epoch,
    cancel_requested: null,
    last_seq: 0,
    principal,
    trace_context: run.trace_context ?? null,
  };
}

/** The conditions of a search's filters, with their parameters. */
function searchFilter(search: RunSearch): { where: string[]; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  for (const field of ["agent_id", "status", "kind", "thread_id", "principal"] as const) {
    const value = search[field];
    if (value !== undefined) {
      params.push(value);
      where.push(`${field} = $${params.length}`);
    }
  }
  if (search.agent_ids !== undefined) {
    params.push(search.agent_ids);
    where.push(`agent_id = ANY($${params.length}::text[])`);
  }
  if (search.statuses !== undefined) {
    params.push(search.statuses);
    where.push(`status = ANY($${params.length}::text[])`);
  }
  if (search.started !== undefined) {
    where.push(`json_array_length(segments) ${search.started ? ">" : "="} 0`);
  }
  if (search.errcode !== undefined) {
    params.push(String(search.errcode.value));
    const distinct = search.errcode.is ? "IS NOT DISTINCT FROM" : "IS DISTINCT FROM";
    where.push(`(output ->> 'errcode') ${distinct} $${params.length}`);
  }
  if (search.updated_since !== undefined) {
    params.push(isoTimestamp(search.updated_since, "updated_since"));
    where.push(`updated_at >= $${params.length}::timestamptz`);
  }
  if (search.metadata !== undefined) {
    assertObject(search.metadata, "metadata filter");
    const digests = entryDigests(search.metadata);
    if (digests.length > 0) {
      params.push(digests);
      where.push(`metadata_digest @> $${params.length}::text[]`);
    }
  }
  return { where, params };
}
