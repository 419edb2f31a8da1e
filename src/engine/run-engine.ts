import type { Logger } from "pino";
import type { SegmentEnd } from "../bridge/acp/outcomes.js";
import type { Fence, InsertClaim, RunRecord, Storage, ThreadRecord } from "../storage/types.js";
import { newId } from "../util/ids.js";
import { AgentDeviations } from "./agent-deviations.js";
import { type EventRejection, StopReason } from "./executor.js";
import type { FrameBus } from "./frame-bus.js";
import { LiveTails } from "./frames/live-tails.js";
import type { EngineAgent } from "./run-engine/agent.js";
import { ClaimPump } from "./run-engine/claims.js";
import type { EndFrames } from "./run-engine/end-waiters.js";
import { EndWaiters } from "./run-engine/end-waiters.js";
import { type ExecuteRunContext, executeClaimedRun } from "./run-engine/execute-run.js";
import { Executions } from "./run-engine/executions.js";
import { RunFailures } from "./run-engine/failures.js";
import { LazyAbortController } from "./run-engine/lazy-abort.js";
import { LeaseKeeper } from "./run-engine/leases.js";
import { recoverOwnedRuns } from "./run-engine/recovery.js";
import { Slots } from "./run-engine/slots.js";
import { RunRecorder } from "./run-recorder.js";

export type { EngineAgent } from "./run-engine/agent.js";

export interface RunEngineOptions {
  storage: Storage;
  bus: FrameBus;
  agents: EngineAgent[];
  logger: Logger;
  maxConcurrentRuns: number;
  /** Called on every run status change (webhooks); errors are logged, never thrown. */
  onStatusChange?: (run: RunRecord) => void | Promise<void>;
  /** This replica's identity in run leases. */
  owner?: string;
  leaseMs?: number;
  /** How often to look for work other replicas made runnable (and after_seconds starts). */
  pollMs?: number;
  /** Events one adapter stream (one segment) may yield; 0 or absent = no limit. */
  maxEventsPerRun?: number;
  /** Told of every event an adapter yields, with why it was rejected if it was (metrics). */
  onEvent?: (agent: string, rejected?: EventRejection) => void;
  /** How often repeats of an agent's deviations already warned about are logged (60 s). */
  deviationSummaryMs?: number;
  /** Told of every deviation from AG-UI the server handled for an agent (metrics). */
  onDeviation?: (agent: string) => void;
  /** Callers see failures without file paths and upstream URLs (`server.hideInternals`). */
  hideInternals?: boolean;
}

/**
 * Executes runs off the request path. Runs wait in storage (status `pending`, no owner) until
 * this engine claims them within the global and per-agent limits; nothing is held only in
 * memory, so a queued run survives a restart and any replica may pick it up.
 *
 * Each concern has its file in `run-engine/`: the concurrency limits (`slots.ts`), claiming
 * and waking (`claims.ts`), the runs executing here and their aborts (`executions.ts`),
 * executing one claimed run (`execute-run.ts`), leases (`leases.ts`), runs whose execution
 * threw (`failures.ts`), those waiting for a run's end (`end-waiters.ts`) and start-up
 * recovery (`recovery.ts`). This class wires them together and is the engine's one door.
 */
export class RunEngine {
  readonly owner: string;
  /** Frames of the runs executing here that are published and not stored yet. */
  readonly tails = new LiveTails();
  private readonly agents: Map<string, EngineAgent>;
  private readonly executions = new Executions();
  private readonly endWaiters = new EndWaiters();
  private readonly recorder: RunRecorder;
  private readonly slots: Slots;
  private readonly claims: ClaimPump;
  private readonly failures: RunFailures;
  private readonly leases: LeaseKeeper;
  /** Agents' handled deviations: warned about once per agent and kind, then counted. */
  private readonly deviations: AgentDeviations;
  private readonly runContext: ExecuteRunContext;
  private readonly leaseMs: number;

  constructor(private readonly options: RunEngineOptions) {
    const { storage, bus, logger } = options;
    this.owner = options.owner ?? `replica-${newId()}`;
    this.agents = new Map(options.agents.map((agent) => [agent.agentId, agent]));
    this.recorder = new RunRecorder({
      ...options,
      onEnded: (run, frames) => this.endWaiters.settle(run.run_id, run, frames),
      failures: {
        agentName: (agentId) => this.agents.get(agentId)?.name,
        hideInternals: options.hideInternals ?? false,
      },
    });
    this.leaseMs = options.leaseMs ?? 30_000;
    this.deviations = new AgentDeviations(logger, options.deviationSummaryMs, options.onDeviation);
    this.runContext = {
      ...options,
      agents: this.agents,
      deviations: this.deviations,
      tails: this.tails,
      recorder: this.recorder,
    };
    this.slots = new Slots(options.maxConcurrentRuns, () => this.executions.size);
    this.claims = new ClaimPump({
      storage,
      owner: this.owner,
      leaseMs: this.leaseMs,
      pollMs: options.pollMs ?? 1_000,
      slots: this.slots,
      agents: () => this.agents.values(),
      agentCount: () => this.agents.size,
      isExecuting: (runId) => this.executions.has(runId),
      launch: (run) => this.launch(run),
      logger,
    });
    this.failures = new RunFailures({
      storage,
      bus,
      owner: this.owner,
      logger,
      finishWithoutSegment: (run, end, fence) => this.finishWithoutSegment(run, end, fence),
    });
    this.leases = new LeaseKeeper({
      storage,
      owner: this.owner,
      leaseMs: this.leaseMs,
      executions: this.executions,
      failures: this.failures,
      logger,
    });
    // Another replica (or this one) asks for a run to stop / announces new work.
    bus.onCancel((runId, action) => {
      void this.abortLocal(runId, StopReason.cancel(action));
    });
    bus.onWork(() => this.wake());
  }

  /** Tells every replica (this one included) that runs may have become runnable. */
  workAvailable(): void {
    this.bus.announceWork();
  }

  get storage(): Storage {
    return this.options.storage;
  }

  get bus(): FrameBus {
    return this.options.bus;
  }

  /** Resolves runs a dead process left behind, then starts claiming work. */
  async start(options: { recoverAllOwned: boolean }): Promise<void> {
    if (options.recoverAllOwned) {
      await recoverOwnedRuns(
        this.storage,
        (agentId) => this.agents.has(agentId),
        (run, end) => this.finishWithoutSegment(run, end),
        this.options.logger,
      );
    }
    this.claims.start();
    this.leases.start();
    this.deviations.start();
  }

  /**
   * Stops claiming, gives running runs `graceMs` to finish, then aborts the rest; each ends as
   * `error` with a description saying the server shut down.
   */
  async stop(graceMs = 0): Promise<void> {
    const claiming = this.claims.stop();
    this.leases.stop();
    if (graceMs > 0 && this.executions.size > 0) {
      const grace = new Promise((resolve) => setTimeout(resolve, graceMs));
      await Promise.race([this.executions.allDone(), grace]);
    }
    this.executions.abortAll(new StopReason("shutdown", SHUTDOWN_WHILE_EXECUTING));
    await this.executions.allDone();
    await claiming;
    this.deviations.stop();
    // Adapters may hold connections (agui-http keeps a connection pool).
    await Promise.allSettled([...this.agents.values()].map((agent) => agent.adapter.close?.()));
  }

  /** Asks the engine to look for runnable runs now. */
  wake(): void {
    this.claims.wake();
  }

  /**
   * AG-UI capabilities of an agent: what the server supplies to every agent (streaming,
   * persistence, interrupts), refined by what its adapter declares.
   */
  capabilitiesOf(agentId: string): Record<string, unknown> {
    const adapter = this.agents.get(agentId)?.adapter;
    const declared = (adapter?.capabilities?.() ?? {}) as Record<
      string,
      Record<string, unknown> | undefined
    >;
    const supplied: Record<string, Record<string, unknown>> = {
      transport: { streaming: true, httpBinary: true },
      state: { snapshots: true, persistentState: true },
      humanInTheLoop: { supported: true, interrupts: true },
    };
    const merged: Record<string, unknown> = { ...declared };
    for (const [key, value] of Object.entries(supplied))
      merged[key] = { ...declared[key], ...value };
    return merged;
  }

  /**
   * A claim for a run about to be inserted, when this replica has a free slot for its agent:
   * the insert then claims the run itself if it can start at once (storage decides: due, alone
   * on its thread), and the run starts without a claim or a start of its own to write. The slot
   * is held until `launchInserted` or `releaseClaim`; undefined when there is none.
   */
  offerClaim(agentId: string): InsertClaim | undefined {
    const agent = this.agents.get(agentId);
    if (
      this.claims.isStopped ||
      agent === undefined ||
      !this.slots.hasRoom() ||
      !this.slots.agentHasRoom(agentId, agent.maxConcurrentRuns)
    ) {
      return undefined;
    }
    this.slots.reserve(agentId);
    const now = new Date();
    return {
      owner: this.owner,
      leaseMs: this.leaseMs,
      now,
      segment: { agui_run_id: newId(), started_at: now.toISOString(), ended_at: null },
    };
  }

  /** Frees a slot `offerClaim` held; the run, if inserted, waits for a claim. */
  releaseClaim(agentId: string): void {
    this.slots.unreserve(agentId);
    this.claims.slotFreed();
  }

  /**
   * Starts a run its insert claimed with `offerClaim`'s claim (its first segment is open
   * already); a run the insert left unclaimed frees the slot instead. True when it started.
   */
  launchInserted(run: RunRecord, claim: InsertClaim, thread?: ThreadRecord): boolean {
    if (run.owner !== claim.owner) {
      this.releaseClaim(run.agent_id);
      return false;
    }
    this.slots.unreserve(run.agent_id);
    this.launch(run, true, thread);
    return true;
  }

  /**
   * The run as this replica records its segment's end, for a run executing here: `wait` needs
   * no read of storage then. Resolves `undefined` when the execution ends without recording
   * one (another replica took the run over, or it was re-queued); undefined when the run does
   * not execute here.
   */
  endOf(runId: string, frames?: EndFrames): Promise<RunRecord | undefined> | undefined {
    if (!this.executions.has(runId)) return undefined;
    return this.endWaiters.wait(runId, frames);
  }

  isExecutingHere(runId: string): boolean {
    return this.executions.has(runId);
  }

  /** Aborts a run executing on this replica; resolves when it has stopped. False if not here. */
  abortLocal(runId: string, reason: StopReason): Promise<boolean> {
    return this.executions.abort(runId, reason);
  }

  /** Waits for a local execution to finish (no-op when not executing here). */
  settled(runId: string): Promise<void> {
    return this.executions.settled(runId);
  }

  /** `opened`: the run's insert claimed it and opened its segment (see `offerClaim`). */
  /** `thread`: the run's thread as its (held) insert creates it, not to be read. */
  private launch(run: RunRecord, opened = false, thread?: ThreadRecord): void {
    const controller = new LazyAbortController();
    const agentId = run.agent_id;
    this.slots.take(agentId);
    const fence: Fence = { owner: this.owner, epoch: run.lease_epoch };
    // Executing here from now on: readers here know the run is not over, and that nothing of
    // it is stored beyond what it had (its frame writer takes over the tail).
    const dropTail = this.tails.register(run.run_id, {
      storedSeq: () => run.last_seq,
      after: () => [],
    });
    // Claimed by its insert while the engine was stopping: it ends as the runs stop() stopped
    // did, rather than stay claimed by a replica that will not run it.
    if (this.claims.isStopped)
      controller.abort(new StopReason("shutdown", SHUTDOWN_WHILE_EXECUTING));
    const done = executeClaimedRun(this.runContext, run, controller, fence, opened, thread)
      .catch((err) => this.failures.failAfterError(run.run_id, err, fence))
      .finally(() => {
        dropTail();
        this.endWaiters.settle(run.run_id, undefined);
        this.executions.delete(run.run_id);
        this.slots.give(agentId);
        this.claims.slotFreed();
      });
    // Unknown (no lease, or one that does not parse): due at the next tick.
    const written = run.lease_expires_at === null ? Number.NaN : Date.parse(run.lease_expires_at);
    const leaseEnds = Number.isFinite(written) ? written : Date.now();
    this.executions.add(run.run_id, { controller, done, agentId, leaseEnds });
  }

  finishSegment(...args: Parameters<RunRecorder["finishSegment"]>): Promise<void> {
    return this.recorder.finishSegment(...args);
  }

  finishWithoutSegment(run: RunRecord, end: SegmentEnd, fence?: Fence): Promise<void> {
    return this.recorder.finishWithoutSegment(run, end, fence);
  }

  notify(run: RunRecord): void {
    this.recorder.notify(run);
  }
}

const SHUTDOWN_WHILE_EXECUTING = "the server shut down while the run was executing";
