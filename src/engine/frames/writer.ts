import type { Fence, RunFrame, Storage } from "../../storage/types.js";
import { isClaimLost } from "../../util/errors.js";
import type { FrameBus } from "../frame-bus.js";
import type { LiveTails } from "./live-tails.js";

export interface FrameWriterOptions {
  /** Frames that may wait for storage at once; an agent producing more waits for a commit. */
  maxBatch?: number;
  /**
   * The longest a published frame waits before it is handed to storage (ms). Readers on other
   * replicas and late joiners read storage, so this bounds how far behind they are; followers
   * on this replica are fed from memory and never wait for it.
   */
  storeDelayMs?: number;
  /** The claim the frames are written under (see `Fence`); none for a run not executing here. */
  fence?: Fence;
  /** Where this replica's readers find the frames published and not yet stored. */
  tails?: LiveTails;
}

/** See `FrameWriterOptions.storeDelayMs`. */
export const STORE_DELAY_MS = 50;

/**
 * Numbers a run's frames, publishes them and stores them.
 *
 * Frames are published once per turn of the event loop, before they are stored: followers on
 * this replica get them from memory at once, and a reader joining meanwhile finds them in the
 * run's live tail (live-tails.ts). They reach storage in batches, within `storeDelayMs` or as
 * soon as `maxBatch` are waiting, for late joiners and other replicas; whatever is still waiting
 * when the run ends goes into the run's end, one transaction with its outcome (`endFrames`). A
 * run that ends within the delay therefore costs no frame commit of its own.
 *
 * A turn carries at most one `values` frame, rendered last: each values frame replaces the
 * previous in full, so coalescing loses nothing a client needs, and the last one is never
 * dropped. A turn cut short by a full batch carries the values frame for its last event, and
 * the next turn none unless an event changed the values since. Only the final frame is published after it is stored: a client told how a run ended
 * can count on it.
 */
export class FrameWriter {
  private seq: number;
  /** The newest frame stored. */
  private storedSeq: number;
  /** The newest frame published: a frame numbered after a failure comes after it. */
  private publishedSeq: number;
  /** This turn's frames, not published yet. */
  private pending: RunFrame[] = [];
  private pendingValues: (() => string) | null = null;
  /**
   * The newest frame numbered is a values frame: values are rebuilt from the events before a
   * values frame, so it holds every change so far, and a change reported now is in it already.
   */
  private valuesCurrent = false;
  /** Published and not stored yet, in order (the run's live tail). */
  private unstored: RunFrame[] = [];
  /** How many of `unstored`, from the front, are handed to storage already. */
  private handed = 0;
  private turn: NodeJS.Immediate | null = null;
  private storeTimer: NodeJS.Timeout | null = null;
  /** The appends handed to storage, chained so that they commit in order. */
  private storing: Promise<void> = Promise.resolve();
  private failed: Error | undefined;
  /** The final frame, once numbered (it keeps its number if the end is written another way). */
  private finalFrame: RunFrame | null = null;
  private finalStored = false;
  private failureListener: ((err: Error) => void) | undefined;
  private readonly maxBatch: number;
  private readonly storeDelayMs: number;
  readonly fence: Fence | undefined;
  private readonly unregister: () => void;

  constructor(
    private readonly storage: Storage,
    private readonly bus: FrameBus,
    private readonly runId: string,
    lastSeq: number,
    options: FrameWriterOptions = {},
  ) {
    this.seq = lastSeq;
    this.storedSeq = lastSeq;
    this.publishedSeq = lastSeq;
    this.maxBatch = options.maxBatch ?? 512;
    this.storeDelayMs = options.storeDelayMs ?? STORE_DELAY_MS;
    this.fence = options.fence;
    this.unregister =
      options.tails?.register(runId, {
        storedSeq: () => this.storedSeq,
        after: (afterSeq) => this.tail(afterSeq),
      }) ?? noop;
  }

  /**
   * The first write that failed, if one did. From then on frames are neither published nor
   * stored; only the final frame is still tried, numbered after the last frame published, and
   * published even if it cannot be stored, so that clients following the run learn how it
   * ended. A write refused because the run's claim passed to another replica (`isClaimLost`)
   * stops everything, the final frame included: the run's log and its end are the other
   * replica's to write and publish.
   */
  get failure(): Error | undefined {
    return this.failed;
  }

  /** Called once, with the first failed write (the executor stops the agent then). */
  onFailure(listener: (err: Error) => void): void {
    this.failureListener = listener;
  }

  /** True once a write was refused because another replica took the run over. */
  get claimLost(): boolean {
    return isClaimLost(this.failed);
  }

  get lastSeq(): number {
    return this.seq;
  }

  custom(data: string, mode: "custom" | "subagent" = "custom"): void {
    this.pending.push({ run_id: this.runId, seq: ++this.seq, mode, data });
    this.valuesCurrent = false;
    // A turn that holds a full batch goes out now: it would otherwise grow without bound when
    // the agent never leaves the turn.
    if (this.pending.length >= this.maxBatch) this.publishTurn();
    else this.scheduleTurn();
  }

  /**
   * Marks values as changed. The frame is rendered once, at the end of the turn, after the
   * turn's custom frames: a turn carries at most one values frame, the newest.
   */
  values(render: () => string): void {
    // A turn that a full batch cut short published the event's values frame already (the
    // executor reports the change after the event's frame): another would repeat it.
    if (this.valuesCurrent) return;
    this.pendingValues = render;
    this.scheduleTurn();
  }

  /**
   * Resolves when the frames waiting for storage are stored, if they are a full batch or more;
   * `undefined` while there is room. An agent faster than the database is made to wait here
   * (its frames would otherwise pile up in memory, and an agent that never waits on a timer
   * would keep the event loop, and the database's commits, from running at all).
   */
  backlog(): Promise<void> | undefined {
    return this.unstored.length >= this.maxBatch ? this.storing : undefined;
  }

  /**
   * Publishes this turn's frames and waits for the stores already under way: afterwards
   * `failure` tells whether a write of the run failed so far. What waits for storage still waits.
   */
  async settle(): Promise<void> {
    this.publishTurn();
    await this.storing;
  }

  /**
   * Publishes and stores everything so far and waits for it. Never rejects: a failed write is
   * kept in `failure` (a rejection nobody awaits would end the process).
   */
  async flush(): Promise<void> {
    this.publishTurn();
    this.storeWaiting();
    await this.storing;
  }

  /**
   * The frames the run's end stores with its outcome (see `Storage.finishRun`'s writes): every
   * frame not stored yet and the final frame, numbered now. Null when the run's claim was lost.
   * After the end is committed, `endStored` publishes the final frame; if it could not be, the
   * end is written the step-by-step way and `final` keeps the final frame's number.
   */
  async endFrames(finalData: string): Promise<RunFrame[] | null> {
    this.publishTurn();
    this.clearStoreTimer();
    await this.storing;
    if (this.claimLost) return null;
    const final = this.numberFinal(finalData);
    return this.failed ? [final] : [...this.unstored, final];
  }

  /** The frames `endFrames` gave were committed with the run's outcome. */
  endStored(): void {
    const final = this.finalFrame!;
    this.unstored = [];
    this.handed = 0;
    this.finalStored = true;
    this.storedSeq = final.seq;
    this.publishedSeq = final.seq;
    this.bus.publish(this.runId, [final]);
    this.bus.announceStored(this.runId);
    this.unregister();
  }

  /**
   * Stores everything so far, the final frame last, and waits for it. False when the final
   * frame could not be stored (it was published all the same).
   */
  async final(data: string): Promise<boolean> {
    this.publishTurn();
    const final = this.numberFinal(data);
    this.storeWaiting([final]);
    await this.storing;
    this.unregister();
    return this.finalStored;
  }

  /**
   * Publishes the final frame without storing it, after everything before it is stored: for a
   * run that is deleted (rolled back), whose frames went with it, so that clients following it
   * live still learn how it ended.
   */
  async publishFinal(data: string): Promise<void> {
    await this.flush();
    this.bus.publish(this.runId, [this.numberFinal(data)]);
    this.unregister();
  }

  /** The frames published and not stored yet with a seq after `afterSeq` (the live tail). */
  private tail(afterSeq: number): RunFrame[] {
    const { unstored } = this;
    if (unstored.length === 0 || unstored[unstored.length - 1]!.seq <= afterSeq) return [];
    const from = unstored.findIndex((frame) => frame.seq > afterSeq);
    return unstored.slice(from);
  }

  private numberFinal(data: string): RunFrame {
    if (this.failed && this.finalFrame === null) this.seq = this.publishedSeq;
    this.finalFrame =
      this.finalFrame === null
        ? { run_id: this.runId, seq: ++this.seq, mode: "final", data }
        : { ...this.finalFrame, data };
    return this.finalFrame;
  }

  private scheduleTurn(): void {
    this.turn ??= setImmediate(() => {
      this.turn = null;
      this.publishTurn();
    });
  }

  /** Publishes this turn's frames; they then wait for storage (see storeDelayMs). */
  private publishTurn(): void {
    if (this.turn) {
      clearImmediate(this.turn);
      this.turn = null;
    }
    if (this.pendingValues !== null) {
      this.pending.push({
        run_id: this.runId,
        seq: ++this.seq,
        mode: "values",
        data: this.pendingValues(),
      });
      this.pendingValues = null;
      this.valuesCurrent = true;
    }
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    // After a failure nothing more goes out: it would leave a hole in the run's stored log.
    if (this.failed) return;
    this.publishedSeq = batch[batch.length - 1]!.seq;
    for (const frame of batch) this.unstored.push(frame);
    this.bus.publish(this.runId, batch);
    if (this.unstored.length - this.handed >= this.maxBatch) this.storeWaiting();
    else this.storeTimer ??= setTimeout(() => this.storeWaiting(), this.storeDelayMs);
  }

  private clearStoreTimer(): void {
    if (this.storeTimer === null) return;
    clearTimeout(this.storeTimer);
    this.storeTimer = null;
  }

  /** Hands every frame waiting for storage (and `extra`, the final frame) to storage. */
  private storeWaiting(extra: RunFrame[] = []): void {
    this.clearStoreTimer();
    const batch = this.unstored.slice(this.handed).concat(extra);
    if (batch.length === 0) return;
    this.handed = this.unstored.length;
    this.storing = this.storing.then(() => this.store(batch));
  }

  private async store(frames: RunFrame[]): Promise<void> {
    if (this.claimLost) return;
    const batch = this.failed ? frames.filter((frame) => frame.mode === "final") : frames;
    if (batch.length === 0) return;
    const final = batch[batch.length - 1]!.mode === "final" ? batch[batch.length - 1]! : null;
    try {
      await this.storage.appendFrames(batch, this.fence);
      // The stored frames leave the tail: storage serves them from now on.
      const stored = final === null ? batch.length : batch.length - 1;
      this.unstored.splice(0, stored);
      this.handed -= stored;
      this.storedSeq = batch[batch.length - 1]!.seq;
      if (final !== null) this.finalStored = true;
      this.bus.announceStored(this.runId);
    } catch (err) {
      const first = this.failed === undefined;
      this.failed ??= err instanceof Error ? err : new Error(String(err));
      // Never to be stored: readers get the log up to the failure, then the final frame.
      this.unstored = [];
      this.handed = 0;
      if (first) this.failureListener?.(this.failed);
      if (this.claimLost || final === null) return;
      // A final frame that came with the failed batch is tried alone.
      if (batch.length > 1) {
        try {
          await this.storage.appendFrames([final], this.fence);
          this.finalStored = true;
          this.storedSeq = final.seq;
        } catch {
          // Published below all the same.
        }
        if (this.claimLost) return;
      }
    }
    if (final !== null) {
      this.publishedSeq = final.seq;
      this.bus.publish(this.runId, [final]);
    }
  }
}

function noop(): void {}
