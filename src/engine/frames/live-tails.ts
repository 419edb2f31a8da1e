import type { RunFrame, Storage } from "../../storage/types.js";

/** The frames of one run published and not yet stored, after a given seq, in order. */
export type TailSource = (afterSeq: number) => RunFrame[];

/**
 * The live tails of the runs executing on this replica: frames are published before they are
 * stored (frames/writer.ts), so a reader on this replica that joins a run, or reads its log,
 * finds the newest frames here rather than in storage. Readers on other replicas see them once
 * stored.
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

  after(runId: string, afterSeq: number): RunFrame[] {
    return this.sources.get(runId)?.(afterSeq) ?? [];
  }

  /** Runs with a live tail (for tests and metrics). */
  get size(): number {
    return this.sources.size;
  }
}

/**
 * A page of a run's log after `afterSeq`: what storage holds, continued from the live tail when
 * the run executes here. A tail that no longer continues what storage returned means frames
 * were stored between the two looks: storage is asked again (once; a gap left after that is
 * a write that failed, and the tail is what there is).
 */
export async function readLog(
  storage: Storage,
  tails: LiveTails | undefined,
  runId: string,
  afterSeq: number,
  limit?: number,
): Promise<RunFrame[]> {
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
  return stored.concat(limit === undefined ? tail : tail.slice(0, limit - stored.length));
}
