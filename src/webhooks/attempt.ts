import type { Agent } from "undici";
import {
  checkWebhookTarget,
  createPinnedLookup,
  findTargetRefusal,
  type ResolveHost,
} from "./target-guard.js";

export type Outcome =
  | { kind: "delivered"; status: number }
  | { kind: "retry"; error: string }
  | { kind: "refused"; error: string }
  | { kind: "aborted" };

export interface AttemptOptions {
  allowPrivateTargets: boolean;
  resolve: ResolveHost;
  /** Bound on the whole attempt: the target check, connecting, sending, the response's headers. */
  timeoutMs: number;
  /** Bound on opening the connection (the default client only). */
  connectTimeoutMs: number;
  /** Replaces the default client (see `WebhookDelivererOptions.fetch`). */
  fetch?: typeof fetch;
}

/**
 * Receivers (origins) one HTTP agent serves before it is replaced: undici's agent keeps a
 * connection pool (16 KB at least) for every origin it ever reached, so a server sending to
 * ever new receivers would grow without end. The old agent is closed once its requests end.
 */
const ORIGINS_PER_AGENT = 256;

const loadUndici = () => import("undici");

/** The reason an attempt's own timer aborts it with. */
class AttemptTimeout extends Error {
  constructor(readonly ms: number) {
    super(`timed out after ${ms} ms`);
  }
}

/**
 * One POST of a delivery at a time, each bounded by a timer the attempt itself holds: an
 * `AbortSignal.timeout` inside `AbortSignal.any` is dropped by a full garbage collection on
 * Node 20 (nodejs/node#57736), which left a hanging attempt to undici's 300 s headers timeout.
 * The default client's own connect, headers and body timeouts bound it too.
 */
export class WebhookClient {
  readonly #options: AttemptOptions;
  /** undici, imported at the first attempt (see `#send`). */
  #undici: ReturnType<typeof loadUndici> | null = null;
  #agent: Agent | null = null;
  /** The origins `#agent` has served. */
  #origins = new Set<string>();
  /** Agents replaced, closing once their requests end. */
  readonly #retired = new Set<Agent>();

  constructor(options: AttemptOptions) {
    this.#options = options;
  }

  /**
   * POSTs `body` to `url` with `headers`; `controller` aborts it early (shutdown), and the
   * attempt's timer aborts it at `timeoutMs`. Never throws: the outcome says what happened.
   */
  async attempt(
    url: string,
    headers: Record<string, string>,
    body: string,
    controller: AbortController,
  ): Promise<Outcome> {
    const { timeoutMs } = this.#options;
    const timer = setTimeout(() => controller.abort(new AttemptTimeout(timeoutMs)), timeoutMs);
    const { signal } = controller;
    try {
      // Again at every attempt: the target was checked at creation, but DNS answers change.
      await untilAborted(
        checkWebhookTarget(url, {
          allowPrivateTargets: this.#options.allowPrivateTargets,
          resolve: this.#options.resolve,
        }),
        signal,
      );
      const response = await this.#send(url, {
        method: "POST",
        headers,
        body,
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
      if (signal.aborted) {
        return signal.reason instanceof AttemptTimeout
          ? { kind: "retry", error: signal.reason.message }
          : { kind: "aborted" };
      }
      return { kind: "retry", error: describe(err) };
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    const agents = [...this.#retired, ...(this.#agent ? [this.#agent] : [])];
    this.#agent = null;
    this.#origins = new Set();
    this.#retired.clear();
    await Promise.all(agents.map((agent) => agent.destroy().catch(() => {})));
  }

  /**
   * Sends with the injected client, or undici's fetch over an agent whose connections resolve
   * host names through the SSRF guard. undici (about 2 MB of heap) is imported at the first
   * attempt, not at start-up: most servers never send a webhook.
   */
  async #send(url: string, init: RequestInit): Promise<Response> {
    if (this.#options.fetch !== undefined) return this.#options.fetch(url, init);
    this.#undici ??= loadUndici();
    const undici = await this.#undici;
    const origin = new URL(url).origin;
    if (this.#agent === null || !this.#origins.has(origin)) {
      if (this.#agent === null || this.#origins.size >= ORIGINS_PER_AGENT)
        this.#replaceAgent(undici);
      this.#origins.add(origin);
    }
    const dispatcher = this.#agent!;
    return undici.fetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>;
  }

  #replaceAgent(undici: Awaited<ReturnType<typeof loadUndici>>): void {
    const old = this.#agent;
    if (old !== null) {
      this.#retired.add(old);
      void old.close().then(
        () => this.#retired.delete(old),
        () => this.#retired.delete(old),
      );
    }
    const { allowPrivateTargets, resolve, timeoutMs, connectTimeoutMs } = this.#options;
    this.#agent = new undici.Agent({
      connect: {
        lookup: createPinnedLookup({ allowPrivateTargets, resolve }),
        timeout: Math.min(connectTimeoutMs, timeoutMs),
      },
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    this.#origins = new Set();
  }
}

/** `promise`, or a rejection with the signal's reason once it aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? err.cause : null;
  if (cause === null) return err.message;
  const code = (cause as NodeJS.ErrnoException).code;
  return `${err.message}: ${code === undefined ? cause.message : `${code} ${cause.message}`}`;
}
