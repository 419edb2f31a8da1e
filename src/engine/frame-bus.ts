import type { RunFrame } from "../storage/types.js";

export type FrameListener = (frames: RunFrame[]) => void;

/**
 * Live fan-out of a run's frames to the streams watching it. Frames are stored first and
 * published after, so a listener that misses something can always read it back from storage.
 * This in-process bus serves one replica; a multi-replica bus carries the same calls across
 * processes.
 */
export interface FrameBus {
  publish(runId: string, frames: RunFrame[]): void;
  /** Returns the unsubscribe function. */
  subscribe(runId: string, listener: FrameListener): () => void;
  /** Number of live listeners (for metrics and tests). */
  listenerCount(): number;
}

export class LocalFrameBus implements FrameBus {
  private readonly listeners = new Map<string, Set<FrameListener>>();
  private count = 0;

  publish(runId: string, frames: RunFrame[]): void {
    const set = this.listeners.get(runId);
    if (!set || frames.length === 0) return;
    for (const listener of set) listener(frames);
  }

  subscribe(runId: string, listener: FrameListener): () => void {
    let set = this.listeners.get(runId);
    if (!set) {
      set = new Set();
      this.listeners.set(runId, set);
    }
    set.add(listener);
    this.count++;
    return () => {
      if (!set.delete(listener)) return;
      this.count--;
      if (set.size === 0) this.listeners.delete(runId);
    };
  }

  listenerCount(): number {
    return this.count;
  }
}
