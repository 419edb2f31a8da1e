import type { StopReason } from "../executor.js";
import type { LazyAbortController } from "./lazy-abort.js";

/** A run executing on this replica. */
export interface Execution {
  controller: LazyAbortController;
  done: Promise<void>;
  agentId: string;
  /** When the lease this replica last wrote for the run ends (ms since the epoch). */
  leaseEnds: number;
}

/**
 * The runs executing on this replica, and how they are stopped: one at a time (a cancel, a
 * lost claim) or all at once (shutdown). Each run's LazyAbortController is reached only here.
 */
export class Executions {
  private readonly byRun = new Map<string, Execution>();

  get size(): number {
    return this.byRun.size;
  }

  has(runId: string): boolean {
    return this.byRun.has(runId);
  }

  get(runId: string): Execution | undefined {
    return this.byRun.get(runId);
  }

  add(runId: string, execution: Execution): void {
    this.byRun.set(runId, execution);
  }

  delete(runId: string): void {
    this.byRun.delete(runId);
  }

  runIds(): string[] {
    return [...this.byRun.keys()];
  }

  values(): IterableIterator<Execution> {
    return this.byRun.values();
  }

  entries(): IterableIterator<[string, Execution]> {
    return this.byRun.entries();
  }

  /** Aborts a run executing here; resolves when it has stopped. False if not here. */
  async abort(runId: string, reason: StopReason): Promise<boolean> {
    const execution = this.byRun.get(runId);
    if (!execution) return false;
    execution.controller.abort(reason);
    await execution.done;
    return true;
  }

  /** Waits for a run's execution here to finish (at once when it does not execute here). */
  async settled(runId: string): Promise<void> {
    await this.byRun.get(runId)?.done;
  }

  /** Resolves when every execution under way now has finished, however it ended. */
  allDone(): Promise<unknown> {
    return Promise.allSettled([...this.byRun.values()].map((e) => e.done));
  }

  /** Aborts every run executing here with `reason`, without waiting. */
  abortAll(reason: StopReason): void {
    for (const execution of this.byRun.values()) execution.controller.abort(reason);
  }
}
