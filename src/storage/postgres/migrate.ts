import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { loadMigrations as loadShared, type Migration } from "../migrations.js";
import type { Queryable } from "./connection.js";

/**
 * Next to this module in src/ (tsx, vitest) and in dist/ (the build copies the .sql files with
 * scripts/copy-assets.mjs): if that copy step goes, a built server fails at open().
 */
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));

/**
 * First key of the advisory lock migrations hold ("ACPm"); the second is derived from the schema
 * name, so replicas migrating one schema queue up while other schemas migrate in parallel.
 */
const MIGRATION_LOCK = 0x4143506d;

export type { Migration } from "../migrations.js";

/** The numbered migrations shipped with the package, in order. */
export function loadMigrations(dir: string = MIGRATIONS_DIR): Migration[] {
  return loadShared(dir);
}

const schemaLockKey = (schema: string): number =>
  createHash("sha256").update(schema).digest().readInt32BE(0);

/**
 * Creates the schema when missing and applies the migrations not yet recorded in its
 * `schema_migrations`, all in the caller's transaction under an advisory lock: replicas starting
 * together wait for each other here, and the later ones find every migration recorded and apply
 * nothing. Returns the names of the migrations applied now.
 */
export async function migrate(
  client: Queryable,
  schema: string,
  migrations: Migration[] = loadMigrations(),
): Promise<string[]> {
  await client.query("SELECT pg_advisory_xact_lock($1, $2)", [
    MIGRATION_LOCK,
    schemaLockKey(schema),
  ]);
  // CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema exists;
  // checking first lets a least-privilege user run against a schema made for it.
  const exists = await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema]);
  if (exists.rowCount === 0) await client.query(`CREATE SCHEMA ${schema}`);
  // Unqualified names resolve through search_path, which the pool set to this schema.
  await client.query(
    `CREATE TABLE IF NOT EXISTS ${schema}.schema_migrations (
       version    integer PRIMARY KEY,
       name       text NOT NULL,
       applied_at timestamptz NOT NULL DEFAULT now()
     )`,
  );
  const applied = await client.query<{ version: number }>(
    `SELECT version FROM ${schema}.schema_migrations`,
  );
  const done = new Set(applied.rows.map((row) => row.version));
  const names: string[] = [];
  for (const migration of migrations) {
    if (done.has(migration.version)) continue;
    await client.query(migration.sql);
    await client.query(`INSERT INTO ${schema}.schema_migrations (version, name) VALUES ($1, $2)`, [
      migration.version,
      migration.name,
    ]);
    names.push(migration.name);
  }
  return names;
}
