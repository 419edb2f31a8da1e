import { noneRemoved, type RetentionBatch, type RetentionRemoved } from "../retention.js";
import type { Queryable } from "./connection.js";

/** How many rows of a kind a batch removes, and their bytes. */
export interface Tally {
  count: number;
  bytes: number;
}

/**
 * Deletes runs a retention rule locked (FOR UPDATE) in this transaction, with their frames,
 * webhook deliveries and expiries (ON DELETE CASCADE) and their own hidden threads with their
 * checkpoints; never a thread a pending run still needs. Counts what goes.
 */
export async function deleteRunsWithHiddenThreads(
  db: Queryable,
  runs: ReadonlyArray<{ run_id: string; thread_id: string | null }>,
): Promise<RetentionBatch> {
  const removed = noneRemoved();
  const runIds = runs.map((r) => r.run_id);
  if (runIds.length === 0) return { handled: 0, removed };
  const threadIds = runs.flatMap((r) => (r.thread_id === null ? [] : [r.thread_id]));
  const threads = await db.query<{ thread_id: string }>(
    `SELECT thread_id FROM threads t
     WHERE thread_id = ANY($1::text[]) AND hidden
       AND NOT EXISTS (SELECT 1 FROM runs r
                       WHERE r.thread_id = t.thread_id AND r.status = 'pending')
     FOR UPDATE SKIP LOCKED`,
    [threadIds],
  );
  const hidden = threads.rows.map((t) => t.thread_id);
  add(removed, "frames", await framesOfRuns(db, runIds));
  add(removed, "checkpoints", await checkpointsOf(db, hidden));
  const deletedRuns = await db.query("DELETE FROM runs WHERE run_id = ANY($1::text[])", [runIds]);
  removed.runs = deletedRuns.rowCount ?? 0;
  const deletedThreads = await db.query("DELETE FROM threads WHERE thread_id = ANY($1::text[])", [
    hidden,
  ]);
  removed.threads = deletedThreads.rowCount ?? 0;
  return { handled: runIds.length, removed };
}

export async function framesOfRuns(db: Queryable, runIds: string[]): Promise<Tally> {
  const result = await db.query<Tally>(
    `SELECT count(*)::int AS count, coalesce(sum(octet_length(data)), 0)::bigint AS bytes
     FROM run_frames WHERE run_id = ANY($1::text[])`,
    [runIds],
  );
  return result.rows[0]!;
}

export async function checkpointsOf(db: Queryable, threadIds: string[]): Promise<Tally> {
  if (threadIds.length === 0) return { count: 0, bytes: 0 };
  const result = await db.query<Tally>(
    `SELECT count(*)::int AS count,
            coalesce(sum(octet_length("values"::text) + octet_length(messages::text)), 0)::bigint
              AS bytes
     FROM checkpoints WHERE thread_id = ANY($1::text[])`,
    [threadIds],
  );
  return result.rows[0]!;
}

export function add(removed: RetentionRemoved, kind: "frames" | "checkpoints", tally: Tally): void {
  removed[kind] += tally.count;
  removed.bytes += tally.bytes;
}
