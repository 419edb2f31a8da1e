import type { RunFrame } from "../storage/types.js";

export type FrameListener = (frames: RunFrame[]) => void;
export type CancelListener = (runId: string, action: "interrupt" | "rollback") => void;

/**
 * Live fan-out between the parts of the server that produce and watch runs. Frames are
 * published to this replica's listeners as they are made, and stored soon after; a listener
 * that misses something reads it back from storage and the run's live tail
 * (frames/live-tails.ts). A listener may be handed an empty list, which means "this run has new
 * frames in storage" (how frames written on another replica announce themselves, once stored).
 *
 * Besides frames the bus carries two signals every replica must hear: a cancel for a run that
 * may be executing elsewhere, and "there is new work" so idle replicas claim it promptly.
 */
export interface FrameBus {
  /** Hands frames to this replica's listeners of the run. */
  publish(runId: string, frames: RunFrame[]): void;
  /** Tells the other replicas' listeners that the run has new frames in storage. */
  announceStored(runId: string): void;
  /** Returns the unsubscribe function. */
  subscribe(runId: string, listener: FrameListener): () => void;
  /** Number of live frame listeners (for metrics and tests). */
  listenerCount(): number;
  /** Asks whichever replica executes the run to stop it. */
  requestCancel(runId: string, action: "interrupt" | "rollback"): void;
  onCancel(listener: CancelListener): void;
  /** Tells every replica that runs became runnable (created, resumed, a slot freed). */
  announceWork(): void;
  onWork(listener: () => void): void;
  close(): Promise<void>;
}

/** The bus of a single process: everything is a direct call. */
export class LocalFrameBus implements FrameBus {
  /** A run's one listener as it is (the usual case: the stream that started it), or a set. */
  private readonly listeners = new Map<string, FrameListener | Set<FrameListener>>();
  private readonly cancelListeners: CancelListener[] = [];
  private readonly workListeners: Array<() => void> = [];
  private count = 0;

  publish(runId: string, frames: RunFrame[]): void {
    const entry = this.listeners.get(runId);
    if (entry === undefined) return;
    if (typeof entry === "function") entry(frames);
    else for (const listener of entry) listener(frames);
  }

  /** A single process has no other replica to tell. */
  announceStored(_runId: string): void {}

  subscribe(runId: string, listener: FrameListener): () => void {
    // Most runs have a single listener: it is kept as it is, and a set is made for a second.
    const entry = this.listeners.get(runId);
    if (entry === undefined) this.listeners.set(runId, listener);
    else if (typeof entry === "function") this.listeners.set(runId, new Set([entry, listener]));
    else entry.add(listener);
    this.count++;
    let subscribed = true;
    return () => {
      if (!subscribed) return;
      subscribed = false;
      this.count--;
      const current = this.listeners.get(runId);
      if (current === listener) this.listeners.delete(runId);
      else if (current instanceof Set) {
        current.delete(listener);
        if (current.size === 0) this.listeners.delete(runId);
      }
    };
  }

  listenerCount(): number {
    return this.count;
  }

  requestCancel(runId: string, action: "interrupt" | "rollback"): void {
    for (const listener of this.cancelListeners) listener(runId, action);
  }

  onCancel(listener: CancelListener): void {
    this.cancelListeners.push(listener);
  }

  announceWork(): void {
    for (const listener of this.workListeners) listener();
  }

  onWork(listener: () => void): void {
    this.workListeners.push(listener);
  }

  /** Tells every watcher to re-read storage (after frames may have been missed). */
  pokeAll(): void {
    for (const runId of [...this.listeners.keys()]) this.publish(runId, []);
  }

  async close(): Promise<void> {}
}
