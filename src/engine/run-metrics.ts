import type { AgentRegistry } from "../config/registry.js";
import type { Metrics } from "../metrics/metrics.js";
import type { RunRecord, Storage } from "../storage/types.js";
import type { RunEngine } from "./run-engine.js";

/** Run counters and the duration of the segment that just ended, on each status change. */
export function observeRun(metrics: Metrics, agent: string, run: RunRecord): void {
  if (run.status === "pending") {
    // Pending again after a resume is no new run (a segment ended); a new run has none yet, or
    // the one its insert opened when it claimed the run.
    if (run.segments.every((segment) => segment.ended_at === null)) metrics.runCreated(agent);
    return;
  }
  const last = run.segments.at(-1);
  const seconds = last?.ended_at
    ? (Date.parse(last.ended_at) - Date.parse(last.started_at)) / 1000
    : undefined;
  metrics.runStopped(agent, run.status, seconds);
}

/** Per agent name: pending runs in storage (bounded by the agent's queue) and those here. */
export async function runQueues(
  registry: AgentRegistry,
  storage: Storage,
  engine: RunEngine,
): Promise<Array<{ agent: string; pending: number; executing: number }>> {
  const byName = new Map<string, { agent: string; pending: number; executing: number }>();
  for (const agent of registry.list()) {
    const { maxQueuedRuns, maxConcurrentRuns } = agent.config.limits;
    const pending = await storage.searchRuns({
      agent_id: agent.agentId,
      status: "pending",
      limit: maxQueuedRuns + maxConcurrentRuns + 1,
      offset: 0,
    });
    const entry = byName.get(agent.name) ?? { agent: agent.name, pending: 0, executing: 0 };
    entry.pending += pending.length;
    entry.executing += pending.filter((run) => engine.isExecutingHere(run.run_id)).length;
    byName.set(agent.name, entry);
  }
  return [...byName.values()];
}
