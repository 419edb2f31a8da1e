import { type Principal, reaches } from "../auth/principal.js";
import type { RunFrame, RunRecord, Storage } from "../storage/types.js";
import { notFound } from "../util/errors.js";
import { readFullFrames } from "./frames/follow.js";
import type { LiveTails } from "./frames/live-tails.js";

/**
 * What operators see beyond the ACP API: whether storage answers (readiness), which backend it
 * is, and a run's stored frames whatever their stream mode (the inspector's replay).
 */
export class OpsService {
  constructor(
    private readonly storage: Storage,
    /** This replica's live tails: a run executing here has frames not stored yet. */
    private readonly tails?: LiveTails,
  ) {}

  get storageKind(): Storage["kind"] {
    return this.storage.kind;
  }

  /** Whether storage answers; a failing ping is "not ready", never an error. */
  ready(): Promise<boolean> {
    return this.storage.ping().catch(() => false);
  }

  /**
   * A run and its frames after `afterSeq`. Someone else's run, or one of an agent the caller
   * may not use, does not exist for this caller (404, as on the ACP routes).
   */
  async runFrames(
    who: Principal,
    runId: string,
    afterSeq: number,
    limit: number,
  ): Promise<{ run: RunRecord; frames: RunFrame[] }> {
    const run = await this.storage.getRun(runId);
    const reachable =
      run && reaches(who, run.principal) && (!who.agentIds || who.agentIds.has(run.agent_id));
    if (!run || !reachable) throw notFound("run", runId);
    return {
      run,
      frames: await readFullFrames(this.storage, run.run_id, afterSeq, limit, this.tails),
    };
  }
}
