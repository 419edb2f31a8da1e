import type Database from "better-sqlite3";
import { canonicalEntries, canonicalJson } from "./json.js";

/**
 * Up to this many matching rows, a metadata key is "selective": fetching and sorting all its
 * matches (~1 µs each) is cheaper than scanning newest-first until enough of them turn up.
 */
const SELECTIVE_MATCHES = 5000;

/**
 * A key/value side table (`thread_metadata`, `run_metadata`): one row per top-level metadata key
 * with its canonical JSON, indexed on (key, value_json). Containment search ("every given key
 * present with a deep-equal value") becomes one indexed equality per key, and keys are bound
 * parameters, never JSON paths, so no key can break or inject into the SQL.
 */
export class MetadataIndex {
  readonly #table: string;
  readonly #owner: string;
  readonly #upsert: Database.Statement<[string, string, string]>;
  readonly #copy: Database.Statement<[string, string]>;
  readonly #count: Database.Statement<[string, string, number], { n: number }>;

  constructor(db: Database.Database, table: "thread_metadata" | "run_metadata") {
    this.#table = table;
    this.#owner = table === "thread_metadata" ? "thread_id" : "run_id";
    this.#upsert = db.prepare(
      `INSERT INTO ${table} (${this.#owner}, key, value_json) VALUES (?, ?, ?)
       ON CONFLICT (${this.#owner}, key) DO UPDATE SET value_json = excluded.value_json`,
    );
    this.#copy = db.prepare(
      `INSERT INTO ${table} (${this.#owner}, key, value_json)
       SELECT ?, key, value_json FROM ${table} WHERE ${this.#owner} = ?`,
    );
    this.#count = db.prepare(
      `SELECT count(*) AS n FROM (SELECT 1 FROM ${table} WHERE key = ? AND value_json = ? LIMIT ?)`,
    );
  }

  /** Records (or replaces) each top-level key of `metadata`; call in the writer's transaction. */
  put(ownerId: string, metadata: Record<string, unknown>): void {
    for (const key of Object.keys(metadata)) {
      this.#upsert.run(ownerId, key, canonicalJson(metadata[key]));
    }
  }

  copy(fromId: string, toId: string): void {
    this.#copy.run(toId, fromId);
  }

  /**
   * SQL conditions on `idColumn` (e.g. `t.thread_id`) for a containment filter, planned per query
   * from each key's match count (capped). When some key matches few rows, its index range drives
   * the query (`IN`) and the result is sorted; when every key matches many, the caller's
   * newest-first index is scanned and each key is checked by primary key (`EXISTS`), stopping
   * after `wanted` hits. Either shape alone costs ~50 ms on 100k threads for the other kind of
   * filter. Returns null when some key matches nothing (the answer is empty).
   */
  clauses(
    idColumn: string,
    filter: Record<string, unknown>,
    wanted: number,
  ): { where: string[]; params: string[] } | null {
    const entries = canonicalEntries(filter);
    const cap = Math.max(SELECTIVE_MATCHES, 2 * wanted) + 1;
    let driver = -1;
    let fewest = cap;
    entries.forEach(([key, value], index) => {
      const matches = this.#count.get(key, value, cap)?.n ?? 0;
      if (matches < fewest) {
        fewest = matches;
        driver = index;
      }
    });
    if (fewest === 0) return null;
    const where: string[] = [];
    const params: string[] = [];
    const driving = entries[driver];
    if (driving !== undefined) {
      where.push(
        `${idColumn} IN (SELECT m.${this.#owner} FROM ${this.#table} m WHERE m.key = ? AND m.value_json = ?)`,
      );
      params.push(...driving);
    }
    entries.forEach((entry, index) => {
      if (index === driver) return;
      where.push(
        `EXISTS (SELECT 1 FROM ${this.#table} m WHERE m.${this.#owner} = ${idColumn} AND m.key = ? AND m.value_json = ?)`,
      );
      params.push(...entry);
    });
    return { where, params };
  }
}
