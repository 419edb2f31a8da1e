import type Database from "better-sqlite3";
import type { PushBacklogEntry, PushCursor, WebhookDelivery } from "../types.js";
import type { WebhookRepository } from "./webhooks.js";

interface CursorRow {
  seq: number;
  closed: 0 | 1;
}

/**
 * A2A push relay cursors (see `Storage.advancePushCursor`): moved only from where the mover
 * read them, together with the deliveries of the events in between.
 */
export class PushCursorRepository {
  readonly #get: Database.Statement<[string], CursorRow>;
  readonly #insert: Database.Statement<[string, number, number]>;
  readonly #move: Database.Statement<[number, number, string, number, number]>;
  readonly #backlog: Database.Statement<[string, string, number], PushBacklogEntry>;
  readonly #advance: Database.Transaction<
    (
      runId: string,
      from: PushCursor | null,
      to: PushCursor,
      deliveries: WebhookDelivery[],
    ) => boolean
  >;

  constructor(db: Database.Database, webhooks: WebhookRepository) {
    this.#get = db.prepare("SELECT seq, closed FROM a2a_push_cursors WHERE run_id = ?");
    this.#insert = db.prepare(
      "INSERT INTO a2a_push_cursors (run_id, seq, closed) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
    );
    this.#move = db.prepare(
      "UPDATE a2a_push_cursors SET seq = ?, closed = ? WHERE run_id = ? AND seq = ? AND closed = ?",
    );
    this.#backlog = db.prepare(
      `SELECT r.run_id, r.agent_id FROM a2a_push_cursors c JOIN runs r ON r.run_id = c.run_id
       WHERE EXISTS (SELECT 1 FROM a2a_push_configs p WHERE p.run_id = c.run_id)
         AND CASE WHEN r.status = 'pending' THEN r.owner = ?
                  ELSE c.closed = 0 OR c.seq < r.last_seq END
         AND r.agent_id IN (SELECT value FROM json_each(?))
       LIMIT ?`,
    );
    this.#advance = db.transaction((runId, from, to, deliveries) => {
      const moved =
        from === null
          ? this.#insert.run(runId, to.seq, to.closed ? 1 : 0)
          : this.#move.run(to.seq, to.closed ? 1 : 0, runId, from.seq, from.closed ? 1 : 0);
      if (moved.changes === 0) return false;
      for (const delivery of deliveries) webhooks.enqueue(delivery);
      return true;
    });
  }

  get(runId: string): PushCursor | null {
    const row = this.#get.get(runId);
    return row ? { seq: row.seq, closed: row.closed === 1 } : null;
  }

  advance(
    runId: string,
    from: PushCursor | null,
    to: PushCursor,
    deliveries: WebhookDelivery[],
  ): boolean {
    return this.#advance.immediate(runId, from, to, deliveries);
  }

  backlog(owner: string, agentIds: readonly string[], limit: number): PushBacklogEntry[] {
    return this.#backlog.all(owner, JSON.stringify(agentIds), limit);
  }
}
