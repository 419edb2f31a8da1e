import { notFound } from "../../util/errors.js";
import { type PushConfigRow, toPushConfig } from "../records.js";
import type { PushConfigRecord } from "../types.js";
import { type Database, pgCode, TRANSACTION } from "./connection.js";
import { isoTimestamp } from "./mapping.js";

/** A2A push notification configs, by run (deleted with it). */
export class PushConfigRepository {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  /**
   * With `maxPerRun`, the run's configs are counted under a transaction lock of the run's own
   * (two creators of one run take turns; other runs are not held up), and nothing is stored
   * when it has that many others already.
   */
  async put(config: PushConfigRecord, maxPerRun?: number): Promise<boolean> {
    return this.#db.write(
      async (db) => {
        try {
          if (maxPerRun !== undefined) {
            await db.query(
              "SELECT pg_advisory_xact_lock(hashtextextended('a2a_push_configs ' || $1, 0))",
              [config.run_id],
            );
            const others = await db.query<{ full: boolean }>(
              `SELECT count(*) >= $3 AS full FROM (SELECT 1 FROM a2a_push_configs
                 WHERE run_id = $1 AND config_id <> $2 LIMIT $3) AS others`,
              [config.run_id, config.config_id, maxPerRun],
            );
            if (others.rows[0]?.full) return false;
          }
          await db.query(
            `INSERT INTO a2a_push_configs
               (run_id, config_id, url, token, authentication, created_at)
             VALUES ($1, $2, $3, $4, $5, $6)
             ON CONFLICT (run_id, config_id) DO UPDATE SET
               url = excluded.url, token = excluded.token,
               authentication = excluded.authentication`,
            [
              config.run_id,
              config.config_id,
              config.url,
              config.token,
              config.authentication ? JSON.stringify(config.authentication) : null,
              isoTimestamp(config.created_at, "created_at"),
            ],
          );
          return true;
        } catch (err) {
          if (pgCode(err) === "23503") throw notFound("run", config.run_id);
          throw err;
        }
      },
      maxPerRun === undefined ? undefined : TRANSACTION,
    );
  }

  async ofRun(runId: string): Promise<PushConfigRecord[]> {
    const result = await this.#db.query<PushConfigRow>(
      `SELECT run_id, config_id, url, token, authentication, created_at
       FROM a2a_push_configs WHERE run_id = $1 ORDER BY created_at, config_id`,
      [runId],
    );
    return result.rows.map(toPushConfig);
  }

  async delete(runId: string, configId: string): Promise<boolean> {
    const result = await this.#db.write((db) =>
      db.query("DELETE FROM a2a_push_configs WHERE run_id = $1 AND config_id = $2", [
        runId,
        configId,
      ]),
    );
    return (result.rowCount ?? 0) > 0;
  }
}
