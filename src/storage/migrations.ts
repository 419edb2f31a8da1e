/**
 * Numbered SQL migrations, read from a backend's `migrations/` folder: `NNN-name.sql`, applied in
 * number order. Each backend records and applies them its own way (its own migrate.ts).
 */

import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const FILE_NAME = /^(\d{3})-[a-z0-9-]+\.sql$/;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** The migrations in `dir`, in order; fails on a duplicate number or an empty folder. */
export function loadMigrations(dir: string): Migration[] {
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
