import type { RunFrame, RunRecord } from "../../storage/types.js";

/**
 * All of a run's frames as its end wrote them (every one of them in that commit, none before),
 * handed to a waiter on the replica that executed it: what the run said, with no read of it.
 */
export interface EndFrames {
  frames?: readonly RunFrame[];
}

/**
 * Those waiting for the end of a run executing here (`RunEngine.endOf`): a `wait` is answered
 * from the run as this replica records its segment's end, with no read of storage; and, when
 * that end's commit wrote all of the run's frames, a waiter that answers with the run's events
 * (an A2A task) is handed them too (`EndFrames`), not read back either.
 */
export class EndWaiters {
  private readonly byRun = new Map<string, Array<(run: RunRecord | undefined) => void>>();
  /** The waiters that take the run's frames as well, by run. */
  private readonly framesTakers = new Map<string, EndFrames[]>();

  /** Resolves with the run as its end is recorded, or undefined when none is recorded here. */
  wait(runId: string, frames?: EndFrames): Promise<RunRecord | undefined> {
    if (frames !== undefined) {
      const takers = this.framesTakers.get(runId);
      if (takers) takers.push(frames);
      else this.framesTakers.set(runId, [frames]);
    }
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
    const takers = this.framesTakers.get(runId);
    if (takers !== undefined) {
      this.framesTakers.delete(runId);
      if (ended !== undefined && frames !== undefined)
        for (const taker of takers) taker.frames = frames;
    }
    const waiters = this.byRun.get(runId);
    if (waiters === undefined) return;
    this.byRun.delete(runId);
    for (const resolve of waiters) resolve(ended);
  }
}
