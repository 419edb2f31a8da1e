import type { Storage } from "../storage/types.js";

/** What of a run its expiry is measured from. */
export interface ExpiringRun {
  run_id: string;
  created_at: string;
}

/**
 * Runs given a lifetime of their own (an MCP task's granted ttl): the run is deleted that long
 * after its creation, by the retention sweeper on whichever replica sweeps (a run not finished
 * by then goes at the first sweep after it finishes). Stored with the run, so every replica
 * reads the same lifetime back.
 */
export class RunExpiries {
  constructor(private readonly storage: Storage) {}

  /** Deletes `run` `ttlMs` after its creation. */
  async expireAfter(run: ExpiringRun, ttlMs: number): Promise<void> {
    const expiresAt = new Date(Date.parse(run.created_at) + ttlMs).toISOString();
    await this.storage.retention().setRunExpiry(run.run_id, expiresAt);
  }

  /** The lifetimes (ms from creation) of those of `runs` given one, by run id. */
  async ttlsOf(runs: readonly ExpiringRun[]): Promise<Map<string, number>> {
    const expiries = await this.storage.retention().runExpiries(runs.map((run) => run.run_id));
    const ttls = new Map<string, number>();
    for (const run of runs) {
      const expiresAt = expiries.get(run.run_id);
      if (expiresAt !== undefined) {
        ttls.set(run.run_id, Math.max(0, Date.parse(expiresAt) - Date.parse(run.created_at)));
      }
    }
    return ttls;
  }
}
