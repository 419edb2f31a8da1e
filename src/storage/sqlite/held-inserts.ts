import type { Fence, FinishRunWrites, RunPatch, RunRecord, ThreadOnFinish } from "../types.js";

/**
 * How long a held insert waits for its run's end at most (ms). A `wait` on the echo agent ends
 * within a few turns of the event loop; a longer run stores its first frames within the frame
 * writer's delay (50 ms), which releases its insert first anyway.
 */
export const HOLD_MS = 20;

/** A run's end, as `finishRun` was given it, merged into the run's held insert. */
export interface HeldEnd {
  patch: RunPatch;
  writes: FinishRunWrites | undefined;
}

/** Queues the held run's write: as inserted, or written once with its end. */
type StartWrite = (end: HeldEnd | undefined) => Promise<RunRecord>;

interface Held {
  record: RunRecord;
  committed: Promise<RunRecord>;
  timer: NodeJS.Timeout;
  start: (end: HeldEnd | undefined) => Promise<RunRecord>;
}

/**
 * The inserts held back for their run's end (see `Storage.insertRunHeld`). Until its insert is
 * queued, a held run does not exist for any reader. The first write that concerns the run (or
 * its hidden thread) queues the insert ahead of itself, so every write after the insert finds
 * the row as it always did; only the run's end, when it comes first, is merged into the insert.
 */
export class HeldInserts {
  readonly #byRun = new Map<string, Held>();
  /** Hidden thread id → run id. */
  readonly #byThread = new Map<string, string>();

  /**
   * Holds `record`'s insert; resolves with `record` once it is committed (rejects when its
   * write failed, which then wrote nothing).
   */
  hold(record: RunRecord, startWrite: StartWrite): Promise<RunRecord> {
    let settle!: (committed: Promise<RunRecord>) => void;
    const committed = new Promise<RunRecord>((resolve) => {
      settle = resolve;
    });
    const runId = record.run_id;
    const held: Held = {
      record,
      committed,
      timer: setTimeout(() => this.release(runId), HOLD_MS),
      start: (end) => {
        const written = startWrite(end);
        settle(written.then(() => record));
        return written;
      },
    };
    held.timer.unref();
    this.#byRun.set(runId, held);
    if (record.thread_id !== null) this.#byThread.set(record.thread_id, runId);
    return committed;
  }

  /** Queues the run's insert, if it is held, ahead of a write that concerns it. */
  release(runId: string): void {
    this.#take(runId)?.start(undefined);
  }

  /** `release` for the run whose hidden thread this is. */
  releaseThread(threadId: string): void {
    const runId = this.#byThread.get(threadId);
    if (runId !== undefined) this.release(runId);
  }

  /** Queues every held insert (the storage is closing). */
  releaseAll(): void {
    for (const runId of [...this.#byRun.keys()]) this.release(runId);
  }

  /**
   * The run's end, written with its held insert as one row when it can be: the end of the
   * execution its insert claimed (the same fence), deleting its hidden thread, with frames of
   * that run only. Resolves as `finishRun` does, after the insert's own promise. Undefined when
   * the run is not held or its end cannot be merged (then its insert has been queued).
   */
  end(
    runId: string,
    patch: RunPatch,
    thread: ThreadOnFinish,
    fence: Fence | undefined,
    writes: FinishRunWrites | undefined,
  ): Promise<RunRecord> | undefined {
    const held = this.#byRun.get(runId);
    if (held === undefined) return undefined;
    const { record } = held;
    const mergeable =
      "delete" in thread &&
      fence !== undefined &&
      fence.owner === record.owner &&
      fence.epoch === record.lease_epoch &&
      writes?.checkpoint === undefined &&
      (writes?.frames ?? []).every((frame) => frame.run_id === runId);
    if (!mergeable) {
      this.release(runId);
      return undefined;
    }
    this.#take(runId);
    const written = held.start({ patch, writes });
    // After the insert's own promise, whose creator awaited it first: the run's creation is
    // heard of (status hooks, its creator's answer) before its end.
    return held.committed.then(() => written);
  }

  #take(runId: string): Held | undefined {
    const held = this.#byRun.get(runId);
    if (held === undefined) return undefined;
    this.#byRun.delete(runId);
    if (held.record.thread_id !== null) this.#byThread.delete(held.record.thread_id);
    clearTimeout(held.timer);
    return held;
  }
}
