import type { RunFrame, Storage } from "../../storage/types.js";

/** What a run executing here has published beyond what it has stored. */
export interface TailSource {
  /** The newest frame stored (frames up to it are read from storage). */
  storedSeq(): number;
  /** The frames published and not stored yet with a seq after `afterSeq`, in order. */
  after(afterSeq: number): RunFrame[];
}

/**
 * The live tails of the runs executing on this replica: frames are published before they are
 * stored (frames/writer.ts), so a reader on this replica that joins a run, or reads its log,
 * finds the newest frames here rather than in storage. Readers on other replicas see them once
 * stored. A run has a tail from its launch until its end is stored.
 */
export class LiveTails {
  private readonly sources = new Map<string, TailSource>();

  /** Returns the function that removes it again (only if it is still the run's source). */
  register(runId: string, source: TailSource): () => void {
    this.sources.set(runId, source);
    return () => {
      if (this.sources.get(runId) === source) this.sources.delete(runId);
    };
  }

  /** The run's tail while it executes here; its end, once stored, is in storage. */
  get(runId: string): TailSource | undefined {
    return this.sources.get(runId);
  }

  after(runId: string, afterSeq: number): RunFrame[] {
    return this.sources.get(runId)?.after(afterSeq) ?? [];
  }

  /** Runs with a live tail (for tests and metrics). */
  get size(): number {
    return this.sources.size;
  }
}

/**
 * A page of a run's log after `afterSeq`: what storage holds, continued from the live tail when
 * the run executes here (a reader already past what is stored reads memory only). A tail that
 * no longer continues what storage returned means frames were stored between the two looks:
 * storage is asked again (once; a gap left after that is a write that failed, and the tail is
 * what there is).
 */
export async function readLog(
  storage: Storage,
  tails: LiveTails | undefined,
  runId: string,
  afterSeq: number,
  limit?: number,
): Promise<RunFrame[]> {
  const live = tails?.get(runId);
  if (live !== undefined && afterSeq >= live.storedSeq()) {
    return firstOf(live.after(afterSeq), limit);
  }
  let stored = await storage.readFrames(runId, afterSeq, limit);
  if (tails === undefined || (limit !== undefined && stored.length >= limit)) return stored;
  let last = stored.at(-1)?.seq ?? afterSeq;
  let tail = tails.after(runId, last);
  if (tail.length > 0 && tail[0]!.seq !== last + 1) {
    if (stored.length > 0) return stored;
    stored = await storage.readFrames(runId, afterSeq, limit);
    if (stored.length > 0) return stored;
    last = afterSeq;
    tail = tails.after(runId, last);
  }
  if (tail.length === 0) return stored;
  return stored.concat(firstOf(tail, limit === undefined ? undefined : limit - stored.length));
}

function firstOf(frames: RunFrame[], limit: number | undefined): RunFrame[] {
  return limit === undefined || frames.length <= limit ? frames : frames.slice(0, limit);
}
