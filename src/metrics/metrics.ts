import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** What the metrics read when scraped (gauges are computed then, not kept up to date). */
export interface MetricsSources {
  /** Per agent name: runs pending in storage (executing anywhere or queued), executing here. */
  runQueues(): Promise<Array<{ agent: string; pending: number; executing: number }>>;
  openStreams(): number;
  webhooks(): { delivered: number; retried: number; failed: number };
  /** The storage's running totals (Storage.writeCounts) and its backend name. */
  storageWrites?(): StorageTotals;
}

export interface StorageTotals {
  backend: string;
  commits: number;
  statements: Record<string, number>;
  giveUps: Record<string, number>;
}

/** Why the engine rejected an event an adapter yielded (see `EngineEventOutcome`). */
export type RejectReason = "dropped" | "invalid" | "limit";

const RUN_SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 1800];
const HTTP_SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Default Node process metrics (CPU, memory, event loop lag, GC), one set per process: they
 * describe the process, and collecting them starts observers that should exist only once.
 */
let processRegistry: Registry | undefined;
function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry });
  }
  return processRegistry;
}

/**
 * The server's Prometheus metrics, in a registry of its own per app (so apps built in one
 * process, as tests do, never share counters), merged with the process metrics when scraped.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly runs: Counter<"agent" | "status">;
  private readonly created: Counter<"agent">;
  private readonly duration: Histogram<"agent" | "status">;
  private readonly rejected: Counter<"agent" | "reason">;
  private readonly deviations: Counter<"agent">;
  private readonly http: Histogram<"method" | "route" | "status">;
  /**
   * Per agent, the events counted so far: the counter reads them when scraped. A prom-client
   * `inc()` per event (a label hash and a lookup by it each time) was a visible share of a
   * fast stream's CPU.
   */
  private readonly eventCounts = new Map<string, { events: number }>();

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    // Both run gauges read the same queues: one storage read per scrape.
    let queues: { at: number; read: ReturnType<MetricsSources["runQueues"]> } | undefined;
    const runQueues = () => {
      if (!queues || Date.now() - queues.at > 1000) {
        queues = { at: Date.now(), read: sources.runQueues() };
      }
      return queues.read;
    };
    this.created = new Counter({
      name: "acp_runs_created_total",
      help: "Runs created, by agent",
      labelNames: ["agent"],
      registers,
    });
    this.runs = new Counter({
      name: "acp_runs_total",
      help: "Runs that stopped, by agent and status (a resumed run counts again when it stops)",
      labelNames: ["agent", "status"],
      registers,
    });
    this.duration = new Histogram({
      name: "acp_run_duration_seconds",
      help: "Execution time of a run segment (a start or a resume), by agent and status",
      labelNames: ["agent", "status"],
      buckets: RUN_SECONDS,
      registers,
    });
    const eventCounts = this.eventCounts;
    new Counter({
      name: "acp_agui_events_total",
      help: "AG-UI events the adapters yielded, by agent",
      labelNames: ["agent"],
      registers,
      collect() {
        this.reset();
        for (const [agent, count] of eventCounts) this.inc({ agent }, count.events);
      },
    });
    this.rejected = new Counter({
      name: "acp_agui_events_rejected_total",
      help: "AG-UI events rejected, by agent and reason: dropped (not an event, or an unknown type), invalid (broke the schema or the event order: the run fails), limit (over maxEventsPerRun)",
      labelNames: ["agent", "reason"],
      registers,
    });
    this.deviations = new Counter({
      name: "acp_agui_deviations_total",
      help: "Deviations from AG-UI the server handled for an agent (a field stripped, an event dropped or converted, an id mapped): each kind is logged once per agent, every one is counted here",
      labelNames: ["agent"],
      registers,
    });
    this.http = new Histogram({
      name: "acp_http_request_duration_seconds",
      help: "HTTP request latency by method, route template and status (streams excluded)",
      labelNames: ["method", "route", "status"],
      buckets: HTTP_SECONDS,
      registers,
    });
    new Gauge({
      name: "acp_runs_pending",
      help: "Runs pending in storage (executing or queued), by agent",
      labelNames: ["agent"],
      registers,
      async collect() {
        this.reset();
        for (const queue of await runQueues()) this.set({ agent: queue.agent }, queue.pending);
      },
    });
    new Gauge({
      name: "acp_runs_executing",
      help: "Runs executing on this server, by agent",
      labelNames: ["agent"],
      registers,
      async collect() {
        this.reset();
        for (const queue of await runQueues()) {
          this.set({ agent: queue.agent }, queue.executing);
        }
      },
    });
    new Gauge({
      name: "acp_open_streams",
      help: "SSE and AG-UI streams open now",
      registers,
      collect() {
        this.set(sources.openStreams());
      },
    });
    new Counter({
      name: "acp_webhook_deliveries_total",
      help: "Webhook delivery attempts by result: delivered, retried (an attempt failed, another follows), failed (gave up)",
      labelNames: ["result"],
      registers,
      collect() {
        const stats = sources.webhooks();
        this.reset();
        for (const result of ["delivered", "retried", "failed"] as const) {
          this.inc({ result }, stats[result]);
        }
      },
    });
    const storageWrites = sources.storageWrites;
    if (storageWrites) {
      new Counter({
        name: "acp_storage_commits_total",
        help: "Transactions the storage committed that changed rows (an autocommit write statement is one), by backend",
        labelNames: ["backend"],
        registers,
        collect() {
          const counts = storageWrites();
          this.reset();
          this.inc({ backend: counts.backend }, counts.commits);
        },
      });
      /** A counter read from the storage's totals at each scrape: one sample per `label` value. */
      const storageCounter = (
        name: string,
        help: string,
        label: string,
        samples: (counts: StorageTotals) => Record<string, number>,
      ) =>
        new Counter({
          name,
          help,
          labelNames: ["backend", label],
          registers,
          collect() {
            const counts = storageWrites();
            this.reset();
            for (const [value, n] of Object.entries(samples(counts))) {
              this.inc({ backend: counts.backend, [label]: value }, n);
            }
          },
        });
      storageCounter(
        "acp_storage_statements_total",
        "Statements the storage ran, by backend and kind (select, insert, update, delete, other); transaction control (BEGIN, COMMIT, SAVEPOINT, SET) is not counted",
        "kind",
        (counts) => counts.statements,
      );
      storageCounter(
        "acp_storage_write_give_ups_total",
        "Writes a PostgreSQL group commit gave up on and ran alone, by backend and reason (lock_timeout, deadlock, serialization); a steady rise means replicas contend for the same rows",
        "reason",
        (counts) => counts.giveUps,
      );
    }
  }

  runCreated(agent: string): void {
    this.created.inc({ agent });
  }

  /** A run stopped with `status`; `seconds` is how long its last segment executed, if it ran. */
  runStopped(agent: string, status: string, seconds: number | undefined): void {
    this.runs.inc({ agent, status });
    if (seconds !== undefined) this.duration.observe({ agent, status }, seconds);
  }

  event(agent: string, rejected?: RejectReason): void {
    const count = this.eventCounts.get(agent);
    if (count) count.events++;
    else this.eventCounts.set(agent, { events: 1 });
    if (rejected) this.rejected.inc({ agent, reason: rejected });
  }

  /** The server handled a deviation of the agent's (see engine/agent-deviations.ts). */
  deviation(agent: string): void {
    this.deviations.inc({ agent });
  }

  httpRequest(method: string, route: string, status: number, seconds: number): void {
    this.http.observe({ method, route, status: String(status) }, seconds);
  }

  /** The Prometheus text exposition of this app's metrics and the process metrics. */
  async render(): Promise<{ contentType: string; body: string }> {
    const merged = Registry.merge([processMetrics(), this.registry]);
    return { contentType: merged.contentType, body: await merged.metrics() };
  }
}
