import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { Storage, WebhookDelivery } from "../storage/types.js";
import { storedTraceHeaders, tracing } from "../telemetry/index.js";
import { isDomainError } from "../util/errors.js";
import { type Outcome, WebhookClient } from "./attempt.js";
import { HeldClaims } from "./claims.js";
import { DeliverySlots, targetOf } from "./slots.js";
import { checkWebhookUrl, type ResolveHost, systemResolve } from "./target-guard.js";

export interface WebhookDelivererOptions {
  storage: Storage;
  logger: Logger;
  /** Allow loopback/private/link-local targets (config `server.webhooks.allowPrivateTargets`). */
  allowPrivateTargets: boolean;
  /** Attempts per delivery before it is marked failed. Default 5. */
  maxAttempts?: number;
  /** Backoff before retry n is min(maxDelayMs, baseDelayMs · 2^(n-1)), jittered to 50–100 %. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  /**
   * Bound on one attempt: the target's check (DNS included), connecting, sending, and the
   * response's headers (its body is never read). Default 10 000.
   */
  timeoutMs?: number;
  /** Bound on opening an attempt's connection, within timeoutMs. Default 5 000. */
  connectTimeoutMs?: number;
  /** How often storage is polled for due deliveries (retries, other replicas' work). Default 1000. */
  pollIntervalMs?: number;
  /**
   * How long a claimed delivery stays hidden from other claims (other replicas) without
   * renewal. Default 2 · timeoutMs + 30 s. The deliverer renews its claims every third of it
   * until it has settled them, so a live replica keeps them however long its attempts take,
   * and a replica that dies gives them up within about this long (then they are sent again:
   * at least once, with the same `x-acp-delivery-id`). Until then, the later deliveries of
   * the same stream wait behind them.
   */
  leaseMs?: number;
  /** Attempts under way at once, not counting slow ones (see slots.ts). Default 16. */
  concurrency?: number;
  /** Attempts open at once to one target (`scheme://host:port`), slow ones included. Default 4. */
  perTargetConcurrency?: number;
  /** How long an attempt waits for its receiver before it stops taking a slot. Default 1000. */
  slowAfterMs?: number;
  /** Slow attempts open at once, across targets. Default 16 · concurrency. */
  maxSlowAttempts?: number;
  /** How long `stop()` waits for in-flight attempts before aborting them. Default timeoutMs. */
  stopTimeoutMs?: number;
  /**
   * Replaces the HTTP client. The default is undici's fetch over an agent whose connections
   * resolve host names through the SSRF guard (`createPinnedLookup`); a replacement only gets the
   * pre-connect `checkWebhookTarget`.
   */
  fetch?: typeof fetch;
  /** Host name resolver for the guard and the default client. Default: system DNS. */
  resolve?: ResolveHost;
}

export interface WebhookStats {
  delivered: number;
  retried: number;
  failed: number;
}

const EVENT = "run.status_changed";

/**
 * Delivers webhooks (ACP runs' status changes, A2A push notifications): a loop POSTs each
 * stored delivery until a 2xx, with exponential backoff, then gives up after `maxAttempts`.
 * Deliveries live in storage (an outbox), so a restart or another replica picks up what this
 * one did not finish.
 *
 * Order: each delivery belongs to a stream (an ACP run's webhook, or one push config of an
 * A2A task); storage hands out only a stream's first pending delivery, and parks the later
 * ones until it is delivered or fails. So a receiver never sees `success` before the `pending`
 * that preceded it, unless the earlier one finally failed, across replicas too; and a stream
 * whose receiver hangs or fails holds up only itself.
 *
 * Isolation: attempts take slots (see slots.ts) that a receiver which does not answer gives
 * back after `slowAfterMs`, at most `perTargetConcurrency` attempts go to one receiver at once,
 * and a retry waits in storage, not in a slot. So however many receivers hang, the others get
 * their notifications.
 */
export class WebhookDeliverer {
  readonly #storage: Storage;
  readonly #logger: Logger;
  readonly #allowPrivateTargets: boolean;
  readonly #maxAttempts: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #pollIntervalMs: number;
  readonly #leaseMs: number;
  readonly #stopTimeoutMs: number;
  readonly #resolve: ResolveHost;
  readonly #client: WebhookClient;
  readonly #slots: DeliverySlots;
  readonly #claims: HeldClaims;

  #running = false;
  #timer: NodeJS.Timeout | null = null;
  #timerAt = Number.POSITIVE_INFINITY;
  #ticking: Promise<void> | null = null;
  #tickAgain = false;
  /** The attempts under way (their bookkeeping included), each with its abort. */
  readonly #inFlight = new Map<Promise<void>, AbortController>();
  #lastCreatedAt = 0;
  readonly #stats: WebhookStats = { delivered: 0, retried: 0, failed: 0 };

  constructor(options: WebhookDelivererOptions) {
    this.#storage = options.storage;
    this.#logger = options.logger;
    this.#allowPrivateTargets = options.allowPrivateTargets;
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.#baseDelayMs = options.baseDelayMs ?? 1000;
    this.#maxDelayMs = options.maxDelayMs ?? 60_000;
    const timeoutMs = options.timeoutMs ?? 10_000;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.#leaseMs = options.leaseMs ?? 2 * timeoutMs + 30_000;
    this.#stopTimeoutMs = options.stopTimeoutMs ?? timeoutMs;
    this.#resolve = options.resolve ?? systemResolve;
    this.#client = new WebhookClient({
      allowPrivateTargets: this.#allowPrivateTargets,
      resolve: this.#resolve,
      timeoutMs,
      connectTimeoutMs: options.connectTimeoutMs ?? 5000,
      fetch: options.fetch,
    });
    const concurrency = Math.max(1, options.concurrency ?? 16);
    this.#slots = new DeliverySlots(
      {
        concurrency,
        perTarget: Math.max(1, options.perTargetConcurrency ?? 4),
        maxSlow: Math.max(0, options.maxSlowAttempts ?? 16 * concurrency),
        slowAfterMs: options.slowAfterMs ?? 1000,
      },
      () => this.#wake(0),
    );
    this.#claims = new HeldClaims(this.#storage, this.#logger, this.#leaseMs);
  }

  /**
   * Refuses (an `invalid` domain error naming the rule) a webhook URL this deliverer would
   * never call: not http(s), credentials in it, or (unless private targets are allowed) a
   * loopback, private, link-local or otherwise non-public address, the host name's addresses
   * included. A name that does not resolve now is let through (delivery checks it again).
   */
  checkTarget(url: string): Promise<void> {
    return checkWebhookUrl(url, {
      allowPrivateTargets: this.#allowPrivateTargets,
      resolve: this.#resolve,
    });
  }

  /**
   * Stores a delivery of `runJson` to `url` and wakes the loop; resolves once stored, not once
   * delivered. The URL is checked again at delivery time, where a refused target fails it.
   */
  async enqueue(
    run: { run_id: string },
    url: string,
    runJson: Record<string, unknown>,
    /** Headers sent besides the server's own (an A2A push config's token, its authorization). */
    headers?: Record<string, string>,
  ): Promise<void> {
    await this.#storage.enqueueWebhook(this.delivery(run.run_id, url, runJson, headers));
    this.#wake(0);
  }

  /**
   * A delivery as `enqueue` stores it, for a caller that stores it in its own transaction
   * (A2A push notifications, with their relay's cursor); call `wake` once it is stored.
   * `stream` orders it (default: its run's, one stream per run).
   */
  delivery(
    runId: string,
    url: string,
    body: unknown,
    headers?: Record<string, string>,
    stream: string = runId,
  ): WebhookDelivery {
    // Strictly increasing within this process, so two status changes in one millisecond keep
    // their order by created_at.
    const createdAt = Math.max(Date.now(), this.#lastCreatedAt + 1);
    this.#lastCreatedAt = createdAt;
    const timestamp = new Date(createdAt).toISOString();
    return {
      delivery_id: randomUUID(),
      run_id: runId,
      url,
      body: JSON.stringify(body),
      attempts: 0,
      next_attempt_at: timestamp,
      state: "pending",
      last_error: null,
      created_at: timestamp,
      ...(headers ? { headers } : {}),
      stream,
      target: targetOf(url),
    };
  }

  /** Deliveries were stored: send them now rather than at the next poll. */
  wake(): void {
    this.#wake(0);
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#claims.start();
    this.#wake(0);
  }

  /**
   * Stops polling and waits for in-flight attempts, at most `stopTimeoutMs`; attempts still
   * running then are aborted and left pending (uncounted) for the next start or another replica.
   */
  async stop(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    this.#clearTimer();
    const settled = async () => {
      await this.#ticking;
      await Promise.allSettled([...this.#inFlight.keys()]);
    };
    if (!(await withinMs(settled(), this.#stopTimeoutMs))) {
      const stopping = new Error("webhook deliverer stopping");
      for (const controller of this.#inFlight.values()) controller.abort(stopping);
      await withinMs(settled(), 1000);
    }
    // Claims are renewed until the attempts in flight are over, so no other replica sends
    // them meanwhile.
    this.#claims.stop();
    await this.#client.close();
  }

  stats(): WebhookStats {
    return { ...this.#stats };
  }

  #wake(delayMs: number): void {
    if (!this.#running) return;
    const at = Date.now() + Math.max(0, delayMs);
    if (this.#timer !== null && this.#timerAt <= at) return;
    this.#clearTimer();
    this.#timerAt = at;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#timerAt = Number.POSITIVE_INFINITY;
      this.#tick();
    }, delayMs);
    this.#timer.unref();
  }

  #clearTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#timerAt = Number.POSITIVE_INFINITY;
  }

  #tick(): void {
    if (!this.#running) return;
    if (this.#ticking !== null) {
      this.#tickAgain = true;
      return;
    }
    this.#ticking = this.#claimLoop().finally(() => {
      this.#ticking = null;
      // A wake-up that arrived after the loop's last claim must not wait a whole poll interval.
      this.#wake(this.#tickAgain ? 0 : this.#pollIntervalMs);
    });
  }

  async #claimLoop(): Promise<void> {
    try {
      do {
        this.#tickAgain = false;
        const room = this.#slots.room();
        if (room <= 0) return;
        const busy = this.#slots.busyTargets();
        const batch = await this.#storage.claimDueWebhooks(new Date(), this.#leaseMs, room, busy);
        for (const delivery of batch) this.#dispatch(delivery);
        if (batch.length === room) this.#tickAgain = true;
      } while (this.#tickAgain && this.#running);
    } catch (err) {
      this.#logger.error({ err }, "webhook claim failed");
    }
  }

  /**
   * Starts a claimed delivery's attempt, or gives the claim back when its target filled up
   * within this batch (the next claims pass that target over until it has room).
   */
  #dispatch(delivery: WebhookDelivery): void {
    this.#claims.hold(delivery.delivery_id);
    const slot = this.#running ? this.#slots.take(delivery.target || targetOf(delivery.url)) : null;
    const controller = new AbortController();
    const work = (slot === null ? this.#release(delivery) : this.#process(delivery, controller))
      .catch((err: unknown) => this.#bookkeepingFailed(delivery, err))
      .finally(() => {
        this.#inFlight.delete(work);
        slot?.release();
      });
    this.#inFlight.set(work, controller);
  }

  async #process(delivery: WebhookDelivery, controller: AbortController): Promise<void> {
    const attempt = delivery.attempts + 1;
    const outcome = await this.#client.attempt(
      delivery.url,
      await this.#headers(delivery),
      delivery.body,
      controller,
    );
    await this.#claims.settle(delivery.delivery_id);
    await this.#record(delivery, attempt, outcome);
  }

  /**
   * The headers of an attempt: the delivery's own (an A2A notification's token, authorization
   * and content type) over the defaults, then the delivery id and, with tracing on, the trace
   * context of the request that created the run.
   */
  async #headers(delivery: WebhookDelivery): Promise<Record<string, string>> {
    const run = tracing() && (await this.#storage.getRun(delivery.run_id).catch(() => null));
    return {
      "x-acp-event": EVENT,
      "content-type": "application/json",
      ...delivery.headers,
      "x-acp-delivery-id": delivery.delivery_id,
      ...storedTraceHeaders(run ? run.trace_context : null),
    };
  }

  async #record(delivery: WebhookDelivery, attempt: number, outcome: Outcome): Promise<void> {
    const context = {
      run_id: delivery.run_id,
      delivery_id: delivery.delivery_id,
      url: delivery.url,
      attempt,
    };
    switch (outcome.kind) {
      case "delivered":
        await this.#storage.updateWebhook(delivery.delivery_id, {
          attempts: attempt,
          state: "delivered",
          last_error: null,
        });
        this.#stats.delivered++;
        this.#logger.info({ ...context, status: outcome.status }, "webhook delivered");
        return;
      case "aborted":
        await this.#release(delivery);
        this.#logger.warn(context, "webhook attempt aborted by shutdown; left pending");
        return;
      case "refused":
      case "retry": {
        if (outcome.kind === "retry" && attempt < this.#maxAttempts) {
          const delayMs = this.#backoffMs(attempt);
          const nextAttemptAt = new Date(Date.now() + delayMs).toISOString();
          await this.#storage.updateWebhook(delivery.delivery_id, {
            attempts: attempt,
            next_attempt_at: nextAttemptAt,
            last_error: outcome.error,
          });
          this.#stats.retried++;
          this.#logger.warn(
            { ...context, error: outcome.error, next_attempt_at: nextAttemptAt },
            "webhook attempt failed; will retry",
          );
          this.#wake(delayMs);
          return;
        }
        await this.#storage.updateWebhook(delivery.delivery_id, {
          attempts: attempt,
          state: "failed",
          last_error: outcome.error,
        });
        this.#stats.failed++;
        this.#logger.error({ ...context, error: outcome.error }, "webhook delivery failed");
        return;
      }
    }
  }

  /** Makes a claimed delivery due again now, attempts unchanged. */
  async #release(delivery: WebhookDelivery): Promise<void> {
    await this.#claims.settle(delivery.delivery_id);
    await this.#storage.updateWebhook(delivery.delivery_id, {
      next_attempt_at: new Date().toISOString(),
    });
  }

  #bookkeepingFailed(delivery: WebhookDelivery, err: unknown): void {
    void this.#claims.settle(delivery.delivery_id);
    if (isDomainError(err, "not_found")) {
      this.#logger.debug({ delivery_id: delivery.delivery_id }, "webhook delivery vanished");
      return;
    }
    this.#logger.error(
      { err, run_id: delivery.run_id, delivery_id: delivery.delivery_id, url: delivery.url },
      "webhook delivery bookkeeping failed",
    );
  }

  #backoffMs(attempt: number): number {
    const capped = Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** (attempt - 1));
    return Math.round(capped / 2 + (Math.random() * capped) / 2);
  }
}

async function withinMs(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([promise.then(() => true), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
