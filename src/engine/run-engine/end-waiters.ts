import type { RunRecord } from "../../storage/types.js";

/**
 * Those waiting for the end of a run executing here (`RunEngine.endOf`): a `wait` is answered
 * from the run as this replica records its segment's end, with no read of storage.
 */
export class EndWaiters {
  private readonly byRun = new Map<string, Array<(run: RunRecord | undefined) => void>>();

  /** Resolves with the run as its end is recorded, or undefined when none is recorded here. */
  wait(runId: string): Promise<RunRecord | undefined> {
    return new Promise((resolve) => {
      const waiters = this.byRun.get(runId);
      if (waiters) waiters.push(resolve);
      else this.byRun.set(runId, [resolve]);
    });
  }

  /** Tells the run's waiters how it ended (`undefined`: its execution here ended unrecorded). */
  settle(runId: string, ended: RunRecord | undefined): void {
    const waiters = this.byRun.get(runId);
    if (waiters === undefined) return;
    this.byRun.delete(runId);
    for (const resolve of waiters) resolve(ended);
  }
}
