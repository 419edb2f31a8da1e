import { isClaimLost } from "../../errors.js";
import type { Fence, RunFrame, Storage } from "../../storage/types.js";
import type { FrameBus } from "../frame-bus.js";

/**
 * Numbers a run's frames, stores them in batches and then publishes them.
 *
 * Events arrive faster than a database transaction per event allows, so frames are buffered
 * and written once per turn of the event loop (or every `maxBatch` frames). A batch carries at
 * most one `values` frame, rendered last: each values frame replaces the previous in full, so
 * coalescing loses nothing a client needs, and the last one is never dropped.
 */
export class FrameWriter {
  private seq: number;
  /** The newest frame stored, so published: where the numbering goes on after a failure. */
  private storedSeq: number;
  private pending: RunFrame[] = [];
  private pendingValues: (() => string) | null = null;
  /** Frames handed to storage and not yet stored. */
  private inFlight = 0;
  private scheduled: NodeJS.Immediate | null = null;
  private flushing: Promise<void> = Promise.resolve();
  private failed: Error | undefined;
  private finalStored = false;
  private failureListener: ((err: Error) => void) | undefined;

  constructor(
    private readonly storage: Storage,
    private readonly bus: FrameBus,
    private readonly runId: string,
    lastSeq: number,
    private readonly maxBatch = 512,
    /** The claim the frames are written under (see `Fence`); none for a run not executing here. */
    readonly fence?: Fence,
  ) {
    this.seq = lastSeq;
    this.storedSeq = lastSeq;
  }

  /**
   * The first write that failed, if one did. From then on frames are neither stored nor
   * published (they would leave a hole in the run's log); only the final frame is still tried,
   * numbered right after the last one stored, and published even if it cannot be stored, so
   * that clients following the run learn how it ended. A write refused because the run's claim
   * passed to another replica (`isClaimLost`) stops everything, the final frame included: the
   * run's log and its end are the other replica's to write and publish.
   */
  get failure(): Error | undefined {
    return this.failed;
  }

  /** Called once, with the first failed write (the executor stops the agent then). */
  onFailure(listener: (err: Error) => void): void {
    this.failureListener = listener;
  }

  custom(data: string, mode: "custom" | "subagent" = "custom"): void {
    this.pending.push({ run_id: this.runId, seq: ++this.seq, mode, data });
    this.schedule();
  }

  /**
   * Marks values as changed. The frame is rendered once, at the end of the batch, after the
   * batch's custom frames: a batch carries at most one values frame, the newest.
   */
  values(render: () => string): void {
    this.pendingValues = render;
    this.schedule();
  }

  /**
   * Stores everything so far, the final frame last, and waits for it. False when the final
   * frame could not be stored (it was published all the same).
   */
  async final(data: string): Promise<boolean> {
    this.takeValues();
    this.pending.push({ run_id: this.runId, seq: ++this.seq, mode: "final", data });
    await this.flush();
    return this.finalStored;
  }

  /**
   * Publishes the final frame without storing it, after everything before it is stored: for a
   * run that is deleted (rolled back), whose frames went with it, so that clients following it
   * live still learn how it ended.
   */
  async publishFinal(data: string): Promise<void> {
    await this.flush();
    this.bus.publish(this.runId, [{ run_id: this.runId, seq: ++this.seq, mode: "final", data }]);
  }

  /**
   * Resolves when the frames handed to storage are stored, if they are a full batch or more;
   * `undefined` while there is room. An agent faster than the database is made to wait here
   * (its frames would otherwise pile up in memory, and an agent that never waits on a timer
   * would keep the event loop, and the database's commits, from running at all).
   */
  backlog(): Promise<void> | undefined {
    return this.inFlight >= this.maxBatch ? this.flushing : undefined;
  }

  get lastSeq(): number {
    return this.seq;
  }

  /**
   * Writes what is buffered; resolves when it is stored and published. Never rejects: a failed
   * write is kept in `failure` (a rejection nobody awaits would end the process).
   */
  flush(): Promise<void> {
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = null;
    }
    this.takeValues();
    const batch = this.pending;
    this.pending = [];
    if (batch.length > 0) {
      // Chained so batches reach storage and listeners in order.
      this.inFlight += batch.length;
      this.flushing = this.flushing
        .then(() => this.store(batch))
        .finally(() => {
          this.inFlight -= batch.length;
        });
    }
    return this.flushing;
  }

  /** True once a write was refused because another replica took the run over. */
  get claimLost(): boolean {
    return isClaimLost(this.failed);
  }

  private async store(frames: RunFrame[]): Promise<void> {
    if (this.claimLost) return;
    let batch = this.failed ? this.finalOnly(frames) : frames;
    if (batch.length === 0) return;
    try {
      await this.storage.appendFrames(batch, this.fence);
      this.storedSeq = batch[batch.length - 1]!.seq;
      if (batch[batch.length - 1]!.mode === "final") this.finalStored = true;
    } catch (err) {
      const first = this.failed === undefined;
      this.failed ??= err instanceof Error ? err : new Error(String(err));
      this.seq = this.storedSeq;
      if (first) this.failureListener?.(this.failed);
      if (this.claimLost) return;
      batch = this.finalOnly(batch);
      if (batch.length === 0) return;
    }
    this.bus.publish(this.runId, batch);
  }

  /** The batch's final frame, numbered right after the last frame stored (or nothing). */
  private finalOnly(batch: RunFrame[]): RunFrame[] {
    const final = batch.find((frame) => frame.mode === "final");
    if (final === undefined) return [];
    this.seq = this.storedSeq + 1;
    return [{ ...final, seq: this.seq }];
  }

  private takeValues(): void {
    if (this.pendingValues === null) return;
    this.pending.push({
      run_id: this.runId,
      seq: ++this.seq,
      mode: "values",
      data: this.pendingValues(),
    });
    this.pendingValues = null;
  }

  private schedule(): void {
    if (this.pending.length >= this.maxBatch) {
      void this.flush();
      return;
    }
    this.scheduled ??= setImmediate(() => {
      this.scheduled = null;
      void this.flush();
    });
  }
}
