import type { Entry } from "./run-entry";
import type { RunSegment } from "./types";

/**
 * When each frame of a run came, in milliseconds since the run's start, as far as anyone knows.
 *
 * - Frames this page received live: when they arrived (from the first one received).
 * - Events the agent stamped (AG-UI `timestamp`): from its first stamped event.
 * - Frames read back from storage carry no time of their own. What the run record knows is when
 *   each segment (the first start, each resume) started and ended, so the events that open and
 *   close a segment (RUN_STARTED; RUN_FINISHED or RUN_ERROR and the final frame) get those
 *   times, from the first segment's start. Anything between is not timed (null).
 */
export interface FrameClock {
  /** Milliseconds since the run's start for `entry`, or null when nothing tells. */
  offset(entry: Entry): number | null;
}

export function frameClock(entries: readonly Entry[], segments: readonly RunSegment[]): FrameClock {
  const firstReceived = entries.find((e) => e.receivedAt !== null)?.receivedAt ?? null;
  const firstStamp = entries.find((e) => typeof e.event?.timestamp === "number")?.event
    ?.timestamp as number | undefined;
  const bounds = segmentBounds(entries, segments);
  return {
    offset(entry) {
      if (entry.receivedAt !== null && firstReceived !== null) {
        return entry.receivedAt - firstReceived;
      }
      const stamp = entry.event?.timestamp;
      if (typeof stamp === "number" && firstStamp !== undefined) return stamp - firstStamp;
      return bounds.get(entry.seq) ?? null;
    },
  };
}

/** Each segment's opening and closing frames, with its start and end from the run record. */
function segmentBounds(
  entries: readonly Entry[],
  segments: readonly RunSegment[],
): Map<number, number> {
  const bounds = new Map<number, number>();
  const first = segments[0];
  if (!first) return bounds;
  const origin = Date.parse(first.started_at);
  const at = (iso: string | null | undefined) => (iso ? Date.parse(iso) - origin : undefined);
  let segment = -1;
  for (const entry of entries) {
    if (entry.lane !== null) continue;
    if (entry.type === "RUN_STARTED") {
      segment += 1;
      const start = at(segments[segment]?.started_at);
      if (start !== undefined) bounds.set(entry.seq, start);
    } else if (entry.type === "RUN_FINISHED" || entry.type === "RUN_ERROR") {
      const end = at(segments[Math.max(0, segment)]?.ended_at);
      if (end !== undefined) bounds.set(entry.seq, end);
    } else if (entry.mode === "final") {
      const end = at(segments[Math.max(0, segment)]?.ended_at ?? segments.at(-1)?.ended_at);
      if (end !== undefined) bounds.set(entry.seq, end);
    }
  }
  return bounds;
}
