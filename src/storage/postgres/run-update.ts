import { claimLost, conflict, notFound } from "../../util/errors.js";
import type { Fence, RunFrame, RunPatch, RunRecord } from "../types.js";
import { prepared, type Queryable } from "./connection.js";
import { duplicateMessage } from "./frames.js";
import { toJson } from "./json.js";
import {
  isoTimestamp,
  nowIso,
  nullableIso,
  RUN_COLUMNS,
  type RunRow,
  rethrowInvalid,
  toRun,
} from "./mapping.js";

/** How each patchable field is written: its SQL cast and how its value is serialized. */
const PATCH_COLUMNS: Record<keyof RunPatch, [cast: string, encode: (value: never) => unknown]> = {
  status: ["text", (v: string) => v],
  output: ["json", toJson],
  interrupts: ["json", toJson],
  resume: ["json", toJson],
  segments: ["json", toJson],
  start_after: ["timestamptz", (v: string) => isoTimestamp(v, "start_after")],
  checkpoint_before: ["text", (v: string | null) => v],
  owner: ["text", (v: string | null) => v],
  lease_expires_at: ["timestamptz", (v: string | null) => nullableIso(v, "lease_expires_at")],
  cancel_requested: ["text", (v: string | null) => v],
};

const RUN_EXISTS = prepared("SELECT 1 FROM runs WHERE run_id = $1");

/** The columns of RUN_COLUMNS, by name. */
const RUN_COLUMN_NAMES = RUN_COLUMNS.split(",").map((c) => c.trim()) as (keyof RunRow)[];

/**
 * A run's columns no statement changes once it is inserted: a caller that has them (from the
 * insert) passes them, and they are not read back (see `AlsoWrite.known`).
 */
export type KnownRun = Pick<
  RunRecord,
  "run_id" | "agent_id" | "kind" | "created_at" | "creation" | "metadata" | "trace_context" | "face"
>;
const KNOWN_COLUMNS = new Set<string>([
  "run_id",
  "agent_id",
  "kind",
  "created_at",
  "creation",
  "metadata",
  "trace_context",
  "face",
]);

/** The statement text of each shape of update (see `runUpdate`), built once. */
const STATEMENTS = new Map<string, string>();

/** What a run's end writes with its UPDATE, in the same statement (see `updateRunRow`). */
export interface AlsoWrite {
  /**
   * Frames of this run, under the fence (required with them): inserted only when the fenced
   * UPDATE holds the run, and last_seq moves up in that UPDATE.
   */
  frames?: RunFrame[];
  /** The run leaves its thread (thread_id NULL), as the thread's deletion would set it. */
  detachThread?: boolean;
  /**
   * The run's thread is deleted in the same statement, unless another run on it is pending
   * (see `endRunDeletingThread`, which sets this). Implies `detachThread`.
   */
  deleteThread?: boolean;
  /**
   * The run's unchanging columns, when the caller has them: the UPDATE then reads back only
   * what neither they nor the patch tell (the row's other columns).
   */
  known?: KnownRun;
}

/**
 * One UPDATE of the given fields on `db`. A fence rides in its WHERE: a claim committed
 * meanwhile makes the UPDATE wait on the row and re-check, so it then matches nothing.
 *
 * A run's end folds its last frames into that UPDATE (`also.frames`): one statement and one
 * round trip where an append and an update took two, and one new row version instead of two.
 * The frames' INSERT checks the fence on the statement's snapshot, the UPDATE on the locked row;
 * when the UPDATE matches nothing the call throws, and the caller's transaction (or savepoint)
 * takes the frames back, as it took back a refused append before.
 */
export async function updateRunRow(
  db: Queryable,
  runId: string,
  patch: RunPatch,
  fence?: Fence,
  also: AlsoWrite = {},
): Promise<RunRecord> {
  return (await runUpdate(db, runId, patch, fence, also)).run;
}

/**
 * A run's end that deletes its thread, as one statement: the frames and the outcome as
 * `updateRunRow` writes them, the run leaving the thread, and the thread's DELETE unless
 * another of its runs is pending. `threadDeleted` false means refused: the caller throws, and
 * its transaction takes the rest back.
 *
 * The caller holds the thread's lock from an earlier statement of the transaction, so this
 * statement's snapshot sees every run committed on the thread before that lock: the pending
 * check is the one a DELETE after the UPDATE made, except that it cannot see this statement's
 * own UPDATE and so leaves the run itself out (it is not pending once it ends). The run is
 * found on its thread through that snapshot too, before the UPDATE detaches it.
 */
export function endRunDeletingThread(
  db: Queryable,
  runId: string,
  patch: RunPatch,
  fence: Fence | undefined,
  frames: RunFrame[] | undefined,
  known?: KnownRun,
): Promise<{ run: RunRecord; threadDeleted: boolean }> {
  return runUpdate(db, runId, patch, fence, { frames, deleteThread: true, known });
}

async function runUpdate(
  db: Queryable,
  runId: string,
  patch: RunPatch,
  fence: Fence | undefined,
  also: AlsoWrite,
): Promise<{ run: RunRecord; threadDeleted: boolean }> {
  const updatedAt = nowIso();
  const params: unknown[] = [runId, updatedAt];
  /** What the row's patched columns hold once written, as a read of them would give them. */
  const written: Partial<Record<keyof RunRow, unknown>> = { updated_at: updatedAt };
  const patched: string[] = [];
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined || !Object.hasOwn(PATCH_COLUMNS, key)) continue;
    const [cast, encode] = PATCH_COLUMNS[key as keyof RunPatch];
    const encoded = encode(value as never);
    params.push(encoded);
    patched.push(`${key}:${cast}`);
    // JSON columns are the patch's own values (the output can be megabytes: it is not parsed
    // again), timestamps the ISO text sent, which timestamptz keeps exactly.
    written[key as keyof RunRow] = cast === "json" ? value : encoded;
  }
  const detach = also.detachThread === true || also.deleteThread === true;
  if (detach) written.thread_id = null;
  const known = also.known?.run_id === runId ? also.known : undefined;
  if (fence !== undefined) params.push(fence.owner, fence.epoch);
  const frames = also.frames ?? [];
  if (frames.length > 0) {
    if (fence === undefined || frames.some((f) => f.run_id !== runId)) {
      throw conflict("frames folded into a run's update are its own, under a fence");
    }
    // One JSON text rather than three arrays: pg escapes an array's every element in
    // JavaScript, where JSON.stringify does it natively (frame data is JSON, full of quotes).
    params.push(
      JSON.stringify(frames.map((f) => ({ seq: f.seq, mode: f.mode, data: f.data }))),
      Math.max(...frames.map((f) => f.seq)),
    );
  }
  const shape = [
    patched.join(","),
    fence !== undefined,
    frames.length > 0,
    detach,
    also.deleteThread === true,
    known !== undefined,
  ].join("|");
  let sql = STATEMENTS.get(shape);
  if (sql === undefined) {
    sql = prepared(
      updateStatement(
        patched,
        fence !== undefined,
        frames.length > 0,
        detach,
        also,
        written,
        known,
      ),
    );
    STATEMENTS.set(shape, sql);
  }
  let result: Awaited<ReturnType<Queryable["query"]>>;
  try {
    result = await db.query<Partial<RunRow> & { thread_deleted?: number }>(sql, params);
  } catch (err) {
    if (frames.length > 0 && (err as { code?: string }).code === "23505") {
      throw conflict(duplicateMessage(err));
    }
    rethrowInvalid(err, frames.length > 0 ? "run end" : "run patch");
  }
  const row = result.rows[0] as (Partial<RunRow> & { thread_deleted?: number }) | undefined;
  if (row === undefined) {
    if (fence !== undefined) {
      const exists = await db.query(RUN_EXISTS, [runId]);
      if (exists.rowCount !== 0) throw claimLost(runId);
    }
    throw notFound("run", runId);
  }
  const run = toRun({ ...known, ...row, ...written } as RunRow);
  return { run, threadDeleted: row.thread_deleted === 1 };
}

/**
 * The UPDATE of one shape: `patched` the patched columns (`name:cast`, `$3` on), then the
 * fence's two parameters, then the frames' two (as JSON, and the highest seq). It reads back only the columns that neither
 * the patch (`written`) nor the caller (`known`) tell.
 */
function updateStatement(
  patched: string[],
  fenced: boolean,
  withFrames: boolean,
  detach: boolean,
  also: AlsoWrite,
  written: Partial<Record<keyof RunRow, unknown>>,
  known: KnownRun | undefined,
): string {
  const sets = ["updated_at = $2"];
  let n = 2;
  for (const column of patched) {
    const [key, cast] = column.split(":");
    sets.push(`${key} = $${++n}::${cast}`);
  }
  if (detach) sets.push("thread_id = NULL");
  let where = "run_id = $1";
  if (fenced) {
    where += ` AND owner = $${n + 1} AND lease_epoch = $${n + 2}`;
    n += 2;
  }
  const ctes: string[] = [];
  if (withFrames) {
    n += 2;
    ctes.push(`inserted AS (
      INSERT INTO run_frames (run_id, seq, mode, data)
      SELECT $1, f.seq, f.mode, f.data
      FROM json_to_recordset($${n - 1}::json) AS f(seq integer, mode text, data text)
      WHERE EXISTS (SELECT 1 FROM runs WHERE ${where}))`);
    sets.push(`last_seq = GREATEST(last_seq, $${n}::integer)`);
  }
  // The output is never read back: the patch's, or NULL when the caller has it (the known
  // columns stand for the rest of the row) — as before, an update that did not write it reads it.
  const returned = RUN_COLUMN_NAMES.filter(
    (c) =>
      !Object.hasOwn(written, c) &&
      (known === undefined || !KNOWN_COLUMNS.has(c)) &&
      !(c === "output" && Object.hasOwn(written, "output")),
  );
  if (returned.length === 0) returned.push("lease_epoch");
  let returning = returned.join(", ");
  if (also.deleteThread === true) {
    // Cascades to checkpoints; the thread's other runs keep existing with thread_id NULL.
    ctes.push(`deleted AS (
      DELETE FROM threads
      WHERE thread_id = (SELECT thread_id FROM runs WHERE run_id = $1)
        AND NOT EXISTS (SELECT 1 FROM runs o
          WHERE o.thread_id = threads.thread_id AND o.status = 'pending' AND o.run_id <> $1)
      RETURNING thread_id)`);
    returning += ", (SELECT count(*) FROM deleted)::int AS thread_deleted";
  }
  const withClause = ctes.length === 0 ? "" : `WITH ${ctes.join(", ")} `;
  return `${withClause}UPDATE runs SET ${sets.join(", ")} WHERE ${where} RETURNING ${returning}`;
}
