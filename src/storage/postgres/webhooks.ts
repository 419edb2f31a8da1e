import { conflict, notFound } from "../../util/errors.js";
import type { WebhookDelivery } from "../types.js";
import { type Database, pgCode, type Queryable } from "./connection.js";
import {
  addMs,
  isoTimestamp,
  rethrowInvalid,
  toWebhook,
  WEBHOOK_COLUMNS,
  type WebhookRow,
} from "./mapping.js";

export type WebhookPatch = Partial<
  Pick<WebhookDelivery, "attempts" | "next_attempt_at" | "state" | "last_error">
>;

const PATCH_COLUMNS: Record<keyof WebhookPatch, [cast: string, encode: (value: never) => unknown]> =
  {
    attempts: ["integer", (v: number) => v],
    next_attempt_at: ["timestamptz", (v: string) => isoTimestamp(v, "next_attempt_at")],
    state: ["text", (v: string) => v],
    last_error: ["text", (v: string | null) => v],
  };

/** The webhook outbox: deliveries with retry times, claimed in batches by any replica. */
export class WebhookRepository {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async enqueue(delivery: WebhookDelivery): Promise<void> {
    await this.#db.write((db) => this.enqueueIn(db, delivery));
  }

  /** Stores a delivery within the caller's transaction (see push-cursors.ts). */
  async enqueueIn(db: Queryable, delivery: WebhookDelivery): Promise<void> {
    try {
      await db.query(
        `INSERT INTO webhook_deliveries
           (delivery_id, run_id, url, body, attempts, next_attempt_at, state, last_error,
            created_at, headers)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
        [
          delivery.delivery_id,
          delivery.run_id,
          delivery.url,
          delivery.body,
          delivery.attempts,
          isoTimestamp(delivery.next_attempt_at, "next_attempt_at"),
          delivery.state,
          delivery.last_error,
          isoTimestamp(delivery.created_at, "created_at"),
          delivery.headers ? JSON.stringify(delivery.headers) : null,
        ],
      );
    } catch (err) {
      const code = pgCode(err);
      if (code === "23503") throw notFound("run", delivery.run_id);
      if (code === "23505") {
        throw conflict(`webhook delivery ${delivery.delivery_id} already exists`);
      }
      rethrowInvalid(err, "webhook delivery");
    }
  }

  /**
   * One statement: lock the due batch (skipping rows another replica is claiming right now) and
   * push it out, so two replicas never share a delivery.
   */
  async claimDue(now: Date, leaseMs: number, limit: number): Promise<WebhookDelivery[]> {
    const result = await this.#db.write((db) =>
      db.query<WebhookRow & { seq: number }>(
        `UPDATE webhook_deliveries SET next_attempt_at = $1
       WHERE seq = ANY (ARRAY(
         SELECT seq FROM webhook_deliveries
         WHERE state = 'pending' AND next_attempt_at <= $2
         ORDER BY next_attempt_at, seq
         LIMIT $3
         FOR UPDATE SKIP LOCKED))
       RETURNING seq, ${WEBHOOK_COLUMNS}`,
        [addMs(now, leaseMs), now.toISOString(), limit],
      ),
    );
    // RETURNING gives no order guarantee; hand them out in insertion order.
    return result.rows.sort((a, b) => a.seq - b.seq).map(toWebhook);
  }

  async update(deliveryId: string, patch: WebhookPatch): Promise<void> {
    const sets: string[] = [];
    const params: unknown[] = [deliveryId];
    for (const [key, value] of Object.entries(patch)) {
      if (value === undefined || !Object.hasOwn(PATCH_COLUMNS, key)) continue;
      const [cast, encode] = PATCH_COLUMNS[key as keyof WebhookPatch];
      params.push(encode(value as never));
      sets.push(`${key} = $${params.length}::${cast}`);
    }
    // With nothing to change, still answer not_found for an unknown delivery.
    const sql =
      sets.length === 0
        ? "SELECT 1 FROM webhook_deliveries WHERE delivery_id = $1"
        : `UPDATE webhook_deliveries SET ${sets.join(", ")} WHERE delivery_id = $1`;
    await this.#db.write(async (db) => {
      let rowCount: number | null;
      try {
        ({ rowCount } = await db.query(sql, params));
      } catch (err) {
        rethrowInvalid(err, "webhook patch");
      }
      if (rowCount === 0) throw notFound("webhook delivery", deliveryId);
    });
  }

  async ofRun(runId: string): Promise<WebhookDelivery[]> {
    const result = await this.#db.query<WebhookRow>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhook_deliveries WHERE run_id = $1 ORDER BY seq`,
      [runId],
    );
    return result.rows.map(toWebhook);
  }
}
