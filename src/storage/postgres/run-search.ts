/** Runs read by filters: search, counts, a thread's pending runs. */
import type { RunCountFilter, RunRecord, RunSearch } from "../types.js";
import type { Queryable } from "./connection.js";
import { assertObject, entryDigests } from "./json.js";
import { isoTimestamp, RUN_COLUMNS, type RunRow, toRun } from "./mapping.js";

export async function searchRuns(db: Queryable, search: RunSearch): Promise<RunRecord[]> {
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
  const result = await db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs ${filter} ORDER BY ${order}
     LIMIT $${params.length - 1} OFFSET $${params.length}`,
    params,
  );
  return result.rows.map(toRun);
}

export async function countSearchRuns(db: Queryable, search: RunSearch): Promise<number> {
  const { where, params } = searchFilter(search);
  const filter = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
  const result = await db.query<{ n: number }>(
    `SELECT count(*)::integer AS n FROM runs ${filter}`,
    params,
  );
  return result.rows[0]?.n ?? 0;
}

/** How many runs match the equality filters, counting at most `bound`. */
export async function countRuns(
  db: Queryable,
  filter: RunCountFilter,
  bound: number,
): Promise<number> {
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
  const result = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT 1 FROM runs ${clause} LIMIT $${params.length}) limited`,
    params,
  );
  return result.rows[0]?.n ?? 0;
}

export async function pendingRunsOfThread(db: Queryable, threadId: string): Promise<RunRecord[]> {
  const result = await db.query<RunRow>(
    `SELECT ${RUN_COLUMNS} FROM runs WHERE thread_id = $1 AND status = 'pending'
     ORDER BY created_at, seq`,
    [threadId],
  );
  return result.rows.map(toRun);
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
