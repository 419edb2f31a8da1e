import { randomUUID } from "node:crypto";
import type { Logger } from "pino";
import type { Agent } from "undici";
import type { Storage, WebhookDelivery } from "../storage/types.js";
import { storedTraceHeaders, tracing } from "../telemetry/index.js";
import { isDomainError } from "../util/errors.js";
import {
  checkWebhookTarget,
  createPinnedLookup,
  findTargetRefusal,
  type ResolveHost,
  systemResolve,
} from "./target-guard.js";

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
  /** Bound on one POST, response headers included. Default 10 000. */
  timeoutMs?: number;
  /** How often storage is polled for due deliveries (retries, other replicas' work). Default 1000. */
  pollIntervalMs?: number;
  /**
   * How long a claimed delivery stays hidden from other claims (other replicas) without
   * renewal. Default 2 · timeoutMs + 30 s. The deliverer renews its claims every third of it
   * until it has settled them, so a live replica keeps them however long its attempts take,
   * and a replica that dies gives them up within about this long (then they are sent again:
   * at least once, with the same `x-acp-delivery-id`). Until then, the later deliveries of
   * the same run wait behind them (see the ordering below).
   */
  leaseMs?: number;
  /** Most deliveries in flight at once. Default 16. */
  concurrency?: number;
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

type Outcome =
  | { kind: "delivered"; status: number }
  | { kind: "retry"; error: string }
  | { kind: "refused"; error: string }
  | { kind: "aborted" };

const EVENT = "run.status_changed";

/**
 * Delivers ACP run webhooks: the engine calls `enqueue` on every run status change; a loop
 * POSTs each stored delivery until a 2xx, with exponential backoff, then gives up after
 * `maxAttempts`. Deliveries live in storage (an outbox), so a restart or another replica picks
 * up what this one did not finish.
 *
 * Ordering per run: a delivery is sent only when no earlier delivery of the same run (by
 * `created_at`, then storage order) is still pending. A held-back delivery is pushed out by one
 * poll interval, without counting an attempt, and checked again then. So a receiver never sees
 * `success` before the `pending` that preceded it, unless the earlier one finally failed. The
 * check reads storage, so it holds across replicas too. Within one claimed batch, a run's
 * deliveries go one after another; different runs go in parallel.
 */
export class WebhookDeliverer {
  readonly #storage: Storage;
  readonly #logger: Logger;
  readonly #allowPrivateTargets: boolean;
  readonly #maxAttempts: number;
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #timeoutMs: number;
  readonly #pollIntervalMs: number;
  readonly #leaseMs: number;
  readonly #concurrency: number;
  readonly #stopTimeoutMs: number;
  readonly #resolve: ResolveHost;
  readonly #injectedFetch: typeof fetch | undefined;

  /** The default client, made at the first attempt (see `#client`). */
  #http: Promise<{ agent: Agent; fetch: typeof fetch }> | null = null;
  #running = false;
  #timer: NodeJS.Timeout | null = null;
  #timerAt = Number.POSITIVE_INFINITY;
  #ticking: Promise<void> | null = null;
  #tickAgain = false;
  #inFlight = 0;
  readonly #chains = new Set<Promise<void>>();
  #abort = new AbortController();
  #lastCreatedAt = 0;
  /** The deliveries claimed and not yet settled, each with its renewal in flight (if any). */
  readonly #held = new Map<string, Promise<void> | null>();
  #renewer: NodeJS.Timeout | null = null;
  readonly #stats: WebhookStats = { delivered: 0, retried: 0, failed: 0 };

  constructor(options: WebhookDelivererOptions) {
    this.#storage = options.storage;
    this.#logger = options.logger;
    this.#allowPrivateTargets = options.allowPrivateTargets;
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.#baseDelayMs = options.baseDelayMs ?? 1000;
    this.#maxDelayMs = options.maxDelayMs ?? 60_000;
    this.#timeoutMs = options.timeoutMs ?? 10_000;
    this.#pollIntervalMs = options.pollIntervalMs ?? 1000;
    this.#leaseMs = options.leaseMs ?? 2 * this.#timeoutMs + 30_000;
    this.#concurrency = Math.max(1, options.concurrency ?? 16);
    this.#stopTimeoutMs = options.stopTimeoutMs ?? this.#timeoutMs;
    this.#resolve = options.resolve ?? systemResolve;
    this.#injectedFetch = options.fetch;
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
   */
  delivery(
    runId: string,
    url: string,
    body: unknown,
    headers?: Record<string, string>,
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
    };
  }

  /** Deliveries were stored: send them now rather than at the next poll. */
  wake(): void {
    this.#wake(0);
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#abort = new AbortController();
    this.#renewer = setInterval(() => this.#renew(), Math.max(100, this.#leaseMs / 3));
    this.#renewer.unref();
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
      await Promise.allSettled([...this.#chains]);
    };
    if (!(await withinMs(settled(), this.#stopTimeoutMs))) {
      this.#abort.abort(new Error("webhook deliverer stopping"));
      await withinMs(settled(), 1000);
    }
    // Claims are renewed until the attempts in flight are over, so no other replica sends
    // them meanwhile.
    if (this.#renewer !== null) clearInterval(this.#renewer);
    this.#renewer = null;
    const http = this.#http;
    this.#http = null;
    if (http !== null) await http.then(({ agent }) => agent.destroy()).catch(() => {});
  }

  stats(): WebhookStats {
    return { ...this.#stats };
  }

  /**
   * The HTTP client: the injected one, or undici's fetch over an agent whose connections resolve
   * host names through the SSRF guard. undici (about 2 MB of heap) is imported at the first
   * attempt, not at start-up: most servers never send a webhook.
   */
  async #client(): Promise<typeof fetch> {
    if (this.#injectedFetch !== undefined) return this.#injectedFetch;
    this.#http ??= import("undici").then(({ Agent, fetch: undiciFetch }) => {
      const agent = new Agent({
        connect: {
          lookup: createPinnedLookup({
            allowPrivateTargets: this.#allowPrivateTargets,
            resolve: this.#resolve,
          }),
        },
      });
      const send = ((input: string, init: RequestInit) =>
        undiciFetch(input, { ...(init as object), dispatcher: agent })) as unknown as typeof fetch;
      return { agent, fetch: send };
    });
    return (await this.#http).fetch;
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
        const room = this.#concurrency - this.#inFlight;
        if (room <= 0) return;
        const batch = await this.#storage.claimDueWebhooks(new Date(), this.#leaseMs, room);
        this.#dispatch(batch);
        if (batch.length === room) this.#tickAgain = true;
      } while (this.#tickAgain && this.#running);
    } catch (err) {
      this.#logger.error({ err }, "webhook claim failed");
    }
  }

  #dispatch(batch: WebhookDelivery[]): void {
    const byRun = new Map<string, WebhookDelivery[]>();
    for (const delivery of batch) {
      const group = byRun.get(delivery.run_id) ?? [];
      group.push(delivery);
      byRun.set(delivery.run_id, group);
    }
    for (const delivery of batch) this.#held.set(delivery.delivery_id, null);
    for (const group of byRun.values()) {
      group.sort((a, b) => a.created_at.localeCompare(b.created_at));
      this.#inFlight += group.length;
      const chain = this.#runGroup(group).finally(() => {
        this.#chains.delete(chain);
        this.#wake(0);
      });
      this.#chains.add(chain);
    }
  }

  async #runGroup(group: WebhookDelivery[]): Promise<void> {
    for (const delivery of group) {
      try {
        if (this.#running) await this.#process(delivery);
        else await this.#release(delivery);
      } catch (err) {
        if (isDomainError(err, "not_found")) {
          this.#logger.debug({ delivery_id: delivery.delivery_id }, "webhook delivery vanished");
        } else {
          this.#logger.error(
            { err, run_id: delivery.run_id, delivery_id: delivery.delivery_id, url: delivery.url },
            "webhook delivery bookkeeping failed",
          );
        }
      } finally {
        this.#held.delete(delivery.delivery_id);
        this.#inFlight--;
      }
    }
  }

  async #process(delivery: WebhookDelivery): Promise<void> {
    if (await this.#heldBack(delivery)) return;
    const attempt = delivery.attempts + 1;
    const outcome = await this.#attempt(delivery);
    await this.#settle(delivery);
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

  /** True (and the delivery pushed out one poll interval) while an earlier one of its run is pending. */
  async #heldBack(delivery: WebhookDelivery): Promise<boolean> {
    const ofRun = await this.#storage.getWebhooksOfRun(delivery.run_id);
    ofRun.sort((a, b) => a.created_at.localeCompare(b.created_at));
    const index = ofRun.findIndex((d) => d.delivery_id === delivery.delivery_id);
    if (index === -1) return true; // deleted with its run meanwhile
    if (!ofRun.slice(0, index).some((d) => d.state === "pending")) return false;
    await this.#settle(delivery);
    const nextAttemptAt = new Date(Date.now() + this.#pollIntervalMs).toISOString();
    await this.#storage.updateWebhook(delivery.delivery_id, { next_attempt_at: nextAttemptAt });
    this.#logger.debug(
      { run_id: delivery.run_id, delivery_id: delivery.delivery_id },
      "webhook held back behind an earlier delivery of its run",
    );
    return true;
  }

  /** Makes a claimed delivery due again now, attempts unchanged. */
  async #release(delivery: WebhookDelivery): Promise<void> {
    await this.#settle(delivery);
    await this.#storage.updateWebhook(delivery.delivery_id, {
      next_attempt_at: new Date().toISOString(),
    });
  }

  /**
   * Pushes out the claims this deliverer holds by another lease, so that no other replica
   * takes them while they wait in their run's group or their attempt is in flight.
   */
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

  /** Ends the renewal of a claim before its own bookkeeping writes `next_attempt_at`. */
  async #settle(delivery: WebhookDelivery): Promise<void> {
    const renewing = this.#held.get(delivery.delivery_id);
    this.#held.delete(delivery.delivery_id);
    await renewing;
  }

  async #attempt(delivery: WebhookDelivery): Promise<Outcome> {
    const signal = AbortSignal.any([AbortSignal.timeout(this.#timeoutMs), this.#abort.signal]);
    try {
      // Again at every attempt: the run was checked at creation, but DNS answers change.
      await checkWebhookTarget(delivery.url, {
        allowPrivateTargets: this.#allowPrivateTargets,
        resolve: this.#resolve,
      });
      const send = await this.#client();
      // Tracing on: the delivery carries its run's trace context (the request that created it).
      const run = tracing() && (await this.#storage.getRun(delivery.run_id));
      const response = await send(delivery.url, {
        method: "POST",
        headers: {
          "x-acp-event": EVENT,
          ...delivery.headers,
          "content-type": "application/json",
          "x-acp-delivery-id": delivery.delivery_id,
          ...storedTraceHeaders(run ? run.trace_context : null),
        },
        body: delivery.body,
        // A redirect could point anywhere, including past the guard: never follow one.
        redirect: "manual",
        signal,
      });
      // The body is not used; drop it so the connection is freed.
      await response.body?.cancel().catch(() => {});
      if (response.status >= 200 && response.status < 300) {
        return { kind: "delivered", status: response.status };
      }
      if (response.status >= 300 && response.status < 400) {
        const location = response.headers.get("location") ?? "(no location)";
        return {
          kind: "retry",
          error: `HTTP ${response.status} redirect to ${location} not followed (webhook redirects are refused)`,
        };
      }
      return { kind: "retry", error: `HTTP ${response.status}` };
    } catch (err) {
      const refusal = findTargetRefusal(err);
      if (refusal !== null) return { kind: "refused", error: refusal.message };
      if (this.#abort.signal.aborted) return { kind: "aborted" };
      if (signal.aborted) return { kind: "retry", error: `timed out after ${this.#timeoutMs} ms` };
      return { kind: "retry", error: describe(err) };
    }
  }

  #backoffMs(attempt: number): number {
    const capped = Math.min(this.#maxDelayMs, this.#baseDelayMs * 2 ** (attempt - 1));
    return Math.round(capped / 2 + (Math.random() * capped) / 2);
  }
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause : null;
  if (cause === null) return err.message;
  const code = (cause as NodeJS.ErrnoException).code;
  return `${err.message}: ${code === undefined ? cause.message : `${code} ${cause.message}`}`;
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
