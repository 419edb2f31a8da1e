import type { Interrupt } from "@ag-ui/core";
import { ownerFilter, type Principal, reaches, SYSTEM } from "../auth/principal.js";
import { type ResumeValidators, resumeEntries } from "../bridge/acp/interrupts.js";
import { ERRCODE } from "../bridge/acp/outcomes.js";
import type { FaceRunCommand } from "../bridge/acp/run-command.js";
import type {
  CheckpointRecord,
  RunFrame,
  RunKind,
  RunRecord,
  RunSearch,
  RunStatus,
  ThreadRecord,
} from "../storage/types.js";
import { conflict, notFound } from "../util/errors.js";
import { listenForAbort, StopReason } from "./executor.js";
import { type ReadFrame, readFinal } from "./frames/codec.js";
import { followRunBatches, type RunStreamOptions } from "./frames/follow.js";
import { QueueRoom } from "./queue-room.js";
import { waitForRunChange } from "./run-changes.js";
import { RunCreation } from "./run-creation.js";
import { LazyAbortController } from "./run-engine/lazy-abort.js";
import type { CreatedRun, RunServiceOptions } from "./run-types.js";
import { rememberResumer } from "./segment-tracing.js";

export type { AgentCatalog, CreatedRun, RunnableAgent, RunServiceOptions } from "./run-types.js";

/** How a run deleted by a rollback ended, as its final frame says. */
const ROLLED_BACK = StopReason.cancel("rollback").message;

/**
 * The ACP run operations, HTTP-free: create (with multitask strategies), resume, cancel,
 * delete, read, search, wait. Execution itself is the engine's; this validates and records.
 * Every operation acts as a principal (see src/auth/principal.ts): a run it may not reach is
 * `not_found`, and searches return its own runs only. A stateless run belongs to its creator; a
 * thread run to the thread's owner (only the owner, or an admin acting for it, can start one).
 */
export class RunService {
  /** Each agent's bounded queue. */
  private readonly queueRoom: QueueRoom;
  /** Validating, placing and inserting new runs (run-creation.ts). */
  private readonly creation: RunCreation;

  constructor(private readonly options: RunServiceOptions) {
    this.queueRoom = new QueueRoom(options.engine.storage);
    this.creation = new RunCreation(options, this.queueRoom, (threadId, kind) =>
      this.stopPendingRuns(threadId, kind),
    );
  }

  /** The storage behind the runs; HTTP reaches it only through this service's methods. */
  private get storage() {
    return this.options.engine.storage;
  }

  /**
   * A run's frames after `afterSeq`, replayed from storage and then followed live until the
   * run ends or the signal aborts, in the batches they come in (see frames/follow.ts).
   */
  followBatches(runId: string, options: RunStreamOptions): AsyncGenerator<ReadFrame[]> {
    const { engine } = this.options;
    // A reader of full frames completes a run's final frame from its output: from the run as it
    // is recorded here when it executes here, instead of reading it back.
    const localEnd = options.read === "events" ? undefined : engine.endOf(runId);
    return followRunBatches(
      engine.storage,
      engine.bus,
      runId,
      { localEnd, ...options },
      engine.tails,
    );
  }

  /**
   * The newest frame of the run that is stored. A run executing here publishes its frames
   * before it stores them (frames/writer.ts), so a follower here reads some that are in memory
   * only: lost if this replica dies, and numbered again by the replica that reruns the run.
   * Infinite for a run not executing here: what a follower reads of it is stored.
   */
  storedSeq(runId: string): number {
    return this.options.engine.tails.get(runId)?.storedSeq() ?? Number.POSITIVE_INFINITY;
  }

  async create(
    who: Principal,
    kind: RunKind,
    command: FaceRunCommand,
    threadId?: string,
    /** The metadata of the thread when the run creates it (`ifNotExists: "create"`). */
    newThreadMetadata?: Record<string, unknown>,
    /**
     * The thread as the caller just read it (null: none), so that it is not read again. A
     * thread created meanwhile is still found: the run's insert does not create it twice.
     */
    knownThread?: ThreadRecord | null,
  ): Promise<RunRecord> {
    return (
      await this.creation.create(
        who,
        kind,
        command,
        threadId,
        false,
        newThreadMetadata,
        knownThread,
      )
    ).run;
  }

  /**
   * `create` for a caller that answers only at the run's end (`wait`): a run this replica
   * claims may then execute while its insert is held (`Storage.insertRunHeld`), so that a short
   * run is written once, ended. Nobody can see the run before its insert commits, and its
   * creator gets it back only then. Pass `ended` on to `waitFor`.
   */
  createToWait(
    who: Principal,
    kind: RunKind,
    command: FaceRunCommand,
    threadId?: string,
    /**
     * `freshThread`: `threadId` was made by the server for this run, no thread has it and
     * nobody else knows it yet (a new A2A context): it is created with the run, and both may
     * be written once, at the run's end (`Storage.insertRunOnNewThreadHeld`).
     */
    options: { freshThread?: boolean } = {},
  ): Promise<CreatedRun> {
    const fresh = options.freshThread === true;
    return this.creation.create(
      who,
      kind,
      command,
      threadId,
      true,
      {},
      fresh ? null : undefined,
      fresh,
    );
  }

  async get(who: Principal, runId: string, kind: RunKind, threadId?: string): Promise<RunRecord> {
    const run = await this.storage.getRun(runId);
    if (
      !run ||
      run.kind !== kind ||
      (threadId !== undefined && run.thread_id !== threadId) ||
      !reaches(who, run.principal)
    ) {
      throw notFound("run", runId);
    }
    return run;
  }

  /** The caller's runs only, and of the agents it may use only: filtered in the query. */
  search(who: Principal, search: Partial<RunSearch>): Promise<RunRecord[]> {
    return this.storage.searchRuns(this.callersQuery(who, search));
  }

  /** How many of the caller's runs `search` matches, over all its pages. */
  count(who: Principal, search: Partial<RunSearch>): Promise<number> {
    return this.storage.countSearchRuns(this.callersQuery(who, search));
  }

  private callersQuery(who: Principal, search: Partial<RunSearch>): RunSearch {
    const query: RunSearch = {
      limit: search.limit ?? 10,
      offset: search.offset ?? 0,
      principal: ownerFilter(who),
    };
    if (who.agentIds) query.agent_ids = [...who.agentIds];
    if (search.agent_id) query.agent_id = search.agent_id;
    if (search.status) query.status = search.status as RunStatus;
    if (search.metadata) query.metadata = search.metadata;
    if (search.kind) query.kind = search.kind;
    if (search.thread_id) query.thread_id = search.thread_id;
    // The A2A face's task filters and its stable, most-recently-updated-first order.
    if (search.statuses) query.statuses = search.statuses;
    if (search.started !== undefined) query.started = search.started;
    if (search.errcode) query.errcode = search.errcode;
    if (search.updated_since) query.updated_since = search.updated_since;
    if (search.order) query.order = search.order;
    if (search.after) query.after = search.after;
    return query;
  }

  async listThreadRuns(
    who: Principal,
    threadId: string,
    limit: number,
    offset: number,
  ): Promise<RunRecord[]> {
    const thread = await this.storage.getThread(threadId);
    if (!thread || thread.hidden || !reaches(who, thread.principal)) {
      throw notFound("thread", threadId);
    }
    return this.search(who, { thread_id: threadId, kind: "stateful", limit, offset });
  }

  async resume(
    who: Principal,
    runId: string,
    kind: RunKind,
    body: Record<string, unknown>,
    threadId?: string,
  ): Promise<RunRecord> {
    const run = await this.get(who, runId, kind, threadId);
    if (run.status !== "interrupted") {
      throw conflict(
        `run ${runId} is ${run.status}, not interrupted: only an interrupted run can be resumed`,
      );
    }
    const agent = this.options.catalog.get(run.agent_id);
    if (!agent) throw conflict(`agent ${run.agent_id} of run ${runId} is no longer configured`);
    const validators: ResumeValidators = {
      validatePayload: (type, payload) => agent.validateResume(type, payload),
      validateEntry: (entry) => this.options.validateResumeEntry(entry),
      validateResponse: this.options.validateResponse,
    };
    const entries = resumeEntries(body, run.interrupts as unknown as Interrupt[], validators);
    this.queueRoom.resumed(run.agent_id);
    // Before the update: once it commits, a claim loop may start the segment.
    rememberResumer(runId);
    const resumed = await this.storage.updateRun(runId, {
      status: "pending",
      resume: entries as unknown as Record<string, unknown>[],
      interrupts: [],
      output: null,
      start_after: new Date().toISOString(),
    });
    if (resumed.thread_id) await this.storage.setThreadStatus(resumed.thread_id, "busy");
    this.options.engine.notify(resumed);
    this.options.engine.workAvailable();
    return resumed;
  }

  /** Cancels a run. Finished runs are left as they are (cancel is idempotent). */
  async cancel(
    who: Principal,
    runId: string,
    kind: RunKind,
    options: { action: "interrupt" | "rollback"; wait: boolean },
    threadId?: string,
  ): Promise<void> {
    const run = await this.get(who, runId, kind, threadId);
    const stopping = this.stop(run, options.action === "rollback" ? "rollback" : "cancel");
    if (options.wait) await stopping;
    else stopping.catch(() => undefined);
  }

  async delete(who: Principal, runId: string, kind: RunKind, threadId?: string): Promise<void> {
    const run = await this.get(who, runId, kind, threadId);
    if (run.status === "pending")
      throw conflict(`run ${runId} is pending: cancel it before deleting it`);
    await this.storage.deleteRun(runId);
  }

  /** Blocks until the run is no longer pending (success, error, timeout or interrupted). */
  async wait(
    who: Principal,
    runId: string,
    kind: RunKind,
    signal: AbortSignal,
    threadId?: string,
  ): Promise<RunRecord> {
    return this.waitFor(await this.get(who, runId, kind, threadId), signal);
  }

  /** `wait` for a run record in hand (one just created): no need to read it again first. */
  async waitFor(
    run: RunRecord,
    /** The caller leaving; a LazyAbortController makes no AbortSignal unless the wait needs one. */
    gone: AbortSignal | LazyAbortController,
    /** `CreatedRun.ended`, for a run just created. */
    endedHere?: Promise<RunRecord | undefined>,
  ): Promise<RunRecord> {
    const runId = run.run_id;
    if (run.status !== "pending") return run;
    // Executing here: its end, as recorded, is handed over without reading it back.
    const local = endedHere ?? this.options.engine.endOf(runId);
    if (local !== undefined) {
      const end = await valueUnlessAborted(local, gone);
      if (end !== undefined) return end;
      if (gone.aborted) return run;
    }
    const signal = gone instanceof LazyAbortController ? gone.signal : gone;
    let last: RunFrame | undefined;
    for await (const frames of this.followBatches(runId, {
      afterSeq: run.last_seq,
      signal,
      read: "events",
    })) {
      // Only the end matters here; the stream's last frame is the run's final frame.
      last = frames[frames.length - 1];
    }
    const ended = await this.storage.getRun(runId);
    if (ended) return ended;
    // Rolled back (deleted) meanwhile: its final frame still says how it ended.
    const final = last && readFinal(last);
    if (final) return { ...run, status: final.status, output: final.output };
    if (signal.aborted) return run;
    // Gone without its final frame reaching us (it was published on another replica): only a
    // rollback deletes a pending run.
    const output = {
      type: "error",
      run_id: runId,
      errcode: ERRCODE.cancelled,
      description: ROLLED_BACK,
    };
    return { ...run, status: "error", output };
  }

  /** Waits until an interrupted (or ended) run changes, on any replica: see run-changes.ts. */
  waitForChange(run: RunRecord, signal: AbortSignal): Promise<RunRecord | null> {
    return waitForRunChange(this.storage, this.options.engine.bus, run, signal);
  }

  private async stopPendingRuns(threadId: string, kind: "cancel" | "rollback"): Promise<void> {
    const pending = await this.storage.pendingRunsOfThread(threadId);
    await Promise.all(pending.map((run) => this.stop(run, kind)));
  }

  /** Stops a run wherever it is: executing here, queued, or interrupted. Resolves when stopped. */
  private async stop(run: RunRecord, kind: "cancel" | "rollback"): Promise<void> {
    const { engine } = this.options;
    const reason = StopReason.cancel(kind === "rollback" ? "rollback" : "interrupt");
    if (await engine.abortLocal(run.run_id, reason)) return;
    if (run.status !== "pending" && run.status !== "interrupted") return;
    // Queued or interrupted: claim it so no scheduler starts it meanwhile, then end it here.
    const claimed = await this.storage.claimRunById(run.run_id, engine.owner, 60_000, new Date());
    if (claimed) {
      await engine.finishWithoutSegment(claimed, {
        kind: "cancelled",
        description: reason.message,
        rollback: kind === "rollback",
      });
      return;
    }
    // Claimed meanwhile: by this replica (just launched) or by another one.
    if (await engine.abortLocal(run.run_id, reason)) return;
    if ((await this.storage.getRun(run.run_id))?.status === "pending") {
      // Executing on another replica: ask its owner to stop, then wait for it.
      await this.storage.updateRun(run.run_id, {
        cancel_requested: kind === "rollback" ? "rollback" : "interrupt",
      });
      this.options.engine.bus.requestCancel(
        run.run_id,
        kind === "rollback" ? "rollback" : "interrupt",
      );
      await this.wait(SYSTEM, run.run_id, run.kind, AbortSignal.timeout(60_000)).catch(
        () => undefined,
      );
    }
  }

  // Reads for the faces and the auth hook, which look runs up by other keys than ACP's routes.

  /** A run of any kind, when `who` may reach it; undefined for another principal's or none. */
  async findReachable(who: Principal, runId: string): Promise<RunRecord | undefined> {
    const run = await this.storage.getRun(runId);
    return run && reaches(who, run.principal) ? run : undefined;
  }

  /** The runs in progress on a thread `who` may reach, oldest first; none on any other thread. */
  async runsInProgressOn(who: Principal, threadId: string): Promise<RunRecord[]> {
    const thread = await this.storage.getThread(threadId);
    if (!thread || !reaches(who, thread.principal)) return [];
    return this.storage.pendingRunsOfThread(threadId);
  }

  /** A thread's latest runs, whoever started them (the caller checked the thread is theirs). */
  recentRunsOfThread(threadId: string, limit: number): Promise<RunRecord[]> {
    return this.storage.searchRuns({ thread_id: threadId, limit, offset: 0 });
  }

  /**
   * What a reconnecting client's replay of a thread is built from, read in this order: the
   * thread, its runs in progress, its latest stateful runs, then the oldest run in progress
   * again (read after the thread, so a run that had not started then changed nothing in what
   * was read) and the checkpoint it began from. `undefined` for a thread `who` may not reach.
   */
  async replaySource(who: Principal, threadId: string): Promise<ReplaySource | undefined> {
    const storage = this.storage;
    const thread = await storage.getThread(threadId);
    if (!thread || thread.hidden || !reaches(who, thread.principal)) return undefined;
    // Captured once: runs started after this connect are not part of it.
    const pending = await storage.pendingRunsOfThread(threadId);
    const recent = await storage.searchRuns({
      thread_id: threadId,
      kind: "stateful",
      limit: 20,
      offset: 0,
    });
    const oldest = pending[0];
    const current = oldest && ((await storage.getRun(oldest.run_id)) ?? oldest);
    const checkpointBefore =
      current && current.segments.length > 0 && current.checkpoint_before
        ? await storage.getCheckpoint(threadId, current.checkpoint_before)
        : null;
    return { thread, pending, recent, current, checkpointBefore };
  }
}

/** See `RunService.replaySource`. */
export interface ReplaySource {
  thread: ThreadRecord;
  /** The runs in progress when the replay started, oldest first. */
  pending: RunRecord[];
  /** The thread's latest stateful runs, newest first. */
  recent: RunRecord[];
  /** The oldest run in progress, read again after the thread; `undefined` when none. */
  current: RunRecord | undefined;
  /** The checkpoint `current` began from, when it started and has one. */
  checkpointBefore: CheckpointRecord | null;
}

/** `promise`'s value, or undefined as soon as `signal` aborts. */
function valueUnlessAborted<T>(
  promise: Promise<T>,
  signal: AbortSignal | LazyAbortController,
): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const onAbort = () => resolve(undefined);
    const unlisten = listenForAbort(signal, onAbort);
    promise.then(
      (value) => {
        unlisten();
        resolve(value);
      },
      () => {
        unlisten();
        resolve(undefined);
      },
    );
  });
}
