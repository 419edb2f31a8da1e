import { fileURLToPath } from "node:url";
import type Database from "better-sqlite3";
import { loadMigrations as loadShared, type Migration } from "../migrations.js";

/**
 * Next to this module in src/ (tsx, vitest) and in dist/ (the build copies the .sql files with
 * scripts/copy-assets.mjs): if that copy step goes, a built server fails at open().
 */
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));

export type { Migration } from "../migrations.js";

/** The numbered migrations shipped with the package, in order. */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return loadShared(dir);
}

/**
 * Applies the migrations not yet recorded in `schema_migrations`, all in one immediate
 * transaction: two replicas starting together serialize here, and the second one sees the
 * first one's rows and applies nothing. Returns the names of the migrations applied now.
 */
export function migrate(
  db: Database.Database,
  migrations: Migration[] = loadMigrations(),
): string[] {
  db.exec(
    `CREATE TABLE IF NOT EXISTS schema_migrations (
       version    INTEGER PRIMARY KEY,
       name       TEXT NOT NULL,
       applied_at TEXT NOT NULL
     )`,
  );
  const applied = db.prepare<[], { version: number }>("SELECT version FROM schema_migrations");
  const record = db.prepare(
    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
  );
  const run = db.transaction(() => {
    const done = new Set(applied.all().map((row) => row.version));
    const names: string[] = [];
    for (const migration of migrations) {
      if (done.has(migration.version)) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, new Date().toISOString());
      names.push(migration.name);
    }
    return names;
  });
  return run.immediate();
}
