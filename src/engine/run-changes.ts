import type { RunRecord, Storage } from "../storage/types.js";
import type { FrameBus } from "./frame-bus.js";

/**
 * Waits until a run that is not executing (an interrupted one, say) is no longer as `run` has
 * it: another status, or frames after its `last_seq`. Whichever replica changes it, the frame
 * bus wakes the wait (this replica's frames as they are published, another replica's once
 * stored), and the run is then read from storage: nothing polls. Resolves with the run as
 * stored, `null` once it is deleted, or `run` itself when the signal aborts first.
 *
 * A resume changes the status before the resumed segment has frames; the bus wakes the wait
 * when that segment starts executing (a resume on this replica that no one executes yet is
 * told when it is).
 */
export async function waitForRunChange(
  storage: Pick<Storage, "getRun">,
  bus: Pick<FrameBus, "subscribe">,
  run: RunRecord,
  signal: AbortSignal,
): Promise<RunRecord | null> {
  let poked = false;
  let wake: (() => void) | undefined;
  const poke = () => {
    poked = true;
    wake?.();
  };
  // Subscribed before the first read: a change between the two still wakes the wait.
  const unsubscribe = bus.subscribe(run.run_id, poke);
  signal.addEventListener("abort", poke, { once: true });
  try {
    while (!signal.aborted) {
      poked = false;
      const stored = await storage.getRun(run.run_id);
      if (!stored) return null;
      if (stored.status !== run.status || stored.last_seq > run.last_seq) return stored;
      if (!poked) {
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    }
    return run;
  } finally {
    unsubscribe();
    signal.removeEventListener("abort", poke);
  }
}
