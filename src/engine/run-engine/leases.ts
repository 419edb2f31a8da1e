import type { Logger } from "pino";
import type { Storage } from "../../storage/types.js";
import { claimLost } from "../../util/errors.js";
import { StopReason } from "../executor.js";
import type { Executions } from "./executions.js";
import type { RunFailures } from "./failures.js";

export interface LeaseKeeperOptions {
  storage: Storage;
  owner: string;
  leaseMs: number;
  executions: Executions;
  failures: RunFailures;
  logger: Logger;
}

/**
 * Keeps this replica's claims alive: renews the leases of the runs executing here on a timer,
 * stops a run whose lease another replica took over, and, on the same ticks, stops a run whose
 * cancel we missed and records the failures that could not be stored before.
 */
export class LeaseKeeper {
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly options: LeaseKeeperOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.renew(), this.renewEveryMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /**
   * Keeps this replica's claims alive, and stops a run whose cancel we missed (the bus delivers
   * cancels promptly, but a notification lost in a reconnect must not be fatal). Both happen on
   * the ticks when some run is due for renewal (see anyLeaseDue): a run too young for one has
   * its cancel backstop at its first renewal, at most one interval later than before.
   */
  private async renew(): Promise<void> {
    const { storage, owner, leaseMs, executions, failures, logger } = this.options;
    if (!this.anyLeaseDue() && !failures.pending) return;
    try {
      await failures.retry();
      const now = new Date();
      const held = new Set(await storage.renewLeases(owner, leaseMs, now));
      for (const [runId, execution] of executions.entries()) {
        if (held.has(runId)) execution.leaseEnds = now.getTime() + leaseMs;
      }
      for (const runId of executions.runIds()) {
        if (!held.has(runId)) {
          // Only pending runs are renewed: one whose outcome was just recorded (its execution
          // is still winding down) is not lost, it is done.
          const current = await storage.getRun(runId);
          if (current?.status !== "pending" || current.owner === owner) continue;
          // Our lease lapsed (this process stalled longer than the lease) and another replica
          // may have taken the run over. Recording an outcome from here could overwrite its
          // work (its writes are fenced and would be refused anyway), so only say so and stop
          // executing it: the run's record belongs to whoever holds the claim.
          logger.warn({ run_id: runId }, "lost the claim on a run to another replica");
          executions.get(runId)?.controller.abort(claimLost(runId));
          continue;
        }
        const run = await storage.getRun(runId);
        if (run?.cancel_requested) {
          void executions.abort(runId, StopReason.cancel(run.cancel_requested));
        }
      }
    } catch (err) {
      logger.error({ err }, "could not renew run leases");
    }
  }

  private get renewEveryMs(): number {
    return Math.max(1000, this.options.leaseMs / 3);
  }

  /**
   * Whether a run executing here has held its lease so long that it must be renewed at this
   * tick: longer than half the lease less a renewal interval (2.5 s for the default 15 s lease
   * and 5 s interval). A run skipped now has more than half its lease plus an interval left,
   * so the next tick still finds at least half of it. What this saves: a run that ends before
   * then (nearly every stateless run) costs no renewal write, and a tick when all runs are that
   * young writes nothing, so short runs stay at their two commits (#14). Leases shorter than two
   * intervals are renewed at every tick, as before. Once one is due, every held run is renewed,
   * in the one statement.
   */
  private anyLeaseDue(): boolean {
    const { leaseMs, executions } = this.options;
    const heldLongest = Math.max(0, leaseMs / 2 - this.renewEveryMs);
    const dueBefore = Date.now() + leaseMs - heldLongest;
    for (const execution of executions.values()) {
      if (execution.leaseEnds < dueBefore) return true;
    }
    return false;
  }
}
