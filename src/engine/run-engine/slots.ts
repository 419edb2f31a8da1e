/**
 * The engine's concurrency limits: the global one (`maxConcurrentRuns`, counting the runs
 * executing here and the slots promised to runs being inserted) and each agent's.
 */
export class Slots {
  private readonly activeByAgent = new Map<string, number>();
  /** Slots promised to runs being inserted claimed (see `RunEngine.offerClaim`). */
  private reserved = 0;

  constructor(
    private readonly maxConcurrentRuns: number,
    private readonly executingCount: () => number,
  ) {}

  /** Whether the global limit leaves room for one run more. */
  hasRoom(): boolean {
    return this.executingCount() + this.reserved < this.maxConcurrentRuns;
  }

  /** Whether the agent is below its own limit. */
  agentHasRoom(agentId: string, agentLimit: number): boolean {
    return this.active(agentId) < agentLimit;
  }

  /** Promises a slot to a run being inserted; counted as executing until settled. */
  reserve(agentId: string): void {
    this.reserved++;
    this.take(agentId);
  }

  /** Gives back a slot `reserve` promised. */
  unreserve(agentId: string): void {
    this.reserved--;
    this.give(agentId);
  }

  /** A run of the agent starts executing here. */
  take(agentId: string): void {
    this.activeByAgent.set(agentId, this.active(agentId) + 1);
  }

  /** A run of the agent stopped executing here. */
  give(agentId: string): void {
    this.activeByAgent.set(agentId, (this.activeByAgent.get(agentId) ?? 1) - 1);
  }

  private active(agentId: string): number {
    return this.activeByAgent.get(agentId) ?? 0;
  }
}
