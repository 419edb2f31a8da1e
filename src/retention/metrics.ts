import { Counter, Histogram, type Registry } from "prom-client";
import type { RetentionRemoved } from "../storage/retention.js";

/**
 * Which rule removed something: the settings' names, and `expiredRuns` for runs deleted at the
 * expiry they were given (an MCP task's ttl), which needs no setting.
 */
export type RetentionRule = "finishedStatelessRuns" | "frames" | "idleThreads" | "expiredRuns";

const SWEEP_SECONDS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const KINDS = ["runs", "threads", "checkpoints", "frames"] as const;

/** The retention sweeps' Prometheus metrics, registered in the app's registry. */
export class RetentionMetrics {
  private readonly rows: Counter<"rule" | "kind">;
  private readonly bytes: Counter<"rule">;
  private readonly released: Counter;
  private readonly sweeps: Counter<"result">;
  private readonly duration: Histogram;

  constructor(registry: Registry) {
    const registers = [registry];
    this.rows = new Counter({
      name: "acp_retention_rows_removed_total",
      help: "Rows the retention sweeps removed, by rule and kind (runs, threads, checkpoints, frames)",
      labelNames: ["rule", "kind"],
      registers,
    });
    this.bytes = new Counter({
      name: "acp_retention_bytes_removed_total",
      help: "Stored JSON text of the frames and checkpoints the retention sweeps removed, by rule (rows and indexes come on top)",
      labelNames: ["rule"],
      registers,
    });
    this.released = new Counter({
      name: "acp_retention_file_bytes_released_total",
      help: "Bytes the SQLite database file gave back to the file system after sweeps (incremental vacuum)",
      registers,
    });
    this.sweeps = new Counter({
      name: "acp_retention_sweeps_total",
      help: "Retention sweeps by result: swept, skipped (another replica was sweeping), failed",
      labelNames: ["result"],
      registers,
    });
    this.duration = new Histogram({
      name: "acp_retention_sweep_duration_seconds",
      help: "Wall-clock time of a retention sweep, all its batches included",
      buckets: SWEEP_SECONDS,
      registers,
    });
  }

  removed(rule: RetentionRule, removed: RetentionRemoved): void {
    for (const kind of KINDS) {
      if (removed[kind] > 0) this.rows.inc({ rule, kind }, removed[kind]);
    }
    if (removed.bytes > 0) this.bytes.inc({ rule }, removed.bytes);
  }

  releasedFileBytes(bytes: number): void {
    if (bytes > 0) this.released.inc(bytes);
  }

  sweep(result: "swept" | "skipped" | "failed", seconds?: number): void {
    this.sweeps.inc({ result });
    if (seconds !== undefined) this.duration.observe(seconds);
  }
}
