import type Database from "better-sqlite3";
import { noneRemoved, type RetentionBatch, type RetentionRemoved } from "../retention.js";

/** How many rows of a kind a batch removes, and their bytes. */
export interface Tally {
  count: number;
  bytes: number;
}

/** The statements that delete a run with its own hidden thread, and count what goes. */
export function prepareRunDeletion(db: Database.Database) {
  const tally = (sql: string) => db.prepare<unknown[], Tally>(sql);
  return {
    deleteRun: db.prepare<[string]>("DELETE FROM runs WHERE run_id = ?"),
    deleteHiddenThread: db.prepare<[{ id: string }]>(
      `DELETE FROM threads WHERE thread_id = @id AND hidden = 1 AND NOT EXISTS (
         SELECT 1 FROM runs WHERE thread_id = @id AND status = 'pending')`,
    ),
    framesOfRun: tally(
      `SELECT coalesce(sum(frames), 0) AS count, coalesce(sum(acp_page_text_bytes(data)), 0) AS bytes
       FROM run_frames WHERE run_id = ?`,
    ),
    checkpointsOfThread: tally(
      `SELECT count(*) AS count,
              coalesce(sum(octet_length("values") + octet_length(messages)), 0) AS bytes
       FROM checkpoints WHERE thread_id = ?`,
    ),
  };
}

/**
 * Deletes the runs a retention rule chose, inside its transaction: each with its frames,
 * webhook deliveries, run metadata and expiry (ON DELETE CASCADE), and its own hidden thread
 * with its checkpoints, never a thread a pending run still needs. Counts what goes.
 */
export function deleteRunsWithHiddenThreads(
  s: ReturnType<typeof prepareRunDeletion>,
  runs: ReadonlyArray<{ run_id: string; thread_id: string | null }>,
): RetentionBatch {
  const removed = noneRemoved();
  for (const run of runs) {
    add(removed, "frames", s.framesOfRun.get(run.run_id)!);
    removed.runs += s.deleteRun.run(run.run_id).changes;
    if (run.thread_id === null) continue;
    const checkpoints = s.checkpointsOfThread.get(run.thread_id)!;
    if (s.deleteHiddenThread.run({ id: run.thread_id }).changes === 1) {
      removed.threads += 1;
      add(removed, "checkpoints", checkpoints);
    }
  }
  return { handled: runs.length, removed };
}

export function add(removed: RetentionRemoved, kind: "frames" | "checkpoints", tally: Tally): void {
  removed[kind] += tally.count;
  removed.bytes += tally.bytes;
}
