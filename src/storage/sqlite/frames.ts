import type Database from "better-sqlite3";
import { claimLost, conflict, notFound } from "../../util/errors.js";
import type { Fence, RunFrame } from "../types.js";
import { type FramePage, readPage, toPages } from "./frame-pages.js";
import { rethrowCheck } from "./mapping.js";

/**
 * The per-run frame log behind stream, wait and Last-Event-ID replay, stored in pages of
 * consecutive frames (frame-pages.ts).
 *
 * A run's frames are appended in ascending seq: each append's frames must come after the last
 * one stored for their run (`runs.last_seq`), so the pages of a run never overlap and a seq is
 * never stored twice. The engine numbers a run's frames as it produces them and stores them in
 * that order.
 */
export class FrameRepository {
  readonly #insert: Database.Statement<[string, number, number, string | Buffer]>;
  readonly #lastSeq: Database.Statement<[string], { last_seq: number }>;
  readonly #bumpLastSeq: Database.Statement<[number, string]>;
  readonly #pages: Database.Statement<[string, number], FramePage>;
  readonly #lastSeqUnderFence: Database.Statement<
    [number, string, string],
    { last_seq: number; held: 0 | 1 }
  >;
  readonly #appendTx: Database.Transaction<(frames: RunFrame[], fence: Fence | undefined) => void>;

  constructor(db: Database.Database) {
    this.#insert = db.prepare(
      "INSERT INTO run_frames (run_id, last_seq, frames, data) VALUES (?, ?, ?, ?)",
    );
    this.#lastSeq = db.prepare("SELECT last_seq FROM runs WHERE run_id = ?");
    this.#bumpLastSeq = db.prepare("UPDATE runs SET last_seq = ? WHERE run_id = ?");
    // The page holding afterSeq + 1 is the first whose last seq is above afterSeq.
    this.#pages = db.prepare(
      "SELECT run_id, last_seq, frames, data FROM run_frames WHERE run_id = ? AND last_seq > ? ORDER BY last_seq",
    );
    // The fence's check and the run's last seq in one read.
    this.#lastSeqUnderFence = db.prepare(
      `SELECT last_seq, (lease_epoch = ? AND (owner = ? OR (owner IS NULL AND status <> 'pending')))
         AS held FROM runs WHERE run_id = ?`,
    );
    this.#appendTx = db.transaction((frames, fence) => {
      if (fence === undefined) {
        this.#append(frames);
        return;
      }
      const runId = this.#fencedRun(frames);
      const last = this.#insertFenced(runId, frames, fence);
      this.#bumpLastSeq.run(last, runId);
    });
  }

  /** One transaction per call: many small frames cost one commit, not one each. */
  append(frames: RunFrame[], fence?: Fence): void {
    if (frames.length > 0) this.#appendTx.immediate(frames, fence);
  }

  read(runId: string, afterSeq: number, limit?: number): RunFrame[] {
    const out: RunFrame[] = [];
    const max = limit ?? Number.POSITIVE_INFINITY;
    if (max <= 0) return out;
    // Page by page, so that a short read of a long log decodes only the pages it returns.
    for (const page of this.#pages.iterate(runId, afterSeq)) {
      readPage(page, afterSeq, out, max);
      if (out.length >= max) break;
    }
    return out;
  }

  /**
   * Inside the caller's transaction (a run's end): one run's frames under its fence, as `append`
   * stores them, except that the run's new last seq is returned instead of written, for the
   * caller's own UPDATE of the run to set (one write of the row, not two).
   */
  appendLeavingLastSeq(frames: RunFrame[], fence: Fence): number {
    return this.#insertFenced(this.#fencedRun(frames), frames, fence);
  }

  /**
   * Inside a transaction: the first frames of a run whose row was just written with their last
   * seq already (a run written once, held-runs.ts). Returns their last seq.
   */
  appendToNewRun(runId: string, frames: RunFrame[]): number {
    return this.#insertPages(runId, [...frames], 0);
  }

  /** Inside a transaction: the call's frames, run by run, after each run's last stored frame. */
  #append(frames: RunFrame[]): void {
    for (const [runId, ofRun] of byRun(frames)) {
      const last = this.#lastSeq.get(runId);
      if (last === undefined) throw notFound("run", runId);
      this.#bumpLastSeq.run(this.#insertPages(runId, ofRun, last.last_seq), runId);
    }
  }

  /**
   * Inside a transaction, so no claim can move between the check and the insert: the frames of
   * one run, if the fence still holds it. Returns their last seq.
   */
  #insertFenced(runId: string, frames: RunFrame[], fence: Fence): number {
    const last = this.#lastSeqUnderFence.get(fence.epoch, fence.owner, runId);
    if (last === undefined) throw notFound("run", runId);
    if (last.held !== 1) throw claimLost(runId);
    return this.#insertPages(runId, [...frames], last.last_seq);
  }

  /** The run of a fenced append, which holds frames of one run only. */
  #fencedRun(frames: RunFrame[]): string {
    const runId = frames[0]!.run_id;
    if (frames.some((frame) => frame.run_id !== runId)) {
      throw conflict("a fenced append holds frames of one run only");
    }
    return runId;
  }

  /**
   * `ofRun` (sorted here) stored after `lastSeq`, the run's last stored frame. Returns the new
   * last seq.
   */
  #insertPages(runId: string, ofRun: RunFrame[], lastSeq: number): number {
    ofRun.sort((a, b) => a.seq - b.seq);
    let previous = lastSeq;
    for (const frame of ofRun) {
      if (frame.seq <= lastSeq) {
        throw conflict(
          `frame ${frame.seq} of run ${runId} is not after the run's last stored frame (${lastSeq})`,
        );
      }
      if (frame.seq === previous) {
        throw conflict(`frame ${frame.seq} of run ${runId} appears twice in one append`);
      }
      previous = frame.seq;
    }
    for (const page of toPages(runId, ofRun)) {
      try {
        this.#insert.run(page.run_id, page.last_seq, page.frames, page.data);
      } catch (err) {
        rethrowCheck(err, "frame");
      }
    }
    return previous;
  }
}

/** The frames of each run, in the order the runs first appear (a copy: the caller's stays). */
function byRun(frames: readonly RunFrame[]): Map<string, RunFrame[]> {
  const runs = new Map<string, RunFrame[]>();
  for (const frame of frames) {
    const ofRun = runs.get(frame.run_id);
    if (ofRun === undefined) runs.set(frame.run_id, [frame]);
    else ofRun.push(frame);
  }
  return runs;
}
