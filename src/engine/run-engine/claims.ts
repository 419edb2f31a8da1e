import type { Logger } from "pino";
import type { RunRecord, Storage } from "../../storage/types.js";
import type { Slots } from "./slots.js";

export interface ClaimPumpOptions {
  storage: Storage;
  owner: string;
  leaseMs: number;
  /** How often to look for work other replicas made runnable (and after_seconds starts). */
  pollMs: number;
  slots: Slots;
  /** The agents this replica executes: id and its own concurrency limit. */
  agents: () => Iterable<{ agentId: string; maxConcurrentRuns: number }>;
  agentCount: () => number;
  isExecuting: (runId: string) => boolean;
  /** Starts a run the pump claimed. */
  launch: (run: RunRecord) => void;
  logger: Logger;
}

/**
 * Claiming and waking: claims pending runs from storage while slots are free, and wakes for
 * more when work is announced, at each poll, when a slot frees, and when the next delayed
 * start (`after_seconds`) is due.
 */
export class ClaimPump {
  private pumping = false;
  private pumpAgain = false;
  /**
   * False once a claim for every agent found nothing, until work is announced, a timer or the
   * poll wakes the pump (see `slotFreed`).
   */
  private mayHaveWork = true;
  private stopped = true;
  private pollTimer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: ClaimPumpOptions) {}

  /** The pump under way (or the last one), for `stop` to wait for. */
  private pumped: Promise<void> = Promise.resolve();

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Starts polling and claims what is runnable now. */
  start(): void {
    this.stopped = false;
    this.pollTimer = setInterval(() => this.wake(), this.options.pollMs);
    this.pollTimer.unref();
    this.wake();
  }

  /**
   * Stops claiming; resolves once a claim under way has returned, so that storage can close
   * after it (a claim answered by a closed storage would be logged as a failure).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearTimeout(this.wakeTimer);
    await this.pumped;
  }

  /** Looks for runnable runs now. */
  wake(): void {
    this.mayHaveWork = true;
    this.startPump();
  }

  /**
   * A slot freed: looks for work only if some may be waiting. A run claimed by its own insert
   * leaves nothing behind, so a replica whose runs all start that way reads no queue after
   * each run.
   */
  slotFreed(): void {
    if (this.mayHaveWork) this.startPump();
  }

  private startPump(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumped = this.pump();
  }

  private async pump(): Promise<void> {
    const { storage, owner, leaseMs, slots } = this.options;
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        while (!this.stopped && slots.hasRoom()) {
          const eligible = this.eligibleAgents();
          if (eligible.length === 0) break;
          const run = await storage.claimRun(owner, leaseMs, new Date(), eligible);
          if (!run) {
            // Nothing claimable for any agent: until something is announced (or the poll), a
            // freed slot has nothing to look for. (A wake meanwhile set it again and pumps again.)
            if (eligible.length === this.options.agentCount() && !this.pumpAgain)
              this.mayHaveWork = false;
            break;
          }
          // Our own lease lapsed before its renewal (a long synchronous stretch, or a lease
          // shorter than the renewal interval) and the claim just took it back: the run is
          // executing here already and must not start a second time.
          // Its fence stays good: the same owner's claim keeps the lease epoch.
          if (this.options.isExecuting(run.run_id)) continue;
          this.options.launch(run);
        }
        // Checked again after this await too: a wake that arrives while the next start is
        // looked up would otherwise be lost, and its run left to the next poll (a second later).
        if (!this.pumpAgain) await this.scheduleNextStart();
      } while (this.pumpAgain && !this.stopped);
    } catch (err) {
      this.options.logger.error({ err }, "run scheduler failed to claim work");
    } finally {
      this.pumping = false;
    }
  }

  private eligibleAgents(): string[] {
    const eligible: string[] = [];
    for (const agent of this.options.agents()) {
      if (this.options.slots.agentHasRoom(agent.agentId, agent.maxConcurrentRuns))
        eligible.push(agent.agentId);
    }
    return eligible;
  }

  private async scheduleNextStart(): Promise<void> {
    clearTimeout(this.wakeTimer);
    const next = await this.options.storage.nextStartAfter();
    if (!next || this.stopped) return;
    const delay = Date.parse(next) - Date.now();
    // Due already: it waits behind a running run of its thread, whose end wakes us. Far off:
    // the poll catches it.
    if (delay <= 0 || delay > this.options.pollMs) return;
    this.wakeTimer = setTimeout(() => this.wake(), delay + 5);
    this.wakeTimer.unref();
  }
}
