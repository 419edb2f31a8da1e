import type { Logger } from "pino";
import type { Storage } from "../storage/types.js";
import { isDomainError } from "../util/errors.js";

/**
 * The deliveries this deliverer has claimed and not yet settled, each with its renewal in
 * flight (if any). Every third of the lease their claims are pushed out by another lease, so
 * that no other replica takes them while their attempt is under way, however long it takes;
 * a replica that dies gives them up within about one lease.
 */
export class HeldClaims {
  readonly #storage: Storage;
  readonly #logger: Logger;
  readonly #leaseMs: number;
  readonly #held = new Map<string, Promise<void> | null>();
  #renewer: NodeJS.Timeout | null = null;

  constructor(storage: Storage, logger: Logger, leaseMs: number) {
    this.#storage = storage;
    this.#logger = logger;
    this.#leaseMs = leaseMs;
  }

  start(): void {
    if (this.#renewer !== null) return;
    this.#renewer = setInterval(() => this.#renew(), Math.max(100, this.#leaseMs / 3));
    this.#renewer.unref();
  }

  stop(): void {
    if (this.#renewer !== null) clearInterval(this.#renewer);
    this.#renewer = null;
  }

  hold(deliveryId: string): void {
    this.#held.set(deliveryId, null);
  }

  /**
   * Ends the renewal of a claim before its own bookkeeping writes `next_attempt_at` (a renewal
   * landing after it would hide the delivery for another lease).
   */
  async settle(deliveryId: string): Promise<void> {
    const renewing = this.#held.get(deliveryId);
    this.#held.delete(deliveryId);
    await renewing;
  }

  #renew(): void {
    const until = new Date(Date.now() + this.#leaseMs).toISOString();
    for (const [deliveryId, renewing] of this.#held) {
      if (renewing !== null) continue;
      const renewal = this.#storage
        .updateWebhook(deliveryId, { next_attempt_at: until })
        .catch((err: unknown) => {
          if (!isDomainError(err, "not_found")) {
            this.#logger.warn({ err, delivery_id: deliveryId }, "webhook claim renewal failed");
          }
        })
        .finally(() => {
          if (this.#held.get(deliveryId) === renewal) this.#held.set(deliveryId, null);
        });
      this.#held.set(deliveryId, renewal);
    }
  }
}
