import type { Storage } from "../storage/types.js";
import { queueFull } from "../util/errors.js";

/**
 * Each agent's bounded queue: past its limit, a new run is refused (429) rather than piled up.
 *
 * On a storage this process alone writes (`Storage.exclusive`), the pending runs are counted
 * only when they may have reached the limit: a run becomes pending only by being created or
 * resumed here, so the last count plus the runs let in since is a bound on them. Below the
 * limit it answers as the count would, without a read per run (counting was a fifth of a
 * stateless run's SQLite time). Runs that ended since only make the bound loose. On a shared
 * storage a stateless run's count goes with its insert (`InsertRunOptions.queue_limit`).
 */
export class QueueRoom {
  /** Per agent id: a bound on its pending runs, on an exclusive storage. */
  private readonly pendingBounds = new Map<string, number>();

  constructor(private readonly storage: Storage) {}

  /**
   * Throws `queueFull` when the agent's queue has no room for one run more. Returns the limit
   * for the run's insert to check when the insert can count (`withInsert`, a shared storage).
   */
  async check(
    agent: { agentId: string; maxPendingRuns?: number },
    withInsert: boolean,
  ): Promise<number | undefined> {
    const limit = agent.maxPendingRuns;
    if (limit === undefined) return undefined;
    const exclusive = this.storage.exclusive === true;
    // A storage shared with other replicas counts every time; the insert can do it.
    if (!exclusive && withInsert) return limit;
    const bound = exclusive ? this.pendingBounds.get(agent.agentId) : undefined;
    if (bound !== undefined && bound < limit) {
      this.pendingBounds.set(agent.agentId, bound + 1);
      return undefined;
    }
    const pending = await this.storage.countRuns(
      { agent_id: agent.agentId, status: "pending" },
      limit,
    );
    if (exclusive) this.pendingBounds.set(agent.agentId, pending < limit ? pending + 1 : pending);
    if (pending >= limit) throw queueFull(agent.agentId, pending);
    return undefined;
  }

  /** A run of the agent is pending again (resumed): one more for the bound. */
  resumed(agentId: string): void {
    const bound = this.pendingBounds.get(agentId);
    if (bound !== undefined) this.pendingBounds.set(agentId, bound + 1);
  }
}
