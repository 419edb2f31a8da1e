import type Database from "better-sqlite3";
import { notFound } from "../../util/errors.js";
import { type PushConfigRow, toPushConfig } from "../records.js";
import type { PushConfigRecord } from "../types.js";
import { isoTimestamp, sqliteCode } from "./mapping.js";

/** A2A push notification configs, by run (deleted with it). */
export class PushConfigRepository {
  readonly #put: Database.Statement;
  readonly #ofRun: Database.Statement<[string], PushConfigRow>;
  readonly #delete: Database.Statement<[string, string]>;
  /** The run's other configs, counted up to a limit (so a count costs at most the limit). */
  readonly #others: Database.Statement<[string, string, number], { n: number }>;

  constructor(db: Database.Database) {
    this.#put = db.prepare(
      `INSERT INTO a2a_push_configs (run_id, config_id, url, token, authentication, created_at)
       VALUES (@run_id, @config_id, @url, @token, @authentication, @created_at)
       ON CONFLICT (run_id, config_id) DO UPDATE SET
         url = excluded.url, token = excluded.token, authentication = excluded.authentication`,
    );
    this.#ofRun = db.prepare(
      "SELECT * FROM a2a_push_configs WHERE run_id = ? ORDER BY created_at, config_id",
    );
    this.#delete = db.prepare("DELETE FROM a2a_push_configs WHERE run_id = ? AND config_id = ?");
    this.#others = db.prepare(
      `SELECT count(*) AS n FROM (SELECT 1 FROM a2a_push_configs
         WHERE run_id = ? AND config_id <> ? LIMIT ?)`,
    );
  }

  /** Counted and stored in one write (SQLite writes one at a time). */
  put(config: PushConfigRecord, maxPerRun?: number): boolean {
    if (
      maxPerRun !== undefined &&
      this.#others.get(config.run_id, config.config_id, maxPerRun)!.n >= maxPerRun
    ) {
      return false;
    }
    try {
      this.#put.run({
        ...config,
        authentication: config.authentication ? JSON.stringify(config.authentication) : null,
        created_at: isoTimestamp(config.created_at, "created_at"),
      });
    } catch (err) {
      if (sqliteCode(err) === "SQLITE_CONSTRAINT_FOREIGNKEY") throw notFound("run", config.run_id);
      throw err;
    }
    return true;
  }

  ofRun(runId: string): PushConfigRecord[] {
    return this.#ofRun.all(runId).map(toPushConfig);
  }

  delete(runId: string, configId: string): boolean {
    return this.#delete.run(runId, configId).changes > 0;
  }
}
