import type { PushBacklogEntry, PushCursor, WebhookDelivery } from "../types.js";
import { type Database, TRANSACTION } from "./connection.js";
import type { WebhookRepository } from "./webhooks.js";

/**
 * A2A push relay cursors (see `Storage.advancePushCursor`): moved only from where the mover
 * read them, together with the deliveries of the events in between. The conditional update
 * locks the row, so of two relays moving the same cursor one sees no row changed.
 */
export class PushCursorRepository {
  readonly #db: Database;
  readonly #webhooks: WebhookRepository;

  constructor(db: Database, webhooks: WebhookRepository) {
    this.#db = db;
    this.#webhooks = webhooks;
  }

  async get(runId: string): Promise<PushCursor | null> {
    const result = await this.#db.query<PushCursor>(
      "SELECT seq, closed FROM a2a_push_cursors WHERE run_id = $1",
      [runId],
    );
    const row = result.rows[0];
    return row ? { seq: row.seq, closed: row.closed } : null;
  }

  advance(
    runId: string,
    from: PushCursor | null,
    to: PushCursor,
    deliveries: WebhookDelivery[],
  ): Promise<boolean> {
    return this.#db.write(async (db) => {
      const moved =
        from === null
          ? await db.query(
              `INSERT INTO a2a_push_cursors (run_id, seq, closed) VALUES ($1, $2, $3)
               ON CONFLICT DO NOTHING`,
              [runId, to.seq, to.closed],
            )
          : await db.query(
              `UPDATE a2a_push_cursors SET seq = $2, closed = $3
               WHERE run_id = $1 AND seq = $4 AND closed = $5`,
              [runId, to.seq, to.closed, from.seq, from.closed],
            );
      if ((moved.rowCount ?? 0) === 0) return false;
      await this.#webhooks.enqueueIn(db, deliveries);
      return true;
    }, TRANSACTION);
  }

  async backlog(
    owner: string,
    agentIds: readonly string[],
    limit: number,
  ): Promise<PushBacklogEntry[]> {
    const result = await this.#db.query<PushBacklogEntry>(
      `SELECT r.run_id, r.agent_id FROM a2a_push_cursors c JOIN runs r ON r.run_id = c.run_id
       WHERE EXISTS (SELECT 1 FROM a2a_push_configs p WHERE p.run_id = c.run_id)
         AND CASE WHEN r.status = 'pending' THEN r.owner IS NOT DISTINCT FROM $1
                  ELSE NOT c.closed OR c.seq < r.last_seq END
         AND r.agent_id = ANY($2::text[])
       LIMIT $3`,
      [owner, agentIds, limit],
    );
    return result.rows;
  }
}
