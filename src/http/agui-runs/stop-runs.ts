import { type Principal, SYSTEM } from "../../auth/principal.js";
import { parseRunCommand } from "../../bridge/acp/run-command.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunRecord } from "../../storage/types.js";

/**
 * Stops the runs in progress on a thread (all of them, or the one a client names by its own
 * runId), the way ACP's cancel does: the agent is aborted wherever it executes, the partial
 * reply is kept, and this resolves once they have stopped, so the thread takes a new run at
 * once. Returns the runs stopped.
 *
 * A runId is matched against the id the AG-UI client gave the run, the ACP run id and the
 * AG-UI runIds of its segments. One the server has never seen (a client's id for a resume,
 * which the run does not record) stops the thread's run in progress; one naming a run that is
 * over stops nothing, so a newer run is never stopped in its place.
 */
export async function stopRuns(
  runs: RunService,
  who: Principal,
  threadId: string,
  runId?: string,
): Promise<RunRecord[]> {
  // Another principal's thread has no runs for this caller: nothing is stopped or disclosed.
  const pending = await runs.runsInProgressOn(who, threadId);
  let targets = pending;
  if (runId !== undefined) {
    targets = pending.filter((run) => namesRun(run, runId));
    if (targets.length === 0 && !(await namesPastRun(runs, threadId, runId))) targets = pending;
  }
  await Promise.all(
    targets.map((run) =>
      runs.cancel(SYSTEM, run.run_id, run.kind, { action: "interrupt", wait: true }).catch(() => {
        // Deleted meanwhile (rolled back by another client): stopped all the same.
      }),
    ),
  );
  return targets;
}

function namesRun(run: RunRecord, runId: string): boolean {
  return (
    parseRunCommand(run.creation).agui?.runId === runId ||
    run.run_id === runId ||
    run.segments.some((segment) => segment.agui_run_id === runId)
  );
}

async function namesPastRun(runs: RunService, threadId: string, runId: string) {
  const recent = await runs.recentRunsOfThread(threadId, 100);
  return recent.some((run) => run.status !== "pending" && namesRun(run, runId));
}
