/**
 * The statements of the run repository (runs.ts), and the parameters and records of its inserts:
 * SQL in one place, read beside the comments that say what each statement decides.
 */
import type { InsertClaim, NewRun, RunCountFilter, RunRecord } from "../types.js";
import { prepared } from "./connection.js";
import { entryDigests, toJson } from "./json.js";
import { addMs, nowIso, RUN_COLUMNS } from "./mapping.js";
/**
 * The run row, its checkpoint_before read from the (locked) thread, unless `$11` asks for the
 * busy check and the thread has a pending run: then nothing is inserted. With a claim (`$12`
 * the owner, `$13` the lease's end, `$14` the open segment, `$15` now) it is inserted claimed
 * when it is due and alone on its thread, as a first claim leaves it (epoch 1). `$16` its trace
 * context, `$17` its face.
 *
 * Only what the server does not know comes back (see `insertedRun`): whether it was claimed
 * (its epoch) and the thread's checkpoint.
 */
export const INSERT_RUN = prepared(`
  INSERT INTO runs
    (run_id, thread_id, agent_id, kind, status, created_at, updated_at, creation, metadata,
     metadata_digest, output, interrupts, resume, segments, start_after, checkpoint_before,
     principal, owner, lease_expires_at, lease_epoch, trace_context, face)
  SELECT $1, t.thread_id, $3, $4, 'pending', $5::timestamptz, $5::timestamptz, $6::json, $7::json,
         $8::text[], 'null'::json, '[]'::json, 'null'::json,
         CASE WHEN c.claimed THEN $14::json ELSE '[]'::json END, $9::timestamptz,
         t.checkpoint_id, $10,
         CASE WHEN c.claimed THEN $12::text END,
         CASE WHEN c.claimed THEN $13::timestamptz END,
         CASE WHEN c.claimed THEN 1 ELSE 0 END, $16::text, $17::text
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
 * it is hidden and its owner (SQL text: literals, or parameters after `$17`). `$16` the run's
 * trace context, `$17` its face.
 */
export function insertRunWithThread(thread: {
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
     principal, owner, lease_expires_at, lease_epoch, trace_context, face)
  SELECT $1, t.thread_id, $3, $4, 'pending', $5::timestamptz, $5::timestamptz, $6::json, $7::json,
         $8::text[], 'null'::json, '[]'::json, 'null'::json,
         CASE WHEN c.claimed THEN $13::json ELSE '[]'::json END, $9::timestamptz, NULL, $10,
         CASE WHEN c.claimed THEN $11::text END,
         CASE WHEN c.claimed THEN $12::timestamptz END,
         CASE WHEN c.claimed THEN 1 ELSE 0 END, $16::text, $17::text
  FROM thread t
  CROSS JOIN LATERAL (
    SELECT $11::text IS NOT NULL AND $9::timestamptz <= $14::timestamptz AS claimed
  ) c
  RETURNING lease_epoch`);
}

/** A stateless run with its hidden thread (see #insertWithHiddenThread). */
export const INSERT_RUN_WITH_THREAD = insertRunWithThread({
  metadata: "'{}'",
  digest: "'{}'",
  hidden: "true",
  principal: "$10",
});

/**
 * A stateful run with the visible thread it creates (see insertOnNewThread): `$18` the thread's
 * metadata, `$19` its digest, `$20` whether it is hidden, `$21` its owner.
 */
export const INSERT_RUN_WITH_NEW_THREAD = insertRunWithThread({
  metadata: "$18::json",
  digest: "$19::text[]",
  hidden: "$20::boolean",
  principal: "$21",
});

export const MARK_THREAD_BUSY = prepared(
  "UPDATE threads SET status = 'busy', updated_at = $2 WHERE thread_id = $1",
);
export const LOCK_THREAD = prepared("SELECT 1 FROM threads WHERE thread_id = $1 FOR NO KEY UPDATE");
/**
 * The queue check before every run (an agent's pending runs, up to its limit). `pending` is
 * written into the text, not bound: the statement is then prepared with a plan that reads the
 * pending runs' partial index whatever the agent, which a `status = $2` could not promise (its
 * generic plan would not know `pending` is rare).
 */
export const COUNT_PENDING_OF_AGENT = prepared(`SELECT count(*)::int AS n FROM (
  SELECT 1 FROM runs WHERE agent_id = $1 AND status = 'pending' LIMIT $2) limited`);

/** Only the agent and `pending`: the filter COUNT_PENDING_OF_AGENT serves. */
export function isQueueCount(
  filter: RunCountFilter,
): filter is { agent_id: string; status: "pending" } {
  return (
    filter.status === "pending" &&
    filter.agent_id !== undefined &&
    filter.kind === undefined &&
    filter.thread_id === undefined
  );
}

export const GET_RUN = prepared(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = $1`);
export const RUN_EXISTS = prepared("SELECT 1 FROM runs WHERE run_id = $1");
export const LOCK_THREAD_OF_RUN = prepared(`SELECT thread_id FROM threads
  WHERE thread_id = (SELECT thread_id FROM runs WHERE run_id = $1)
  FOR NO KEY UPDATE`);
export const LOCK_THREAD_OF_RUN_TO_DELETE = prepared(`SELECT thread_id FROM threads
  WHERE thread_id = (SELECT thread_id FROM runs WHERE run_id = $1)
  FOR UPDATE`);
export const SET_THREAD_STATUS = prepared(
  "UPDATE threads SET status = $2, updated_at = $3 WHERE thread_id = $1",
);
/** The pending check rides in the DELETE (see #finishDeletingThread). */
export const DELETE_THREAD_UNLESS_PENDING = prepared(`DELETE FROM threads WHERE thread_id = $1
  AND NOT EXISTS (SELECT 1 FROM runs WHERE thread_id = $1 AND status = 'pending')`);

/**
 * A new run's columns, `$1`–`$10` of INSERT_RUN and INSERT_RUN_WITH_THREAD (its trace context
 * and face, sent last, are `$16` and `$17` of both).
 */
export function runParams(run: NewRun, startAfter: string): unknown[] {
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
export function claimParams(claim: InsertClaim | undefined): unknown[] {
  return [
    claim?.owner ?? null,
    claim === undefined ? null : addMs(claim.now, claim.leaseMs),
    claim === undefined ? null : toJson([claim.segment]),
    claim?.now.toISOString() ?? null,
  ];
}

/** What an insert sends back: what the server could not know before. */
export interface InsertedRow {
  lease_epoch: number;
  checkpoint_before: string | null;
}

/**
 * The record of a run just inserted, from what was sent (`columns`, runParams' values) and what
 * came back: the row as RUN_COLUMNS would have read it, without reading it. Timestamps were sent
 * as ISO text with milliseconds, which timestamptz keeps exactly; JSON columns hold the text
 * sent, parsed here as pg would parse it.
 */
export function insertedRun(
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
    face: run.face ?? null,
  };
}

/** A new run's trace context and face: the last columns of every run insert, in that order. */
export function lastColumns(run: Pick<NewRun, "trace_context" | "face">): unknown[] {
  return [run.trace_context ?? null, run.face ?? null];
}
