import type { RunFrame, RunRecord } from "../../storage/types.js";

/**
 * Those waiting for the end of a run executing here (`RunEngine.endOf`): a `wait` is answered
 * from the run as this replica records its segment's end, with no read of storage; and, when
 * that end's commit wrote all of the run's frames, a waiter that answers with the run's events
 * (an A2A task) gets them too (`framesOf`), not read back either.
 */
export class EndWaiters {
  private readonly byRun = new Map<string, Array<(run: RunRecord | undefined) => void>>();
  /** The frames of a run as its end was recorded, kept as long as that record is. */
  private readonly frames = new WeakMap<RunRecord, readonly RunFrame[]>();

  /** Resolves with the run as its end is recorded, or undefined when none is recorded here. */
  wait(runId: string): Promise<RunRecord | undefined> {
    return new Promise((resolve) => {
      const waiters = this.byRun.get(runId);
      if (waiters) waiters.push(resolve);
      else this.byRun.set(runId, [resolve]);
    });
  }

  /**
   * Tells the run's waiters how it ended (`undefined`: its execution here ended unrecorded);
   * `frames`: all of the run's frames, when its end's commit wrote every one of them.
   */
  settle(runId: string, ended: RunRecord | undefined, frames?: readonly RunFrame[]): void {
    const waiters = this.byRun.get(runId);
    if (waiters === undefined) return;
    this.byRun.delete(runId);
    if (ended !== undefined && frames !== undefined) this.frames.set(ended, frames);
    for (const resolve of waiters) resolve(ended);
  }

  /** All the frames of a run `wait` resolved with, when its end was written with all of them. */
  framesOf(ended: RunRecord): readonly RunFrame[] | undefined {
    return this.frames.get(ended);
  }
}
