import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type Database from "better-sqlite3";

/**
 * Next to this module in src/ (tsx, vitest) and in dist/ (the build copies the .sql files with
 * scripts/copy-assets.mjs): if that copy step goes, a built server fails at open().
 */
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));
const FILE_NAME = /^(\d{3})-[a-z0-9-]+\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The numbered migrations shipped with the package, in order. */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  const migrations: Migration[] = [];
  for (const file of readdirSync(dir).sort()) {
    const match = FILE_NAME.exec(file);
    if (match === null) continue;
    migrations.push({
      version: Number(match[1]),
      name: file,
      sql: readFileSync(join(dir, file), "utf8"),
    });
  }
  const versions = new Set(migrations.map((m) => m.version));
  if (versions.size !== migrations.length) throw new Error(`duplicate migration number in ${dir}`);
  if (migrations.length === 0) throw new Error(`no migrations found in ${dir}`);
  return migrations;
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
