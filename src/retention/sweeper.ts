import { setImmediate as nextTurn } from "node:timers/promises";
import type { Logger } from "pino";
import { noneRemoved, type RetentionBatch, type RetentionRemoved } from "../storage/retention.js";
import type { Storage } from "../storage/types.js";
import type { RetentionMetrics, RetentionRule } from "./metrics.js";
import type { RetentionSettings } from "./settings.js";

/** Pages one incremental vacuum step gives back (4 MB at SQLite's default 4 KB pages). */
const VACUUM_PAGES_PER_STEP = 1024;

export interface RetentionSweeperOptions {
  storage: Storage;
  settings: RetentionSettings;
  logger: Logger;
  metrics?: RetentionMetrics;
  /** The clock the retention ages are measured against (tests move it). */
  now?: () => Date;
}

/** What one sweep removed, per rule, and the file bytes SQLite gave back. */
export interface SweepReport {
  removed: Record<RetentionRule, RetentionRemoved>;
  /** Batches that found something to handle, all rules together. */
  batches: number;
  releasedFileBytes: number;
}

/**
 * Applies `server.retention` on a timer, off the request path: every `sweepInterval`, the runs
 * whose expiry has come are deleted (see RetentionStore.deleteExpiredRuns), then each rule
 * that is on runs in batches of `batchSize` (one short transaction each, with a turn of the event
 * loop between them so requests go on) until it has nothing left, then SQLite gives the freed
 * pages back. On PostgreSQL one replica sweeps at a time (an advisory lock); the others skip.
 * The timer is unref'd (it never keeps a process alive) and `stop()` waits for a sweep underway.
 */
export class RetentionSweeper {
  readonly #options: RetentionSweeperOptions;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<unknown> | null = null;
  #stopped = true;

  constructor(options: RetentionSweeperOptions) {
    this.#options = options;
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  /**
   * One sweep now; null when another replica holds the sweep lock. Throws what storage threw
   * (the timer logs it and tries again at the next interval).
   */
  async sweep(): Promise<SweepReport | null> {
    const { storage, settings, metrics } = this.#options;
    const started = performance.now();
    const report: SweepReport = {
      removed: {
        finishedStatelessRuns: noneRemoved(),
        frames: noneRemoved(),
        idleThreads: noneRemoved(),
        expiredRuns: noneRemoved(),
      },
      batches: 0,
      releasedFileBytes: 0,
    };
    const retention = storage.retention();
    const swept = await retention.exclusively(async () => {
      const cutoff = (seconds: number) =>
        new Date(this.#now().getTime() - seconds * 1000).toISOString();
      const { finishedStatelessRuns, frames, idleThreads, idleThreadStrategy, batchSize } =
        settings;
      // Runs given an expiry go at it, whatever the settings (none of them turns this off).
      const now = this.#now().toISOString();
      await this.#batches(report, "expiredRuns", () => retention.deleteExpiredRuns(now, batchSize));
      // Stateless runs first: what they take with them needs no compacting afterwards.
      if (finishedStatelessRuns !== null) {
        const before = cutoff(finishedStatelessRuns);
        await this.#batches(report, "finishedStatelessRuns", () =>
          retention.deleteFinishedStatelessRuns(before, batchSize),
        );
      }
      if (idleThreads !== null) {
        const before = cutoff(idleThreads);
        await this.#batches(report, "idleThreads", (cursor) =>
          retention.sweepIdleThreads(before, idleThreadStrategy, batchSize, cursor),
        );
      }
      if (frames !== null) {
        const before = cutoff(frames);
        await this.#batches(report, "frames", () =>
          retention.compactFinishedRunFrames(before, batchSize),
        );
      }
      while (!this.#isStopping()) {
        const released = await retention.reclaimSpace(VACUUM_PAGES_PER_STEP);
        report.releasedFileBytes += released;
        if (released === 0) break;
        await nextTurn();
      }
    });
    const seconds = (performance.now() - started) / 1000;
    if (!swept) {
      metrics?.sweep("skipped");
      return null;
    }
    metrics?.sweep("swept", seconds);
    metrics?.releasedFileBytes(report.releasedFileBytes);
    return report;
  }

  /** Runs one rule's batches until one comes back short (or the sweeper stops). */
  async #batches(
    report: SweepReport,
    rule: RetentionRule,
    batch: (cursor: string | undefined) => Promise<RetentionBatch>,
  ): Promise<void> {
    let cursor: string | undefined;
    for (;;) {
      const result = await batch(cursor);
      if (result.handled > 0) report.batches += 1;
      const total = report.removed[rule];
      for (const key of Object.keys(total) as (keyof RetentionRemoved)[]) {
        total[key] += result.removed[key];
      }
      this.#options.metrics?.removed(rule, result.removed);
      cursor = result.cursor;
      if (result.handled < this.#options.settings.batchSize || this.#isStopping()) return;
      // A turn of the event loop between batches: requests waiting for the database go first.
      await nextTurn();
    }
  }

  #isStopping(): boolean {
    // A sweep called directly (tests, maintenance) runs to the end; the timer's stops with it.
    return this.#stopped && this.#running !== null;
  }

  #now(): Date {
    return this.#options.now?.() ?? new Date();
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#running = this.#timedSweep().finally(() => {
        this.#running = null;
        this.#schedule();
      });
    }, this.#options.settings.sweepInterval * 1000);
    this.#timer.unref();
  }

  async #timedSweep(): Promise<void> {
    const { logger, metrics } = this.#options;
    try {
      const report = await this.sweep();
      if (report === null) {
        logger.debug("retention sweep skipped: another replica is sweeping");
        return;
      }
      const { finishedStatelessRuns, frames, idleThreads, expiredRuns } = report.removed;
      logger.debug(
        {
          batches: report.batches,
          stateless_runs: finishedStatelessRuns.runs,
          expired_runs: expiredRuns.runs,
          frames_compacted: frames.frames,
          idle_threads: idleThreads.threads,
          released_bytes: report.releasedFileBytes,
        },
        "retention sweep done",
      );
    } catch (err) {
      metrics?.sweep("failed");
      logger.warn({ err }, "retention sweep failed; trying again at the next interval");
    }
  }
}
