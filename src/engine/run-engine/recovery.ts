import type { Logger } from "pino";
import { ERRCODE, type SegmentEnd } from "../../bridge/acp/outcomes.js";
import type { RunRecord, Storage } from "../../storage/types.js";

/**
 * Start-up with an embedded database (one process: storage refuses a file another live
 * process holds): every run still owned belonged to a process that died, so each is taken
 * back now, and a run of an agent no longer configured ends, since nothing would claim it.
 * (With a shared database nothing is done here: a dead replica's runs become claimable when
 * their lease runs out, and `executeClaimedRun` resolves them.)
 */
export async function recoverOwnedRuns(
  storage: Storage,
  isConfigured: (agentId: string) => boolean,
  finishWithoutSegment: (run: RunRecord, end: SegmentEnd) => Promise<void>,
  logger: Logger,
): Promise<void> {
  const pending = await storage.searchRuns({ status: "pending", limit: 100_000, offset: 0 });
  for (const run of pending.filter((r) => !isConfigured(r.agent_id))) {
    // No agent will ever claim it: end it rather than leave it pending forever.
    await finishWithoutSegment(run, {
      kind: "error",
      errcode: ERRCODE.agentError,
      description: `agent ${run.agent_id} is no longer configured on this server`,
    });
  }
  const owned = pending.filter((run) => run.owner && isConfigured(run.agent_id));
  for (const run of owned) {
    // Released, not resolved: executeClaimedRun decides (error, or a retry) when it claims them.
    await storage.updateRun(run.run_id, { owner: null, lease_expires_at: null });
  }
  if (owned.length > 0) logger.info({ runs: owned.length }, "took back runs of a previous process");
}
