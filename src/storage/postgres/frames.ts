import { claimLost, conflict, notFound } from "../../util/errors.js";
import type { Fence, RunFrame } from "../types.js";
import { type Database, PIPELINED, pgCode, prepared, type Queryable } from "./connection.js";
import { rethrowInvalid, toFrame } from "./mapping.js";

/**
 * One statement per call: every frame goes in through `unnest` of four arrays and each run's
 * last_seq moves up in the same statement, so a batch is one round trip and all-or-nothing.
 */
const APPEND_SQL = prepared(`
  WITH inserted AS (
    INSERT INTO run_frames (run_id, seq, mode, data)
    SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[])
  )
  UPDATE runs SET last_seq = GREATEST(runs.last_seq, top.seq)
  FROM unnest($5::text[], $6::integer[]) AS top(run_id, seq)
  WHERE runs.run_id = top.run_id`);

/**
 * APPEND_SQL for one run under a claim: the insert happens only while the run is held by the
 * fence's owner and epoch, and the last_seq bump re-checks it on the locked row (a claim that
 * committed meanwhile makes it match nothing). No row updated means refused: the caller throws,
 * and its savepoint takes back any frames inserted.
 */
const HOLDS_CLAIM = `lease_epoch = $8 AND (owner = $7 OR (owner IS NULL AND status <> 'pending'))`;
const FENCED_APPEND_SQL = prepared(`
  WITH inserted AS (
    INSERT INTO run_frames (run_id, seq, mode, data)
    SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[])
    WHERE EXISTS (SELECT 1 FROM runs WHERE run_id = $5 AND ${HOLDS_CLAIM})
  )
  UPDATE runs SET last_seq = GREATEST(runs.last_seq, $6::integer)
  WHERE run_id = $5 AND ${HOLDS_CLAIM}`);

const RUN_EXISTS = prepared("SELECT 1 FROM runs WHERE run_id = $1");
const READ_SQL =
  prepared(`SELECT run_id, seq, mode, data FROM run_frames WHERE run_id = $1 AND seq > $2
  ORDER BY seq LIMIT $3`);

/** The per-run frame log behind stream, wait and Last-Event-ID replay. */
export class FrameRepository {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async append(frames: RunFrame[], fence?: Fence): Promise<void> {
    if (frames.length === 0) return;
    await this.#db.write((db) => this.appendIn(db, frames, fence), PIPELINED);
  }

  /** `append` inside the caller's transaction (a run's end: frames and outcome in one commit). */
  async appendIn(db: Queryable, frames: RunFrame[], fence?: Fence): Promise<void> {
    if (frames.length === 0) return;
    if (fence !== undefined) return this.#appendFenced(db, frames, fence);
    const lastSeq = new Map<string, number>();
    for (const frame of frames) {
      lastSeq.set(frame.run_id, Math.max(lastSeq.get(frame.run_id) ?? 0, frame.seq));
    }
    try {
      await db.query(APPEND_SQL, [
        frames.map((f) => f.run_id),
        frames.map((f) => f.seq),
        frames.map((f) => f.mode),
        frames.map((f) => f.data),
        [...lastSeq.keys()],
        [...lastSeq.values()],
      ]);
    } catch (err) {
      const code = pgCode(err);
      if (code === "23503") throw notFound("run", missingRunId(err, frames));
      if (code === "23505") throw conflict(duplicateMessage(err));
      rethrowInvalid(err, "frame");
    }
  }

  async #appendFenced(db: Queryable, frames: RunFrame[], fence: Fence): Promise<void> {
    const runId = frames[0]!.run_id;
    if (frames.some((frame) => frame.run_id !== runId)) {
      throw conflict("a fenced append holds frames of one run only");
    }
    const lastSeq = Math.max(...frames.map((f) => f.seq));
    let updated: number | null;
    try {
      const result = await db.query(FENCED_APPEND_SQL, [
        frames.map((f) => f.run_id),
        frames.map((f) => f.seq),
        frames.map((f) => f.mode),
        frames.map((f) => f.data),
        runId,
        lastSeq,
        fence.owner,
        fence.epoch,
      ]);
      updated = result.rowCount;
    } catch (err) {
      const code = pgCode(err);
      if (code === "23505") throw conflict(duplicateMessage(err));
      rethrowInvalid(err, "frame");
    }
    if (updated !== 0) return;
    const exists = await db.query(RUN_EXISTS, [runId]);
    throw exists.rowCount === 0 ? notFound("run", runId) : claimLost(runId);
  }

  async read(runId: string, afterSeq: number, limit?: number): Promise<RunFrame[]> {
    // LIMIT NULL is PostgreSQL's "no limit", so one statement serves both forms.
    const result = await this.#db.query<RunFrame>(READ_SQL, [runId, afterSeq, limit ?? null]);
    return result.rows.map(toFrame);
  }
}

/** pg puts "Key (run_id)=(…) is not present in table" in `detail`. */
function missingRunId(err: unknown, frames: RunFrame[]): string {
  const detail = (err as { detail?: string }).detail ?? "";
  return /\(run_id\)=\((.*)\) is not present/.exec(detail)?.[1] ?? frames[0]?.run_id ?? "";
}

export function duplicateMessage(err: unknown): string {
  const detail = (err as { detail?: string }).detail ?? "";
  const match = /\(run_id, seq\)=\((.*), (\d+)\) already exists/.exec(detail);
  return match === null
    ? "a frame in this batch already exists (or appears twice)"
    : `frame ${match[2]} of run ${match[1]} already exists`;
}
