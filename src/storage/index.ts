import { PostgresStorage } from "./postgres/postgres-storage.js";
import { redactStorageUrl } from "./redact-url.js";
import { SqliteStorage } from "./sqlite/sqlite-storage.js";
import type { Storage } from "./types.js";

export { SqliteStorage } from "./sqlite/sqlite-storage.js";
export type * from "./types.js";

/**
 * Chooses the backend from a storage URL:
 * - `:memory:`, `sqlite::memory:` → SQLite in memory (tests, throwaway servers);
 * - a file path, `sqlite:path` or `sqlite://path` (`sqlite:///abs/path` for an absolute one)
 *   → SQLite in that file;
 * - `postgres://…` / `postgresql://…` → PostgreSQL; `?schema=name` picks the schema (default
 *   `public`, created when missing).
 * The storage is returned unopened; call `open()` to apply migrations.
 */
export function createStorage(url: string): Storage {
  const trimmed = url.trim();
  if (trimmed === "") throw new Error("storage URL is empty: give a file path or :memory:");
  if (/^postgres(ql)?:\/\//i.test(trimmed)) return new PostgresStorage({ url: trimmed });
  let path = trimmed;
  if (/^sqlite:/i.test(path)) {
    path = path.slice("sqlite:".length);
    if (path.startsWith("//")) path = path.slice(2);
  } else if (/^[a-z][a-z0-9+.-]+:\/\//i.test(path)) {
    throw new Error(
      `unsupported storage URL scheme in ${redactStorageUrl(url)}: use a SQLite path or postgres://`,
    );
  }
  if (path === "") throw new Error(`storage URL ${url} names no SQLite file`);
  return new SqliteStorage({ path });
}
