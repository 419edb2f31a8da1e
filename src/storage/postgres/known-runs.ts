import type { RunPatch, RunRecord } from "../types.js";
import type { KnownRun } from "./run-update.js";

/** How many runs' unchanging columns a repository keeps at most. */
const KNOWN_RUNS = 10_000;

/**
 * The unchanging columns of the runs this replica inserted claimed (it executes them), until
 * their end: the end's UPDATE does not read back what the server sent at the insert. They are
 * the objects of the record the engine holds while it executes the run, so keeping them costs
 * little; bounded, oldest first out. A run not in it is read back whole.
 */
export class KnownRuns {
  readonly #runs = new Map<string, KnownRun>();

  /** Keeps a run's unchanging columns when it was inserted claimed; hands the run back. */
  remember(run: RunRecord): RunRecord {
    if (run.owner === null) return run;
    if (this.#runs.size >= KNOWN_RUNS) {
      const oldest = this.#runs.keys().next();
      if (oldest.done !== true) this.#runs.delete(oldest.value);
    }
    this.#runs.set(run.run_id, {
      run_id: run.run_id,
      agent_id: run.agent_id,
      kind: run.kind,
      created_at: run.created_at,
      creation: run.creation,
      metadata: run.metadata,
      trace_context: run.trace_context,
      face: run.face,
    });
    return run;
  }

  /** The run's unchanging columns if kept; a patch that ends the run lets go of them. */
  take(runId: string, patch: RunPatch): KnownRun | undefined {
    const known = this.#runs.get(runId);
    if (known !== undefined && patch.status !== undefined && patch.status !== "pending") {
      this.#runs.delete(runId);
    }
    return known;
  }
}
