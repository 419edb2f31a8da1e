import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Queryable } from "./connection.js";

/**
 * Next to this module in src/ (tsx, vitest) and in dist/ (the build copies the .sql files with
 * scripts/copy-assets.mjs): if that copy step goes, a built server fails at open().
 */
const MIGRATIONS_DIR = fileURLToPath(new URL("./migrations/", import.meta.url));
const FILE_NAME = /^(\d{3})-[a-z0-9-]+\.sql$/;

/**
 * First key of the advisory lock migrations hold ("ACPm"); the second is derived from the schema
 * name, so replicas migrating one schema queue up while other schemas migrate in parallel.
 */
const MIGRATION_LOCK = 0x4143506d;

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
