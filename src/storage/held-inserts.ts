import { assertObject, toJson } from "./json.js";
import { addMs, isoTimestamp, nowIso } from "./records.js";
import type {
  CreateThreadInput,
  Fence,
  FinishRunWrites,
  InsertRunOptions,
  NewRun,
  RunFrame,
  RunPatch,
  RunRecord,
  ThreadOnFinish,
  ThreadRecord,
} from "./types.js";

/**
 * How long a held insert waits for its run's end at most (ms). A `wait` on the echo agent ends
 * within a few turns of the event loop; a longer run stores its first frames within the frame
 * writer's delay (50 ms), which releases its insert first anyway.
 */
export const HOLD_MS = 20;

/** A run's end, as `finishRun` was given it, merged into the run's held insert. */
export interface HeldEnd {
  patch: RunPatch;
  /** How the run's thread ends: deleted (a stateless run's) or its status (a new thread's). */
  thread: ThreadOnFinish;
  fence: Fence;
  writes: FinishRunWrites | undefined;
}

/** Queues the held run's write: as inserted, or written once with its end. */
type StartWrite = (end: HeldEnd | undefined) => Promise<RunRecord>;

interface Held {
  record: RunRecord;
  /** The run's insert creates its (visible) thread: a stateful run on a new thread. */
  newThread: boolean;
  committed: Promise<RunRecord>;
  timer: NodeJS.Timeout;
  start: (end: HeldEnd | undefined) => Promise<RunRecord>;
}

/**
 * The inserts held back for their run's end (see `Storage.insertRunHeld`). Until its insert is
 * queued, a held run does not exist for any reader. The first write that concerns the run (or
 * its hidden thread) queues the insert ahead of itself, so every write after the insert finds
 * the row as it always did; only the run's end, when it comes first, is merged into the insert.
 */
export class HeldInserts {
  readonly #byRun = new Map<string, Held>();
  /** Hidden thread id → run id. */
  readonly #byThread = new Map<string, string>();
  /** Inserts queued and not yet settled, by run id and by hidden thread id (see `before`). */
  readonly #queued = new Map<string, Promise<unknown>>();

  /**
   * Holds `record`'s insert; resolves with `record` once it is committed (rejects when its
   * write failed, which then wrote nothing).
   */
  hold(record: RunRecord, startWrite: StartWrite, newThread = false): Promise<RunRecord> {
    let settle!: (committed: Promise<RunRecord>) => void;
    const committed = new Promise<RunRecord>((resolve) => {
      settle = resolve;
    });
    const runId = record.run_id;
    const held: Held = {
      record,
      newThread,
      committed,
      timer: setTimeout(() => this.release(runId), HOLD_MS),
      start: (end) => {
        const written = startWrite(end);
        settle(written.then(() => record));
        const done = written.then(
          () => undefined,
          () => undefined,
        );
        const keys = record.thread_id === null ? [runId] : [runId, record.thread_id];
        for (const key of keys) this.#queued.set(key, done);
        void done.then(() => {
          for (const key of keys) if (this.#queued.get(key) === done) this.#queued.delete(key);
        });
        return written;
      },
    };
    held.timer.unref();
    this.#byRun.set(runId, held);
    if (record.thread_id !== null) this.#byThread.set(record.thread_id, runId);
    return committed;
  }

  /** Queues the run's insert, if it is held, ahead of a write that concerns it. */
  release(runId: string): void {
    this.#take(runId)?.start(undefined);
  }

  /** `release` for the run whose hidden thread this is. */
  releaseThread(threadId: string): void {
    const runId = this.#byThread.get(threadId);
    if (runId !== undefined) this.release(runId);
  }

  /**
   * `release`, for a storage whose writes may commit out of the order they were queued in
   * (PostgreSQL's groups run on several connections at once): also the settling of the run's
   * insert when it is queued and not yet committed, for the write that concerns the run to
   * await before it is queued. Undefined when there is nothing to wait for.
   */
  before(runId: string): Promise<unknown> | undefined {
    this.release(runId);
    return this.#queued.get(runId);
  }

  /** `before` for the run whose hidden thread this is. */
  beforeThread(threadId: string): Promise<unknown> | undefined {
    this.releaseThread(threadId);
    return this.#queued.get(threadId);
  }

  /** `before` for every run: every held insert queued, and the settling of those in flight. */
  beforeAll(): Promise<unknown> | undefined {
    this.releaseAll();
    return this.#queued.size === 0 ? undefined : Promise.all(this.#queued.values());
  }

  /** Queues every held insert (the storage is closing). */
  releaseAll(): void {
    for (const runId of [...this.#byRun.keys()]) this.release(runId);
  }

  /**
   * The run's end, written with its held insert as one row when it can be: the end of the
   * execution its insert claimed (the same fence), deleting its hidden thread, with frames of
   * that run only. Resolves as `finishRun` does, after the insert's own promise. Undefined when
   * the run is not held or its end cannot be merged (then its insert has been queued).
   */
  end(
    runId: string,
    patch: RunPatch,
    thread: ThreadOnFinish,
    fence: Fence | undefined,
    writes: FinishRunWrites | undefined,
  ): Promise<RunRecord> | undefined {
    const held = this.#byRun.get(runId);
    if (held === undefined) return undefined;
    const { record } = held;
    // A stateless run's hidden thread is deleted at its end (its checkpoint would go with it);
    // a new thread stays, with the run's checkpoint and its status.
    const threadEnd = held.newThread
      ? "status" in thread
      : "delete" in thread && writes?.checkpoint === undefined;
    const mergeable =
      threadEnd &&
      fence !== undefined &&
      fence.owner === record.owner &&
      fence.epoch === record.lease_epoch &&
      (writes?.frames ?? []).every((frame) => frame.run_id === runId);
    if (!mergeable) {
      this.release(runId);
      return undefined;
    }
    this.#take(runId);
    const written = held.start({ patch, thread, fence, writes });
    // After the insert's own promise, whose creator awaited it first: the run's creation is
    // heard of (status hooks, its creator's answer) before its end.
    return held.committed.then(() => written);
  }

  #take(runId: string): Held | undefined {
    const held = this.#byRun.get(runId);
    if (held === undefined) return undefined;
    this.#byRun.delete(runId);
    if (held.record.thread_id !== null) this.#byThread.delete(held.record.thread_id);
    clearTimeout(held.timer);
    return held;
  }
}

/**
 * The record a held insert writes, told without a read: a stateless run with a hidden thread of
 * its own (nothing else can be pending on it), claimed by its insert and due now, no queue limit
 * for the insert to count. Undefined otherwise (the storage calls `insertRun` then).
 */
export function planHeldRun(run: NewRun, options: InsertRunOptions): RunRecord | undefined {
  if (
    run.kind !== "stateless" ||
    options.create_hidden_thread !== true ||
    options.reject_if_busy === true ||
    options.mark_thread_busy === true
  ) {
    return undefined;
  }
  return plannedRecord(run, options);
}

/**
 * `planHeldRun` for a stateful run on a thread its insert creates (`thread`, made with the
 * run: busy, no checkpoint, nothing pending on it), with the thread as that insert creates it.
 */
export function planHeldRunOnNewThread(
  thread: CreateThreadInput,
  run: NewRun,
  options: InsertRunOptions,
): { record: RunRecord; thread: ThreadRecord } | undefined {
  if (
    run.kind !== "stateful" ||
    run.thread_id !== thread.thread_id ||
    thread.hidden === true ||
    options.create_hidden_thread === true ||
    options.mark_thread_busy !== true
  ) {
    return undefined;
  }
  const record = plannedRecord(run, options);
  if (record === undefined) return undefined;
  assertObject(thread.metadata, "thread metadata");
  return {
    record,
    thread: {
      thread_id: thread.thread_id,
      created_at: record.created_at,
      updated_at: record.created_at,
      // As read back from the row: what JSON keeps of it.
      metadata: JSON.parse(toJson(thread.metadata)) as Record<string, unknown>,
      status: "busy",
      values: null,
      messages: null,
      checkpoint_id: null,
      hidden: false,
      principal: thread.principal ?? null,
    },
  };
}

/** The record of a run its insert claims, due now, no queue limit to count; else undefined. */
function plannedRecord(run: NewRun, options: InsertRunOptions): RunRecord | undefined {
  const { claim } = options;
  if (claim === undefined || options.queue_limit !== undefined) return undefined;
  const startAfter = isoTimestamp(run.start_after, "start_after");
  if (Date.parse(startAfter) > claim.now.getTime()) return undefined;
  assertObject(run.creation, "run creation");
  assertObject(run.metadata, "run metadata");
  const now = nowIso();
  return {
    run_id: run.run_id,
    thread_id: run.thread_id,
    agent_id: run.agent_id,
    kind: run.kind,
    status: "pending",
    created_at: now,
    updated_at: now,
    // As read back from the row: what JSON keeps of them.
    creation: JSON.parse(toJson(run.creation)) as Record<string, unknown>,
    metadata: JSON.parse(toJson(run.metadata)) as Record<string, unknown>,
    output: null,
    interrupts: [],
    resume: null,
    // Claimed at once: as `claim` would leave it (a first claim is epoch 1).
    segments: [claim.segment],
    start_after: startAfter,
    checkpoint_before: null,
    owner: claim.owner,
    lease_expires_at: addMs(claim.now, claim.leaseMs),
    lease_epoch: 1,
    cancel_requested: null,
    last_seq: 0,
    principal: run.principal ?? null,
    trace_context: run.trace_context ?? null,
    face: run.face ?? null,
  };
}

/**
 * A planned run as its end leaves it, written once: `patch` applied, its hidden thread never
 * created (thread_id NULL, as its deletion leaves it), last_seq that of its end's frames.
 */
export function finishedHeldRun(
  record: RunRecord,
  patch: RunPatch,
  frames: RunFrame[],
  keepThread = false,
): RunRecord {
  const finished: RunRecord = {
    ...record,
    thread_id: keepThread ? record.thread_id : null,
    updated_at: nowIso(),
  };
  for (const [column, value] of Object.entries(patch)) {
    if (value !== undefined) (finished as unknown as Record<string, unknown>)[column] = value;
  }
  finished.last_seq = frames.reduce((last, frame) => Math.max(last, frame.seq), 0);
  return finished;
}
