import type Database from "better-sqlite3";
import { conflict, notFound } from "../../util/errors.js";
import type { WebhookDelivery } from "../types.js";
import {
  addMs,
  isoTimestamp,
  rethrowCheck,
  sqliteCode,
  toWebhook,
  type WebhookRow,
} from "./mapping.js";

export type WebhookPatch = Partial<
  Pick<WebhookDelivery, "attempts" | "next_attempt_at" | "state" | "last_error">
>;

/** The webhook outbox: deliveries with retry times, claimed in batches by any replica. */
export class WebhookRepository {
  readonly #insert: Database.Statement;
  readonly #select: Database.Statement<[string], WebhookRow>;
  readonly #update: Database.Statement;
  readonly #claim: Database.Statement<[string, string, number], WebhookRow>;
  readonly #ofRun: Database.Statement<[string], WebhookRow>;
  readonly #updateTx: Database.Transaction<(deliveryId: string, patch: WebhookPatch) => void>;

  constructor(db: Database.Database) {
    this.#insert = db.prepare(
      `INSERT INTO webhook_deliveries
         (delivery_id, run_id, url, body, attempts, next_attempt_at, state, last_error, created_at,
          headers)
       VALUES
         (@delivery_id, @run_id, @url, @body, @attempts, @next_attempt_at, @state, @last_error,
          @created_at, @headers)`,
    );
    this.#select = db.prepare("SELECT * FROM webhook_deliveries WHERE delivery_id = ?");
    this.#update = db.prepare(
      `UPDATE webhook_deliveries SET
         attempts = @attempts, next_attempt_at = @next_attempt_at, state = @state,
         last_error = @last_error
       WHERE delivery_id = @delivery_id`,
    );
    // One statement: select the due batch and push it out, so two replicas never share one.
    this.#claim = db.prepare(
      `UPDATE webhook_deliveries SET next_attempt_at = ?
       WHERE seq IN (
         SELECT seq FROM webhook_deliveries
         WHERE state = 'pending' AND next_attempt_at <= ?
         ORDER BY next_attempt_at, seq
         LIMIT ?)
       RETURNING *`,
    );
    this.#ofRun = db.prepare("SELECT * FROM webhook_deliveries WHERE run_id = ? ORDER BY seq");
    this.#updateTx = db.transaction((deliveryId, patch) => this.#updateOne(deliveryId, patch));
  }

  enqueue(delivery: WebhookDelivery): void {
    try {
      this.#insert.run({
        ...delivery,
        next_attempt_at: isoTimestamp(delivery.next_attempt_at, "next_attempt_at"),
        created_at: isoTimestamp(delivery.created_at, "created_at"),
        headers: delivery.headers ? JSON.stringify(delivery.headers) : null,
      });
    } catch (err) {
      const code = sqliteCode(err);
      if (code === "SQLITE_CONSTRAINT_FOREIGNKEY") throw notFound("run", delivery.run_id);
      if (code === "SQLITE_CONSTRAINT_UNIQUE") {
        throw conflict(`webhook delivery ${delivery.delivery_id} already exists`);
      }
      rethrowCheck(err, "webhook delivery");
    }
  }

  claimDue(now: Date, leaseMs: number, limit: number): WebhookDelivery[] {
    const rows = this.#claim.all(addMs(now, leaseMs), now.toISOString(), limit);
    // RETURNING gives no order guarantee; hand them out in insertion order.
    return rows.sort((a, b) => a.seq - b.seq).map(toWebhook);
  }

  update(deliveryId: string, patch: WebhookPatch): void {
    this.#updateTx.immediate(deliveryId, patch);
  }

  ofRun(runId: string): WebhookDelivery[] {
    return this.#ofRun.all(runId).map(toWebhook);
  }

  #updateOne(deliveryId: string, patch: WebhookPatch): void {
    const row = this.#select.get(deliveryId);
    if (row === undefined) throw notFound("webhook delivery", deliveryId);
    try {
      this.#update.run({
        delivery_id: deliveryId,
        attempts: patch.attempts ?? row.attempts,
        next_attempt_at:
          patch.next_attempt_at === undefined
            ? row.next_attempt_at
            : isoTimestamp(patch.next_attempt_at, "next_attempt_at"),
        state: patch.state ?? row.state,
        last_error: patch.last_error === undefined ? row.last_error : patch.last_error,
      });
    } catch (err) {
      rethrowCheck(err, "webhook patch");
    }
  }
}
