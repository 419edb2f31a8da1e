import { ProgressOfEvents } from "../../bridge/mcp/index.js";
import { readUpdate } from "../../engine/frames/codec.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunRecord } from "../../storage/types.js";
import type { CallStream } from "./call-streams.js";

type Notify = (notification: {
  method: "notifications/progress";
  params: { progressToken: string | number; progress: number; message?: string };
}) => Promise<void>;

/**
 * Follows a call's run (from `afterSeq`: a resumed run's new segment) and sends the caller
 * `notifications/progress` for its token, one per batch of stored frames that says something,
 * until the segment ends or the call does. Read from the run's stored frames, as every face's
 * stream is, so it is the same on whichever replica runs the agent.
 *
 * With `position` (a session's call stream), each notification's event id names the last frame
 * it tells of, once the stream is recorded (`recorded`): a replica resuming the stream from
 * that id tells the rest from the next frame on (resume.ts).
 */
export function followProgress(
  runs: RunService,
  progress: ProgressOfEvents,
  progressToken: string | number,
  notify: Notify,
  signal: AbortSignal,
  position?: { stream: CallStream; recorded: Promise<unknown> },
) {
  return (run: RunRecord, afterSeq: number): void => {
    const segment = new AbortController();
    const stop = () => segment.abort();
    signal.addEventListener("abort", stop, { once: true });
    void (async () => {
      try {
        for await (const batch of runs.followBatches(run.run_id, {
          afterSeq,
          signal: segment.signal,
          read: "events",
        })) {
          let tell = false;
          let ended = false;
          for (const frame of batch) {
            if (frame.mode === "final") ended = true;
            const event = frame.mode === "custom" ? readUpdate(frame) : undefined;
            if (event && progress.push(event)) tell = true;
          }
          if (tell && position) {
            await position.recorded;
            position.stream.seq = batch[batch.length - 1]!.seq;
          }
          if (tell)
            await notify({
              method: "notifications/progress",
              params: { progressToken, ...progress.params },
            });
          if (ended) break;
        }
      } catch {
        // Progress is a courtesy: a caller gone, or a notification it could not take, ends it.
      } finally {
        signal.removeEventListener("abort", stop);
        segment.abort();
      }
    })();
  };
}

export { ProgressOfEvents };
