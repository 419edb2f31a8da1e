/**
 * The PostgreSQL storage's working parts, opened together: the pool, the migrations and a
 * repository per table. PostgresStorage imports this module when it opens, so a server on
 * SQLite loads none of the PostgreSQL code (14 modules: about 0.3 MB at rest).
 */

import { CheckpointRepository } from "./checkpoints.js";
import { createPool, Database, TRANSACTION } from "./connection.js";
import type { ConnectionTarget, PoolSettings } from "./connection-target.js";
import { FrameRepository } from "./frames.js";
import { PostgresMcpSessions } from "./mcp-sessions.js";
import { migrate } from "./migrate.js";
import { PushConfigRepository } from "./push-configs.js";
import { PushCursorRepository } from "./push-cursors.js";
import { PostgresRetention } from "./retention.js";
import { RunClaims } from "./run-claims.js";
import { RunRepository } from "./runs.js";
import { ThreadRepository } from "./threads.js";
import { WebhookRepository } from "./webhooks.js";

export interface Repositories {
  db: Database;
  threads: ThreadRepository;
  checkpoints: CheckpointRepository;
  runs: RunRepository;
  claims: RunClaims;
  frames: FrameRepository;
  webhooks: WebhookRepository;
  pushConfigs: PushConfigRepository;
  pushCursors: PushCursorRepository;
  retention: PostgresRetention;
  mcpSessions: PostgresMcpSessions;
}

/** Opens the pool and brings the schema up to date; the pool is closed again if that fails. */
export async function openRepositories(
  target: ConnectionTarget,
  settings: PoolSettings,
): Promise<{ repos: Repositories; appliedMigrations: string[] }> {
  const db = new Database(
    await createPool(target, settings.poolSize),
    settings.writeGroups,
    settings.writesPerGroup,
    settings.groupBudgetMs,
  );
  let appliedMigrations: string[];
  try {
    appliedMigrations = await db.transaction((client) => migrate(client, target.schema));
  } catch (err) {
    await db.pool.end();
    throw err;
  }
  const checkpoints = new CheckpointRepository(db);
  const frames = new FrameRepository(db);
  const webhooks = new WebhookRepository(db);
  const repos: Repositories = {
    db,
    threads: new ThreadRepository(db),
    checkpoints,
    runs: new RunRepository(db, frames, checkpoints),
    claims: new RunClaims(db),
    frames,
    webhooks,
    pushConfigs: new PushConfigRepository(db),
    pushCursors: new PushCursorRepository(db, webhooks),
    retention: new PostgresRetention(db, target.schema),
    mcpSessions: new PostgresMcpSessions(db),
  };
  return { repos, appliedMigrations };
}

/** Gives every thread and run without an owner to `principal`, in one transaction. */
export async function assignUnowned(
  db: Database,
  principal: string,
): Promise<{ threads: number; runs: number }> {
  return db.write(async (tx) => {
    const threads = await tx.query("UPDATE threads SET principal = $1 WHERE principal IS NULL", [
      principal,
    ]);
    const runs = await tx.query("UPDATE runs SET principal = $1 WHERE principal IS NULL", [
      principal,
    ]);
    return { threads: threads.rowCount ?? 0, runs: runs.rowCount ?? 0 };
  }, TRANSACTION);
}
