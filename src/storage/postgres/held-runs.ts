import { conflict } from "../../util/errors.js";
import { finishedHeldRun } from "../held-inserts.js";
import type { RunFrame, RunPatch, RunRecord } from "../types.js";
import { type Database, PIPELINED, pgCode, prepared } from "./connection.js";
import { duplicateMessage } from "./frames.js";
import { entryDigests, toJson } from "./json.js";
import { isoTimestamp, nullableIso, rethrowInvalid } from "./mapping.js";

/**
 * A held run written once, in its final state (see `Storage.insertRunHeld`): its row, already
 * holding its output and the last seq of its frames, and its frames, in one statement. Its
 * hidden thread is never written (thread_id NULL, as the thread's deletion leaves it). The
 * frames' foreign key is checked at the statement's end, where the row of its CTE is seen.
 */
const INSERT_FINISHED_RUN = prepared(`
  WITH run AS (
    INSERT INTO runs
      (run_id, thread_id, agent_id, kind, status, created_at, updated_at, creation, metadata,
       metadata_digest, output, interrupts, resume, segments, start_after, checkpoint_before,
       principal, owner, lease_expires_at, lease_epoch, cancel_requested, last_seq, trace_context,
       face)
    VALUES ($1, NULL, $2, $3, $4, $5::timestamptz, $6::timestamptz, $7::json, $8::json, $9::text[],
            $10::json, $11::json, $12::json, $13::json, $14::timestamptz, $15, $16, $17,
            $18::timestamptz, $19::integer, $20, $21::integer, $22, $24)
    RETURNING run_id
  )
  INSERT INTO run_frames (run_id, seq, mode, data)
  SELECT run.run_id, f.seq, f.mode, f.data
  FROM run CROSS JOIN json_to_recordset($23::json) AS f(seq integer, mode text, data text)`);

/**
 * Writes a held run once, as its end left it (`patch` applied, `frames` stored with it): one
 * one-step write, which a group of such writes sends without savepoints. Resolves with the run
 * as `finishRun` returns it.
 */
export async function insertFinishedRun(
  db: Database,
  record: RunRecord,
  patch: RunPatch,
  frames: RunFrame[],
): Promise<RunRecord> {
  const run = finishedHeldRun(record, patch, frames);
  const params = [
    run.run_id,
    run.agent_id,
    run.kind,
    run.status,
    run.created_at,
    run.updated_at,
    toJson(run.creation),
    toJson(run.metadata),
    entryDigests(run.metadata),
    toJson(run.output),
    toJson(run.interrupts),
    toJson(run.resume),
    toJson(run.segments),
    isoTimestamp(run.start_after, "start_after"),
    run.checkpoint_before,
    run.principal,
    run.owner,
    nullableIso(run.lease_expires_at, "lease_expires_at"),
    run.lease_epoch,
    run.cancel_requested,
    run.last_seq,
    run.trace_context,
    // One JSON text rather than arrays (see run-update.ts).
    JSON.stringify(frames.map((f) => ({ seq: f.seq, mode: f.mode, data: f.data }))),
    run.face,
  ];
  try {
    await db.write((q) => q.query(INSERT_FINISHED_RUN, params), PIPELINED);
  } catch (err) {
    if (pgCode(err) === "23505") {
      const detail = (err as { detail?: string }).detail ?? "";
      throw conflict(
        detail.includes("(run_id, seq)")
          ? duplicateMessage(err)
          : `run ${run.run_id} already exists`,
      );
    }
    rethrowInvalid(err, "run end");
  }
  return run;
}
