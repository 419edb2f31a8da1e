import type Database from "better-sqlite3";
import { conflict, notFound } from "../../util/errors.js";
import { WEBHOOK_PARKED_AT } from "../records.js";
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

/**
 * The webhook outbox: deliveries with retry times, claimed in batches by any replica, in
 * streams (see the 013 migration): a stream's later deliveries are parked until the one before
 * them is settled, so each statement here reads a stream's first pending delivery by index,
 * never all of a run's deliveries.
 */
export class WebhookRepository {
  readonly #insert: Database.Statement;
  readonly #select: Database.Statement<[string], WebhookRow>;
  readonly #update: Database.Statement;
  readonly #promote: Database.Statement<[string, string]>;
  readonly #claim: Database.Statement<[string, string, string, number], WebhookRow>;
  readonly #ofRun: Database.Statement<[string], WebhookRow>;
  readonly #updateTx: Database.Transaction<(deliveryId: string, patch: WebhookPatch) => void>;

  constructor(db: Database.Database) {
    // Parked at once when its stream already has a pending delivery.
    this.#insert = db.prepare(
      `INSERT INTO webhook_deliveries
         (delivery_id, run_id, url, body, attempts, next_attempt_at, state, last_error, created_at,
          headers, stream, target)
       VALUES
         (@delivery_id, @run_id, @url, @body, @attempts,
          CASE WHEN EXISTS (SELECT 1 FROM webhook_deliveries
                            WHERE stream = @stream AND state = 'pending')
               THEN '${WEBHOOK_PARKED_AT}' ELSE @next_attempt_at END,
          @state, @last_error, @created_at, @headers, @stream, @target)`,
    );
    this.#select = db.prepare("SELECT * FROM webhook_deliveries WHERE delivery_id = ?");
    this.#update = db.prepare(
      `UPDATE webhook_deliveries SET
         attempts = @attempts, next_attempt_at = @next_attempt_at, state = @state,
         last_error = @last_error
       WHERE delivery_id = @delivery_id`,
    );
    this.#promote = db.prepare(
      `UPDATE webhook_deliveries SET next_attempt_at = ?
       WHERE seq = (SELECT seq FROM webhook_deliveries
                    WHERE stream = ? AND state = 'pending' ORDER BY seq LIMIT 1)
         AND next_attempt_at = '${WEBHOOK_PARKED_AT}'`,
    );
    // One statement: select the due batch and push it out, so two replicas never share one.
    // Only a stream's first pending delivery goes (a probe of the stream index each).
    this.#claim = db.prepare(
      `UPDATE webhook_deliveries SET next_attempt_at = ?
       WHERE seq IN (
         SELECT d.seq FROM webhook_deliveries d
         WHERE d.state = 'pending' AND d.next_attempt_at <= ?
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
                           WHERE e.stream = d.stream AND e.state = 'pending' AND e.seq < d.seq)
           AND (d.target IS NULL OR d.target NOT IN (SELECT value FROM json_each(?)))
         ORDER BY d.next_attempt_at, d.seq
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

  claimDue(
    now: Date,
    leaseMs: number,
    limit: number,
    busyTargets: readonly string[] = [],
  ): WebhookDelivery[] {
    const rows = this.#claim.all(
      addMs(now, leaseMs),
      now.toISOString(),
      JSON.stringify(busyTargets),
      limit,
    );
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
    const state = patch.state ?? row.state;
    try {
      this.#update.run({
        delivery_id: deliveryId,
        attempts: patch.attempts ?? row.attempts,
        next_attempt_at:
          patch.next_attempt_at === undefined
            ? row.next_attempt_at
            : isoTimestamp(patch.next_attempt_at, "next_attempt_at"),
        state,
        last_error: patch.last_error === undefined ? row.last_error : patch.last_error,
      });
    } catch (err) {
      rethrowCheck(err, "webhook patch");
    }
    // Settled: the next delivery of its stream is due now.
    if (row.state === "pending" && state !== "pending") {
      this.#promote.run(new Date().toISOString(), row.stream);
    }
  }
}
