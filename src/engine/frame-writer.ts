import type { RunFrame, Storage } from "../storage/types.js";
import type { FrameBus } from "./frame-bus.js";

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
  private pending: RunFrame[] = [];
  private pendingValues: (() => string) | null = null;
  private scheduled: NodeJS.Immediate | null = null;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly storage: Storage,
    private readonly bus: FrameBus,
    private readonly runId: string,
    lastSeq: number,
    private readonly maxBatch = 512,
  ) {
    this.seq = lastSeq;
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

  /** Stores everything so far, the final frame last, and waits for it to be durable. */
  async final(data: string): Promise<void> {
    this.takeValues();
    this.pending.push({ run_id: this.runId, seq: ++this.seq, mode: "final", data });
    await this.flush();
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

  get lastSeq(): number {
    return this.seq;
  }

  /** Writes what is buffered; resolves when it is stored and published. */
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
      this.flushing = this.flushing.then(async () => {
        await this.storage.appendFrames(batch);
        this.bus.publish(this.runId, batch);
      });
    }
    return this.flushing;
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
