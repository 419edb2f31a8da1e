import { SYSTEM } from "../../auth/principal.js";
import { isTerminalStatus, taskStatusOf } from "../../bridge/mcp/index.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunRecord } from "../../storage/types.js";

/** What a task's notification tells: its status, and for a question which one it is. */
const stateOf = (run: RunRecord) => {
  const status = taskStatusOf(run);
  return status === "input_required" ? `${status}@${run.last_seq}` : status;
};

/**
 * A task's run each time its task changes, from `first` on (which the caller has told):
 * working → input_required (each new question) → working → completed, failed or cancelled,
 * until the run ends, is deleted or the signal aborts. A running run is waited for as `wait`
 * waits for it; an interrupted one until it changes on any replica (RunService.waitForChange):
 * driven by the run's frames and status, with no polling. A resumed segment over before it
 * was seen running is told as working first, then as it ended: no change goes untold.
 */
export async function* taskChanges(
  runs: RunService,
  first: RunRecord,
  signal: AbortSignal,
): AsyncGenerator<RunRecord> {
  let run = first;
  let told = stateOf(first);
  const tell = function* (next: RunRecord) {
    const state = stateOf(next);
    if (state === told) return;
    told = state;
    yield next;
  };
  while (!signal.aborted && !isTerminalStatus(taskStatusOf(run))) {
    if (run.status === "interrupted") {
      const changed = await runs.waitForChange(run, signal);
      if (changed === null || signal.aborted) return;
      if (changed.status !== "pending" && changed.segments.length > run.segments.length) {
        // Resumed and already settled again: it worked in between.
        yield* tell({ ...changed, status: "pending", interrupts: [], output: null });
      }
      run = changed;
    } else {
      const settled = await runs.waitFor(run, signal);
      if (signal.aborted) return;
      // As stored (what tasks/get reads), unless it is gone (rolled back) meanwhile.
      run = (await runs.findReachable(SYSTEM, settled.run_id)) ?? settled;
      // Answered already: the question it stopped at was asked all the same.
      if (run.status === "pending" && settled.status === "interrupted") yield* tell(settled);
    }
    yield* tell(run);
  }
}
