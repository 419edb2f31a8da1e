import { conflict, notFound } from "../../util/errors.js";
import { WEBHOOK_PARKED_AT } from "../records.js";
import type { WebhookDelivery } from "../types.js";
import { type Database, pgCode, type Queryable, TRANSACTION } from "./connection.js";
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

/**
 * The webhook outbox: deliveries with retry times, claimed in batches by any replica, in
 * streams (see the 013 migration): a stream's later deliveries are parked until the one before
 * them is settled, so each statement here reads a stream's first pending delivery by index,
 * never all of a run's deliveries.
 *
 * Parking and settling meet on row locks: `enqueueIn` locks its streams' pending deliveries
 * (in `seq` order, as a settle locks its delivery and then the next) before it decides to park,
 * so a delivery is never parked behind one whose settle has already looked for it.
 */
export class WebhookRepository {
  readonly #db: Database;

  constructor(db: Database) {
    this.#db = db;
  }

  async enqueue(delivery: WebhookDelivery): Promise<void> {
    await this.#db.write((db) => this.enqueueIn(db, [delivery]), TRANSACTION);
  }

  /** Stores deliveries, in order, within the caller's transaction (see push-cursors.ts). */
  async enqueueIn(db: Queryable, deliveries: readonly WebhookDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const streams = [...new Set(deliveries.map((d) => d.stream))];
    const locked = await db.query<{ stream: string }>(
      `SELECT stream FROM webhook_deliveries
       WHERE stream = ANY($1::text[]) AND state = 'pending' ORDER BY seq FOR UPDATE`,
      [streams],
    );
    const busy = new Set(locked.rows.map((row) => row.stream));
    const columns = deliveries.map((delivery) => {
      const parked = busy.has(delivery.stream) && delivery.state === "pending";
      if (delivery.state === "pending") busy.add(delivery.stream);
      return [
        delivery.delivery_id,
        delivery.run_id,
        delivery.url,
        delivery.body,
        delivery.attempts,
        parked ? WEBHOOK_PARKED_AT : isoTimestamp(delivery.next_attempt_at, "next_attempt_at"),
        delivery.state,
        delivery.last_error,
        isoTimestamp(delivery.created_at, "created_at"),
        delivery.headers ? JSON.stringify(delivery.headers) : null,
        delivery.stream,
        delivery.target,
      ];
    });
    // One statement for the lot (a task with many push configs queues many per event), rows
    // inserted in the order given (`WITH ORDINALITY`), so `seq` keeps a stream's order.
    const arrays = columns[0]!.map((_, i) => columns.map((row) => row[i]));
    try {
      await db.query(
        `INSERT INTO webhook_deliveries
           (delivery_id, run_id, url, body, attempts, next_attempt_at, state, last_error,
            created_at, headers, stream, target)
         SELECT delivery_id, run_id, url, body, attempts, next_attempt_at, state, last_error,
                created_at, headers, stream, target
         FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::integer[],
                     $6::timestamptz[], $7::text[], $8::text[], $9::timestamptz[], $10::text[],
                     $11::text[], $12::text[])
              WITH ORDINALITY AS d(delivery_id, run_id, url, body, attempts, next_attempt_at,
                                   state, last_error, created_at, headers, stream, target, n)
         ORDER BY n`,
        arrays,
      );
    } catch (err) {
      const code = pgCode(err);
      if (code === "23503") {
        throw notFound("run", deliveries.length === 1 ? deliveries[0]!.run_id : "of a delivery");
      }
      if (code === "23505") {
        throw conflict(
          deliveries.length === 1
            ? `webhook delivery ${deliveries[0]!.delivery_id} already exists`
            : "a webhook delivery already exists",
        );
      }
      rethrowInvalid(err, "webhook delivery");
    }
  }

  /**
   * One statement: lock the due batch (skipping rows another replica is claiming right now) and
   * push it out, so two replicas never share a delivery. Only a stream's first pending delivery
   * goes (a probe of the stream index each), none to a busy target.
   */
  async claimDue(
    now: Date,
    leaseMs: number,
    limit: number,
    busyTargets: readonly string[] = [],
  ): Promise<WebhookDelivery[]> {
    const result = await this.#db.write((db) =>
      db.query<WebhookRow & { seq: number }>(
        `UPDATE webhook_deliveries SET next_attempt_at = $1
       WHERE seq = ANY (ARRAY(
         SELECT d.seq FROM webhook_deliveries d
         WHERE d.state = 'pending' AND d.next_attempt_at <= $2
           AND NOT EXISTS (SELECT 1 FROM webhook_deliveries e
                           WHERE e.stream = d.stream AND e.state = 'pending' AND e.seq < d.seq)
           AND (d.target IS NULL OR d.target <> ALL ($4::text[]))
         ORDER BY d.next_attempt_at, d.seq
         LIMIT $3
         FOR UPDATE OF d SKIP LOCKED))
       RETURNING seq, ${WEBHOOK_COLUMNS}`,
        [addMs(now, leaseMs), now.toISOString(), limit, busyTargets],
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
        ? "SELECT stream FROM webhook_deliveries WHERE delivery_id = $1"
        : `UPDATE webhook_deliveries SET ${sets.join(", ")} WHERE delivery_id = $1
           RETURNING stream`;
    const settles = patch.state !== undefined && patch.state !== "pending";
    await this.#db.write(
      async (db) => {
        let result: { rowCount: number | null; rows: Array<{ stream: string }> };
        try {
          result = await db.query<{ stream: string }>(sql, params);
        } catch (err) {
          rethrowInvalid(err, "webhook patch");
        }
        if (result.rowCount === 0) throw notFound("webhook delivery", deliveryId);
        // Settled: the next delivery of its stream is due now (a statement of its own, which
        // sees a delivery parked by a transaction that committed while this one waited).
        if (settles) {
          await db.query(
            `UPDATE webhook_deliveries SET next_attempt_at = $2
             WHERE seq = (SELECT seq FROM webhook_deliveries
                          WHERE stream = $1 AND state = 'pending' ORDER BY seq LIMIT 1)
               AND next_attempt_at = '${WEBHOOK_PARKED_AT}'`,
            [result.rows[0]!.stream, new Date().toISOString()],
          );
        }
      },
      settles ? TRANSACTION : undefined,
    );
  }

  async ofRun(runId: string): Promise<WebhookDelivery[]> {
    const result = await this.#db.query<WebhookRow>(
      `SELECT ${WEBHOOK_COLUMNS} FROM webhook_deliveries WHERE run_id = $1 ORDER BY seq`,
      [runId],
    );
    return result.rows.map(toWebhook);
  }
}
