import type Database from "better-sqlite3";
import {
  type IdleThreadStrategy,
  idleThreadCursor,
  noneRemoved,
  parseIdleThreadCursor,
  RETENTION_OPT_OUT,
  type RetentionBatch,
  type RetentionStore,
} from "../retention.js";
import type { RunFrame } from "../types.js";
import { type FramePage, readPage, storedTextBytes, toPages } from "./frame-pages.js";
import { nowIso } from "./mapping.js";
import {
  add,
  deleteRunsWithHiddenThreads,
  prepareRunDeletion,
  type Tally,
} from "./run-deletion.js";
import { SqliteRunExpiries } from "./run-expiries.js";

/** Runs a write through the storage's group commit (see group-commit.ts). */
export type SqliteWrite = <T>(work: () => T) => Promise<T>;

const FINISHED = "status IN ('success', 'error', 'timeout')";

/**
 * The retention batches on SQLite (see ../retention.ts). Each batch is one write in the group
 * commit, inside its own transaction; the statements it reads candidates with walk the partial
 * indexes of migration 005, so a batch costs its own rows, not the table's.
 */
export class SqliteRetention implements RetentionStore {
  readonly #db: Database.Database;
  readonly #write: SqliteWrite;
  #sweeping = false;
  readonly #expiries: SqliteRunExpiries;
  readonly #statements: ReturnType<typeof prepare>;
  readonly #deleteStatelessTx: Database.Transaction<
    (before: string, limit: number) => RetentionBatch
  >;
  readonly #compactTx: Database.Transaction<(before: string, limit: number) => RetentionBatch>;
  readonly #idleTx: Database.Transaction<
    (
      before: string,
      strategy: IdleThreadStrategy,
      limit: number,
      cursor: string | undefined,
    ) => RetentionBatch
  >;

  constructor(db: Database.Database, write: SqliteWrite) {
    this.#db = db;
    this.#write = write;
    this.#expiries = new SqliteRunExpiries(db, write);
    this.#statements = prepare(db);
    this.#deleteStatelessTx = db.transaction((before, limit) =>
      this.#deleteStateless(before, limit),
    );
    this.#compactTx = db.transaction((before, limit) => this.#compact(before, limit));
    this.#idleTx = db.transaction((before, strategy, limit, cursor) =>
      this.#idle(before, strategy, limit, cursor),
    );
  }

  deleteFinishedStatelessRuns(before: string, limit: number): Promise<RetentionBatch> {
    return this.#write(() => this.#deleteStatelessTx.immediate(before, limit));
  }

  compactFinishedRunFrames(before: string, limit: number): Promise<RetentionBatch> {
    return this.#write(() => this.#compactTx.immediate(before, limit));
  }

  sweepIdleThreads(
    before: string,
    strategy: IdleThreadStrategy,
    limit: number,
    cursor?: string,
  ): Promise<RetentionBatch> {
    return this.#write(() => this.#idleTx.immediate(before, strategy, limit, cursor));
  }

  async reclaimSpace(maxPages: number): Promise<number> {
    // Only a file made with incremental auto-vacuum (2) can give pages back; an older file keeps
    // its free pages and reuses them for new rows, so it stops growing all the same.
    if (this.#db.pragma("auto_vacuum", { simple: true }) !== 2) return 0;
    const pageSize = this.#db.pragma("page_size", { simple: true }) as number;
    return this.#write(() => {
      const free = () => this.#db.pragma("freelist_count", { simple: true }) as number;
      const before = free();
      if (before === 0) return 0;
      this.#db.pragma(`incremental_vacuum(${Math.max(1, Math.floor(maxPages))})`);
      return (before - free()) * pageSize;
    });
  }

  async exclusively(sweep: () => Promise<void>): Promise<boolean> {
    // One process owns a SQLite file (owner-lock.ts): only sweeps of this storage can overlap.
    if (this.#sweeping) return false;
    this.#sweeping = true;
    try {
      await sweep();
      return true;
    } finally {
      this.#sweeping = false;
    }
  }

  setRunExpiry(runId: string, expiresAt: string): Promise<void> {
    return this.#expiries.setRunExpiry(runId, expiresAt);
  }

  runExpiries(runIds: readonly string[]): Promise<Map<string, string>> {
    return this.#expiries.runExpiries(runIds);
  }

  deleteExpiredRuns(now: string, limit: number): Promise<RetentionBatch> {
    return this.#expiries.deleteExpiredRuns(now, limit);
  }

  #deleteStateless(before: string, limit: number): RetentionBatch {
    const s = this.#statements;
    return deleteRunsWithHiddenThreads(s, s.finishedStateless.all(before, limit));
  }

  #compact(before: string, limit: number): RetentionBatch {
    const s = this.#statements;
    const removed = noneRemoved();
    const runs = s.toCompact.all(before, limit);
    const now = nowIso();
    for (const run of runs) {
      // The last stored frame of a finished run is its final frame. When that one could not be
      // stored, a replay has only the frames before it to show what the run did: they stay.
      const lastPage = s.lastPage.get(run.run_id);
      const last = lastPage && lastFrameOf(lastPage);
      if (lastPage !== undefined && last !== undefined && last.mode === "final") {
        // What stays is one page holding the final frame alone.
        const [kept] = toPages(run.run_id, [last]);
        const all = s.framesOfRun.get(run.run_id)!;
        add(removed, "frames", {
          count: all.count - 1,
          bytes: all.bytes - storedTextBytes(kept!.data),
        });
        s.deletePagesBefore.run(run.run_id, last.seq);
        if (lastPage.frames > 1) s.rewritePage.run(kept!.frames, kept!.data, run.run_id, last.seq);
      }
      s.markCompacted.run(now, run.run_id);
    }
    return { handled: runs.length, removed };
  }

  #idle(
    before: string,
    strategy: IdleThreadStrategy,
    limit: number,
    cursor: string | undefined,
  ): RetentionBatch {
    const s = this.#statements;
    const removed = noneRemoved();
    const [afterAt, afterId] = cursor === undefined ? ["", ""] : parseIdleThreadCursor(cursor);
    const threads = s.idleCandidates.all({ before, limit, afterAt, afterId, ...OPT_OUT });
    for (const thread of threads) {
      if (thread.busy === 1 || thread.opted_out === 1) continue;
      if (strategy === "delete") {
        add(removed, "frames", s.framesOfThread.get(thread.thread_id)!);
        add(removed, "checkpoints", s.checkpointsOfThread.get(thread.thread_id)!);
        removed.runs += s.deleteRunsOfThread.run(thread.thread_id).changes;
        removed.threads += s.deleteThread.run(thread.thread_id).changes;
        continue;
      }
      if (thread.checkpoints <= 1) continue;
      const keep = thread.checkpoint_id ?? s.newestCheckpoint.get(thread.thread_id)?.checkpoint_id;
      if (keep === undefined) continue;
      add(removed, "checkpoints", s.checkpointsBesides.get(thread.thread_id, keep)!);
      s.deleteCheckpointsBesides.run(thread.thread_id, keep);
      // History now starts at the kept checkpoint: no parent that no longer exists.
      s.orphanCheckpoint.run(keep);
    }
    const last = threads.at(-1);
    return {
      handled: threads.length,
      removed,
      cursor: last && idleThreadCursor(last),
    };
  }
}

const OPT_OUT = {
  optOutKey: RETENTION_OPT_OUT.key,
  optOutValue: JSON.stringify(RETENTION_OPT_OUT.value),
};

/** The last frame of a page: its final frame when the run's log is complete. */
function lastFrameOf(page: FramePage): RunFrame | undefined {
  const frames: RunFrame[] = [];
  readPage(page, page.last_seq - 1, frames, 1);
  return frames[0];
}

function prepare(db: Database.Database) {
  const tally = (sql: string) => db.prepare<unknown[], Tally>(sql);
  return {
    finishedStateless: db.prepare<[string, number], { run_id: string; thread_id: string | null }>(
      `SELECT run_id, thread_id FROM runs INDEXED BY runs_finished_stateless
       WHERE kind = 'stateless' AND ${FINISHED} AND updated_at < ?
       ORDER BY updated_at, seq LIMIT ?`,
    ),
    ...prepareRunDeletion(db),
    toCompact: db.prepare<[string, number], { run_id: string }>(
      `SELECT run_id FROM runs INDEXED BY runs_frames_to_compact
       WHERE frames_compacted_at IS NULL AND ${FINISHED} AND updated_at < ?
       ORDER BY updated_at, seq LIMIT ?`,
    ),
    // Frames are stored in pages (frame-pages.ts): a page's `frames` is its frame count.
    lastPage: db.prepare<[string], FramePage>(
      `SELECT run_id, last_seq, frames, data FROM run_frames
       WHERE run_id = ? ORDER BY last_seq DESC LIMIT 1`,
    ),
    deletePagesBefore: db.prepare<[string, number]>(
      "DELETE FROM run_frames WHERE run_id = ? AND last_seq < ?",
    ),
    rewritePage: db.prepare<[number, string | Buffer, string, number]>(
      "UPDATE run_frames SET frames = ?, data = ? WHERE run_id = ? AND last_seq = ?",
    ),
    markCompacted: db.prepare<[string, string]>(
      "UPDATE runs SET frames_compacted_at = ? WHERE run_id = ?",
    ),
    framesOfThread: tally(
      `SELECT coalesce(sum(f.frames), 0) AS count, coalesce(sum(acp_page_text_bytes(f.data)), 0) AS bytes
       FROM runs r JOIN run_frames f ON f.run_id = r.run_id WHERE r.thread_id = ?`,
    ),
    checkpointsBesides: tally(
      `SELECT count(*) AS count,
              coalesce(sum(octet_length("values") + octet_length(messages)), 0) AS bytes
       FROM checkpoints WHERE thread_id = ? AND checkpoint_id <> ?`,
    ),
    // Up to @limit visible threads not updated since `before`, after the cursor, each with what
    // decides whether it is idle: a run updated since or pending, the opt-out, its checkpoints.
    idleCandidates: db.prepare<
      [Record<string, unknown>],
      {
        thread_id: string;
        updated_at: string;
        checkpoint_id: string | null;
        busy: number;
        opted_out: number;
        checkpoints: number;
      }
    >(
      `SELECT t.thread_id, t.updated_at, t.checkpoint_id,
         EXISTS (SELECT 1 FROM runs r
                 WHERE r.thread_id = t.thread_id
                   AND (r.status = 'pending' OR r.updated_at >= @before)) AS busy,
         EXISTS (SELECT 1 FROM thread_metadata m
                 WHERE m.thread_id = t.thread_id AND m.key = @optOutKey
                   AND m.value_json = @optOutValue) AS opted_out,
         (SELECT count(*) FROM checkpoints c WHERE c.thread_id = t.thread_id) AS checkpoints
       FROM threads t INDEXED BY threads_visible_by_updated
       WHERE t.hidden = 0 AND t.updated_at < @before
         AND (t.updated_at, t.thread_id) > (@afterAt, @afterId)
       ORDER BY t.updated_at, t.thread_id LIMIT @limit`,
    ),
    deleteRunsOfThread: db.prepare<[string]>("DELETE FROM runs WHERE thread_id = ?"),
    deleteThread: db.prepare<[string]>("DELETE FROM threads WHERE thread_id = ?"),
    newestCheckpoint: db.prepare<[string], { checkpoint_id: string }>(
      "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? ORDER BY seq DESC LIMIT 1",
    ),
    deleteCheckpointsBesides: db.prepare<[string, string]>(
      "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_id <> ?",
    ),
    orphanCheckpoint: db.prepare<[string]>(
      "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE checkpoint_id = ?",
    ),
  };
}
