import type { RunCountFilter, RunRecord, RunSearch } from "../types.js";
import { assertObject } from "./json.js";
import { isoTimestamp, type RunRow } from "./mapping.js";
import type { MetadataIndex } from "./metadata-index.js";
import type { StatementCache } from "./statements.js";

/** Runs read by filters: searches and bounded counts (a statement cached per filter shape). */
export class RunSearches {
  readonly #cache: StatementCache;
  readonly #metadata: MetadataIndex;
  readonly #toRun: (row: RunRow) => RunRecord;

  constructor(cache: StatementCache, metadata: MetadataIndex, toRun: (row: RunRow) => RunRecord) {
    this.#cache = cache;
    this.#metadata = metadata;
    this.#toRun = toRun;
  }

  search(search: RunSearch): RunRecord[] {
    const filter = this.#filter(search, search.limit + search.offset);
    if (filter === null) return [];
    const { where, params } = filter;
    let order = "created_at DESC, seq DESC";
    if (search.order === "updated") {
      order = "updated_at DESC, run_id DESC";
      if (search.after !== undefined) {
        where.push("(updated_at < ? OR (updated_at = ? AND run_id < ?))");
        const at = isoTimestamp(search.after.updated_at, "after.updated_at");
        params.push(at, at, search.after.run_id);
      }
    }
    const clause = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
    const sql = `SELECT * FROM runs ${clause} ORDER BY ${order} LIMIT ? OFFSET ?`;
    params.push(search.limit, search.offset);
    return (this.#cache.get(sql).all(...params) as RunRow[]).map(this.#toRun);
  }

  countSearch(search: RunSearch): number {
    const filter = this.#filter(search, search.limit + search.offset);
    if (filter === null) return 0;
    const clause = filter.where.length === 0 ? "" : `WHERE ${filter.where.join(" AND ")}`;
    const row = this.#cache.get(`SELECT count(*) AS n FROM runs ${clause}`).get(...filter.params);
    return (row as { n: number }).n;
  }

  /** The conditions of a search's filters; null when they match nothing. */
  #filter(search: RunSearch, wanted: number): { where: string[]; params: unknown[] } | null {
    const where: string[] = [];
    const params: unknown[] = [];
    for (const field of ["agent_id", "status", "kind", "thread_id", "principal"] as const) {
      const value = search[field];
      if (value !== undefined) {
        where.push(`${field} = ?`);
        params.push(value);
      }
    }
    if (search.agent_ids !== undefined) {
      where.push("agent_id IN (SELECT value FROM json_each(?))");
      params.push(JSON.stringify(search.agent_ids));
    }
    if (search.statuses !== undefined) {
      where.push("status IN (SELECT value FROM json_each(?))");
      params.push(JSON.stringify(search.statuses));
    }
    if (search.started !== undefined) {
      // Segments are always JSON text (never packed): no segment is exactly '[]'.
      where.push(search.started ? "segments <> '[]'" : "segments = '[]'");
    }
    if (search.errcode !== undefined) {
      // A packed output (a long one: packed-json.ts) is read as having no errcode; the server's
      // own outcomes (a cancellation, a restart) have short descriptions and stay text.
      const errcode =
        "(CASE WHEN typeof(output) = 'text' THEN json_extract(output, '$.errcode') END)";
      where.push(`${errcode} ${search.errcode.is ? "IS" : "IS NOT"} ?`);
      params.push(search.errcode.value);
    }
    if (search.updated_since !== undefined) {
      where.push("updated_at >= ?");
      params.push(isoTimestamp(search.updated_since, "updated_since"));
    }
    if (search.metadata !== undefined) {
      assertObject(search.metadata, "metadata filter");
      const clauses = this.#metadata.clauses("runs.run_id", search.metadata, wanted);
      if (clauses === null) return null;
      where.push(...clauses.where);
      params.push(...clauses.params);
    }
    return { where, params };
  }

  count(filter: RunCountFilter, limit: number): number {
    const where: string[] = [];
    const params: unknown[] = [];
    for (const field of ["agent_id", "status", "kind", "thread_id"] as const) {
      const value = filter[field];
      if (value === undefined) continue;
      if (field === "status" && value === "pending") {
        // A literal, not a parameter: only then may SQLite use the partial pending indexes
        // (runs_pending_by_agent answers the queue-limit count from the index alone).
        where.push("status = 'pending'");
        continue;
      }
      // With another status, its index (few runs) beats the agent's (all its runs ever): `+`
      // keeps the planner off the agent index.
      where.push(
        field === "agent_id" && filter.status !== undefined && filter.status !== "pending"
          ? "+agent_id = ?"
          : `${field} = ?`,
      );
      params.push(value);
    }
    const clause = where.length === 0 ? "" : `WHERE ${where.join(" AND ")}`;
    const sql = `SELECT count(*) AS n FROM (SELECT 1 FROM runs ${clause} LIMIT ?)`;
    params.push(Math.max(0, Math.floor(limit)));
    return (this.#cache.get(sql).get(...params) as { n: number }).n;
  }
}
