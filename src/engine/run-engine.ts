import type { Logger } from "pino";
import type { AgentAdapter } from "../adapters/types.js";
import { ERRCODE, type SegmentEnd } from "../bridge/outcomes.js";
import { parseRunCommand } from "../bridge/run-command.js";
import { claimLost, isClaimLost } from "../errors.js";
import { newId } from "../ids.js";
import type {
  Fence,
  InsertClaim,
  RunPatch,
  RunRecord,
  Storage,
  ThreadRecord,
} from "../storage/types.js";
import { type EventRejection, executeSegment, type SegmentBounds, StopReason } from "./executor.js";
import type { FrameBus } from "./frame-bus.js";
import { LiveTails } from "./frames/live-tails.js";
import { RunRecorder } from "./run-recorder.js";

/** What the engine needs to know of each configured agent. */
export interface EngineAgent {
  agentId: string;
  name: string;
  adapter: AgentAdapter;
  runTimeoutSeconds: number;
  maxConcurrentRuns: number;
  /** Re-queue runs a restart interrupted instead of failing them. */
  retryOnRestart: boolean;
  /** Drop RAW events and `rawEvent` fields from what is stored and streamed. */
  dropRaw?: boolean;
  /** How large and deep the agent's events and state may be. */
  bounds?: SegmentBounds;
}

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
}

interface Execution {
  controller: AbortController;
  done: Promise<void>;
  agentId: string;
  /** When the lease this replica last wrote for the run ends (ms since the epoch). */
  leaseEnds: number;
}

/**
 * Executes runs off the request path. Runs wait in storage (status `pending`, no owner) until
 * this engine claims them within the global and per-agent limits; nothing is held only in
 * memory, so a queued run survives a restart and any replica may pick it up.
 */
export class RunEngine {
  readonly owner: string;
  private readonly agents: Map<string, EngineAgent>;
  private readonly executing = new Map<string, Execution>();
  private readonly recorder: RunRecorder;
  private readonly activeByAgent = new Map<string, number>();
  /** Slots promised to runs being inserted claimed (see `offerClaim`); counted as executing. */
  private reserved = 0;
  /** Those waiting for the end of a run executing here (see `endOf`). */
  private readonly endWaiters = new Map<string, Array<(run: RunRecord | undefined) => void>>();
  /** Frames of the runs executing here that are published and not stored yet. */
  readonly tails = new LiveTails();
  /** Runs that failed but whose failure could not be stored yet (see failAfterError). */
  private readonly unrecorded = new Map<string, { end: SegmentEnd; fence: Fence }>();
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private pumping = false;
  private pumpAgain = false;
  /**
   * False once a claim for every agent found nothing, until work is announced, a timer or the
   * poll wakes the engine (see `slotFreed`).
   */
  private mayHaveWork = true;
  private stopped = true;
  private pollTimer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private leaseTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: RunEngineOptions) {
    this.owner = options.owner ?? `replica-${newId()}`;
    this.agents = new Map(options.agents.map((agent) => [agent.agentId, agent]));
    this.recorder = new RunRecorder({ ...options, onEnded: (run) => this.settleEnd(run) });
    this.leaseMs = options.leaseMs ?? 30_000;
    this.pollMs = options.pollMs ?? 1_000;
    // Another replica (or this one) asks for a run to stop / announces new work.
    options.bus.onCancel((runId, action) => {
      void this.abortLocal(runId, StopReason.cancel(action));
    });
    options.bus.onWork(() => this.wake());
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
    await this.recover(options.recoverAllOwned);
    this.stopped = false;
    this.pollTimer = setInterval(() => this.wake(), this.pollMs);
    this.pollTimer.unref();
    this.leaseTimer = setInterval(() => void this.renewLeases(), this.renewEveryMs);
    this.leaseTimer.unref();
    this.wake();
  }

  /**
   * Stops claiming, gives running runs `graceMs` to finish, then aborts the rest; each ends as
   * `error` with a description saying the server shut down.
   */
  async stop(graceMs = 0): Promise<void> {
    this.stopped = true;
    clearInterval(this.pollTimer);
    clearInterval(this.leaseTimer);
    clearTimeout(this.wakeTimer);
    const all = () => Promise.allSettled([...this.executing.values()].map((e) => e.done));
    if (graceMs > 0 && this.executing.size > 0) {
      await Promise.race([all(), new Promise((resolve) => setTimeout(resolve, graceMs))]);
    }
    for (const execution of this.executing.values()) {
      execution.controller.abort(new StopReason("shutdown", SHUTDOWN_WHILE_EXECUTING));
    }
    await all();
    // Adapters may hold connections (agui-http keeps a connection pool).
    await Promise.allSettled([...this.agents.values()].map((agent) => agent.adapter.close?.()));
  }

  /** Asks the engine to look for runnable runs now. */
  wake(): void {
    this.mayHaveWork = true;
    this.startPump();
  }

  /**
   * A slot freed: looks for work only if some may be waiting. A run claimed by its own insert
   * leaves nothing behind, so a replica whose runs all start that way reads no queue after
   * each run.
   */
  private slotFreed(): void {
    if (this.mayHaveWork) this.startPump();
  }

  private startPump(): void {
    if (this.stopped) return;
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    void this.pump();
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
      this.stopped ||
      agent === undefined ||
      this.executing.size + this.reserved >= this.options.maxConcurrentRuns ||
      (this.activeByAgent.get(agentId) ?? 0) >= agent.maxConcurrentRuns
    ) {
      return undefined;
    }
    this.reserved++;
    this.activeByAgent.set(agentId, (this.activeByAgent.get(agentId) ?? 0) + 1);
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
    this.reserved--;
    this.activeByAgent.set(agentId, (this.activeByAgent.get(agentId) ?? 1) - 1);
    this.slotFreed();
  }

  /**
   * Starts a run its insert claimed with `offerClaim`'s claim (its first segment is open
   * already); a run the insert left unclaimed frees the slot instead. True when it started.
   */
  launchInserted(run: RunRecord, claim: InsertClaim): boolean {
    if (run.owner !== claim.owner) {
      this.releaseClaim(run.agent_id);
      return false;
    }
    this.reserved--;
    this.activeByAgent.set(run.agent_id, (this.activeByAgent.get(run.agent_id) ?? 1) - 1);
    this.launch(run, true);
    return true;
  }

  /**
   * The run as this replica records its segment's end, for a run executing here: `wait` needs
   * no read of storage then. Resolves `undefined` when the execution ends without recording
   * one (another replica took the run over, or it was re-queued); undefined when the run does
   * not execute here.
   */
  endOf(runId: string): Promise<RunRecord | undefined> | undefined {
    if (!this.executing.has(runId)) return undefined;
    return new Promise((resolve) => {
      const waiters = this.endWaiters.get(runId);
      if (waiters) waiters.push(resolve);
      else this.endWaiters.set(runId, [resolve]);
    });
  }

  private settleEnd(run: RunRecord, ended: RunRecord | undefined = run): void {
    const waiters = this.endWaiters.get(run.run_id);
    if (waiters === undefined) return;
    this.endWaiters.delete(run.run_id);
    for (const resolve of waiters) resolve(ended);
  }

  isExecutingHere(runId: string): boolean {
    return this.executing.has(runId);
  }

  /** Aborts a run executing on this replica; resolves when it has stopped. False if not here. */
  async abortLocal(runId: string, reason: StopReason): Promise<boolean> {
    const execution = this.executing.get(runId);
    if (!execution) return false;
    execution.controller.abort(reason);
    await execution.done;
    return true;
  }

  /** Waits for a local execution to finish (no-op when not executing here). */
  async settled(runId: string): Promise<void> {
    await this.executing.get(runId)?.done;
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        while (
          !this.stopped &&
          this.executing.size + this.reserved < this.options.maxConcurrentRuns
        ) {
          const eligible = this.eligibleAgents();
          if (eligible.length === 0) break;
          const run = await this.storage.claimRun(this.owner, this.leaseMs, new Date(), eligible);
          if (!run) {
            // Nothing claimable for any agent: until something is announced (or the poll), a
            // freed slot has nothing to look for. (A wake meanwhile set it again and pumps again.)
            if (eligible.length === this.agents.size && !this.pumpAgain) this.mayHaveWork = false;
            break;
          }
          // Our own lease lapsed before its renewal (a long synchronous stretch, or a lease
          // shorter than the renewal interval) and the claim just took it back: the run is
          // executing here already and must not start a second time.
          // Its fence stays good: the same owner's claim keeps the lease epoch.
          if (this.executing.has(run.run_id)) continue;
          this.launch(run);
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
    for (const agent of this.agents.values()) {
      if ((this.activeByAgent.get(agent.agentId) ?? 0) < agent.maxConcurrentRuns)
        eligible.push(agent.agentId);
    }
    return eligible;
  }

  private async scheduleNextStart(): Promise<void> {
    clearTimeout(this.wakeTimer);
    const next = await this.storage.nextStartAfter();
    if (!next || this.stopped) return;
    const delay = Date.parse(next) - Date.now();
    // Due already: it waits behind a running run of its thread, whose end wakes us. Far off:
    // the poll catches it.
    if (delay <= 0 || delay > this.pollMs) return;
    this.wakeTimer = setTimeout(() => this.wake(), delay + 5);
    this.wakeTimer.unref();
  }

  /** `opened`: the run's insert claimed it and opened its segment (see `offerClaim`). */
  private launch(run: RunRecord, opened = false): void {
    const controller = new AbortController();
    const agentId = run.agent_id;
    this.activeByAgent.set(agentId, (this.activeByAgent.get(agentId) ?? 0) + 1);
    const fence: Fence = { owner: this.owner, epoch: run.lease_epoch };
    // Executing here from now on: readers here know the run is not over, and that nothing of
    // it is stored beyond what it had (its frame writer takes over the tail).
    const dropTail = this.tails.register(run.run_id, {
      storedSeq: () => run.last_seq,
      after: () => [],
    });
    // Claimed by its insert while the engine was stopping: it ends as the runs stop() stopped
    // did, rather than stay claimed by a replica that will not run it.
    if (this.stopped) controller.abort(new StopReason("shutdown", SHUTDOWN_WHILE_EXECUTING));
    const done = this.runSegment(run, controller, fence, opened)
      .catch((err) => this.failAfterError(run.run_id, err, fence))
      .finally(() => {
        dropTail();
        this.settleEnd(run, undefined);
        this.executing.delete(run.run_id);
        this.activeByAgent.set(agentId, (this.activeByAgent.get(agentId) ?? 1) - 1);
        this.slotFreed();
      });
    // Unknown (no lease, or one that does not parse): due at the next tick.
    const written = run.lease_expires_at === null ? Number.NaN : Date.parse(run.lease_expires_at);
    const leaseEnds = Number.isFinite(written) ? written : Date.now();
    this.executing.set(run.run_id, { controller, done, agentId, leaseEnds });
  }

  /** Every write for the run goes under `fence`, the claim it was launched with. */
  private async runSegment(
    claimedRun: RunRecord,
    controller: AbortController,
    fence: Fence,
    opened: boolean,
  ): Promise<void> {
    let claimed = claimedRun;
    const { storage } = this;
    const agent = this.agents.get(claimed.agent_id);
    const logger = this.options.logger.child({
      run_id: claimed.run_id,
      thread_id: claimed.thread_id,
      agent: agent?.name,
    });
    const thread =
      opened && claimed.kind === "stateless" && claimed.thread_id
        ? hiddenThreadOf(claimed)
        : claimed.thread_id
          ? await storage.getThread(claimed.thread_id)
          : null;

    // A segment still open means the replica executing it died (its lease ran out), unless
    // the run's own insert opened it just now.
    if (!opened && claimed.segments.at(-1)?.ended_at === null) {
      if (!agent?.retryOnRestart) {
        await this.finishWithoutSegment(claimed, RESTART_END, fence);
        logger.warn("failed a run whose executor died");
        return;
      }
      // Safe to retry: the dead segment starts over (left in place, it would count as a resume).
      claimed = { ...claimed, segments: claimed.segments.filter((s) => s.ended_at !== null) };
      logger.info("retrying a run whose executor died");
    }
    if (claimed.cancel_requested) {
      await this.finishWithoutSegment(claimed, cancelledEnd(claimed.cancel_requested), fence);
      return;
    }
    if (!agent || !thread) {
      const description = !agent
        ? `agent ${claimed.agent_id} is no longer configured on this server`
        : "the run's thread no longer exists";
      await this.finishWithoutSegment(
        claimed,
        { kind: "error", errcode: ERRCODE.agentError, description },
        fence,
      );
      return;
    }

    const run = opened ? claimed : await this.openSegment(claimed, thread, fence);
    logger.debug({ segment: run.segments.length - 1, agent: agent.name }, "segment started");

    const timeout = this.armTimeout(agent, claimed, controller);
    try {
      const outcome = await executeSegment({
        storage,
        bus: this.bus,
        adapter: agent.adapter,
        run,
        command: parseRunCommand(run.creation),
        thread,
        signal: controller.signal,
        logger,
        fence,
        tails: this.tails,
        maxEvents: this.options.maxEventsPerRun,
        dropRaw: agent.dropRaw,
        bounds: agent.bounds,
        onEvent:
          this.options.onEvent && ((rejected) => this.options.onEvent!(agent.name, rejected)),
      });
      const reason: unknown = controller.signal.reason;
      // Stopped because another replica took the run over (see renewLeases): nothing to record.
      if (isClaimLost(reason)) throw reason;
      if (agent.retryOnRestart && reason instanceof StopReason && reason.kind === "shutdown") {
        // Safe to retry: back to the queue for the next server to start over, as after a crash.
        await outcome.writer.flush();
        await storage.updateRun(
          run.run_id,
          { owner: null, lease_expires_at: null, segments: claimed.segments },
          fence,
        );
        logger.info("re-queued a run stopped by shutdown");
        return;
      }
      await this.finishSegment(run, outcome.end, outcome.values, outcome.messages, outcome.writer);
    } finally {
      clearTimeout(timeout);
    }
  }

  /**
   * Writes a claimed run's new segment (its start, or a resume's): the segment, and the
   * checkpoint the run started from. (A run its insert claimed has it already.)
   */
  private async openSegment(
    claimed: RunRecord,
    thread: ThreadRecord,
    fence: Fence,
  ): Promise<RunRecord> {
    const segments = [
      ...claimed.segments,
      { agui_run_id: newId(), started_at: now(), ended_at: null },
    ];
    const patch: RunPatch = { segments, resume: claimed.resume };
    if (claimed.segments.length === 0) patch.checkpoint_before = thread.checkpoint_id;
    const run = await this.storage.updateRun(claimed.run_id, patch, fence);
    // Creating or resuming the run made its thread busy already (the usual case): no write then.
    if (thread.status !== "busy") await this.storage.setThreadStatus(thread.thread_id, "busy");
    return run;
  }

  /**
   * A run whose execution threw (a write of its own that failed: storage full, a broken row…)
   * ends as an error naming the cause, so that it does not stay pending, owned by a replica
   * that no longer executes it. If even that cannot be stored, its followers are still told
   * how it ended, and recording it is tried again with each lease renewal. Never throws: one
   * run's failure is not the server's.
   *
   * A write refused because the claim passed to another replica is no failure of the run: the
   * survivor owns its record, so nothing is written or published from here.
   */
  private async failAfterError(runId: string, err: unknown, fence: Fence): Promise<void> {
    if (isClaimLost(err)) {
      this.options.logger.warn(
        { run_id: runId },
        "lost the claim on a run to another replica; stopped executing it without recording an outcome",
      );
      return;
    }
    this.options.logger.error({ err, run_id: runId }, "run execution failed");
    const message = err instanceof Error ? err.message : String(err);
    const end: SegmentEnd = {
      kind: "error",
      errcode: ERRCODE.storageFailure,
      description: `the server could not complete the run: ${message}`,
    };
    this.unrecorded.set(runId, { end, fence });
    const lastSeq = await this.recordFailure(runId, end, fence);
    if (lastSeq === null) return;
    const output = {
      type: "error",
      run_id: runId,
      errcode: end.errcode,
      description: end.description,
    };
    const data = JSON.stringify({ type: "values", run_id: runId, status: "error", output });
    this.bus.publish(runId, [{ run_id: runId, seq: lastSeq + 1, mode: "final", data }]);
  }

  /**
   * Records a failure held in `unrecorded`, and forgets it once recorded or once the run is no
   * longer this replica's. Returns the run's last seq when it could not be recorded (null when
   * it was, or when not even the run could be read).
   */
  private async recordFailure(
    runId: string,
    end: SegmentEnd,
    fence: Fence,
  ): Promise<number | null> {
    let current: RunRecord | null = null;
    try {
      current = await this.storage.getRun(runId);
      // Gone, ended after all, or taken over: nothing here to record.
      if (current?.status === "pending" && current.owner === this.owner) {
        await this.finishWithoutSegment(current, end, fence);
      }
      this.unrecorded.delete(runId);
      return null;
    } catch (err) {
      if (isClaimLost(err)) {
        this.unrecorded.delete(runId);
        return null;
      }
      this.options.logger.error(
        { err, run_id: runId },
        "could not record that the run failed; trying again later",
      );
      return current?.last_seq ?? null;
    }
  }

  /**
   * The time limit covers the whole run: each resumed segment gets what the earlier segments
   * left of it. `runTimeoutSeconds: 0` means no limit.
   */
  private armTimeout(agent: EngineAgent, run: RunRecord, controller: AbortController) {
    if (agent.runTimeoutSeconds <= 0) return undefined;
    const used = run.segments.reduce(
      (sum, segment) =>
        segment.ended_at
          ? sum + (Date.parse(segment.ended_at) - Date.parse(segment.started_at))
          : sum,
      0,
    );
    const left = Math.max(0, agent.runTimeoutSeconds * 1000 - used);
    return setTimeout(
      () =>
        controller.abort(
          new StopReason(
            "timeout",
            `the run exceeded its time limit of ${agent.runTimeoutSeconds} s`,
          ),
        ),
      left,
    );
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

  /**
   * With an embedded database (one process: storage refuses a file another live process holds)
   * every run still owned at start-up belonged to a process that died: take them back now. With a shared database nothing is done here: a dead
   * replica's runs become claimable when their lease runs out, and `runSegment` resolves them.
   */
  private async recover(recoverAllOwned: boolean): Promise<void> {
    if (!recoverAllOwned) return;
    const { storage } = this;
    const pending = await storage.searchRuns({ status: "pending", limit: 100_000, offset: 0 });
    for (const run of pending.filter((r) => !this.agents.has(r.agent_id))) {
      // No agent will ever claim it: end it rather than leave it pending forever.
      await this.finishWithoutSegment(run, {
        kind: "error",
        errcode: ERRCODE.agentError,
        description: `agent ${run.agent_id} is no longer configured on this server`,
      });
    }
    const owned = pending.filter((run) => run.owner && this.agents.has(run.agent_id));
    for (const run of owned) {
      // Released, not resolved: runSegment decides (error, or a retry) when it claims them.
      await storage.updateRun(run.run_id, { owner: null, lease_expires_at: null });
    }
    if (owned.length > 0)
      this.options.logger.info({ runs: owned.length }, "took back runs of a previous process");
  }

  /**
   * Keeps this replica's claims alive, and stops a run whose cancel we missed (the bus delivers
   * cancels promptly, but a notification lost in a reconnect must not be fatal). Both happen on
   * the ticks when some run is due for renewal (see anyLeaseDue): a run too young for one has
   * its cancel backstop at its first renewal, at most one interval later than before.
   */
  private async renewLeases(): Promise<void> {
    if (!this.anyLeaseDue() && this.unrecorded.size === 0) return;
    try {
      for (const [runId, { end, fence }] of [...this.unrecorded]) {
        await this.recordFailure(runId, end, fence);
      }
      const now = new Date();
      const held = new Set(await this.storage.renewLeases(this.owner, this.leaseMs, now));
      for (const [runId, execution] of this.executing) {
        if (held.has(runId)) execution.leaseEnds = now.getTime() + this.leaseMs;
      }
      for (const runId of [...this.executing.keys()]) {
        if (!held.has(runId)) {
          // Only pending runs are renewed: one whose outcome was just recorded (its execution
          // is still winding down) is not lost, it is done.
          const current = await this.storage.getRun(runId);
          if (current?.status !== "pending" || current.owner === this.owner) continue;
          // Our lease lapsed (this process stalled longer than the lease) and another replica
          // may have taken the run over. Recording an outcome from here could overwrite its
          // work (its writes are fenced and would be refused anyway), so only say so and stop
          // executing it: the run's record belongs to whoever holds the claim.
          this.options.logger.warn({ run_id: runId }, "lost the claim on a run to another replica");
          this.executing.get(runId)?.controller.abort(claimLost(runId));
          continue;
        }
        const run = await this.storage.getRun(runId);
        if (run?.cancel_requested) {
          void this.abortLocal(runId, StopReason.cancel(run.cancel_requested));
        }
      }
    } catch (err) {
      this.options.logger.error({ err }, "could not renew run leases");
    }
  }

  private get renewEveryMs(): number {
    return Math.max(1000, this.leaseMs / 3);
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
    const heldLongest = Math.max(0, this.leaseMs / 2 - this.renewEveryMs);
    const dueBefore = Date.now() + this.leaseMs - heldLongest;
    for (const execution of this.executing.values()) {
      if (execution.leaseEnds < dueBefore) return true;
    }
    return false;
  }
}

/** How a run ends when the process executing it died (and the agent may not retry it). */
const RESTART_END: SegmentEnd = {
  kind: "error",
  errcode: ERRCODE.serverRestart,
  description: "the server restarted while the run was executing; the run did not complete",
};

function cancelledEnd(action: "interrupt" | "rollback"): SegmentEnd {
  return {
    kind: "cancelled",
    description: "run was cancelled before it started",
    rollback: action === "rollback",
  };
}

function now(): string {
  return new Date().toISOString();
}

const SHUTDOWN_WHILE_EXECUTING = "the server shut down while the run was executing";

/**
 * The hidden thread a stateless run's insert just created, as that insert wrote it (see
 * `InsertRunOptions.create_hidden_thread`): nothing else can have changed it since, so it is
 * not read back.
 */
function hiddenThreadOf(run: RunRecord): ThreadRecord {
  return {
    thread_id: run.thread_id!,
    created_at: run.created_at,
    updated_at: run.created_at,
    metadata: {},
    status: "busy",
    values: null,
    messages: null,
    checkpoint_id: null,
    hidden: true,
    principal: run.principal,
  };
}
