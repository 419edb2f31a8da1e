/**
 * The storage contract. Every backend (SQLite, PostgreSQL) implements `Storage`;
 * one shared test suite (test/storage/suite.ts) runs against each of them.
 *
 * Rules every implementation follows:
 * - All methods are async, even where the backend is synchronous, so callers never depend on it.
 * - Methods return data or `null`; they throw `DomainError` (src/util/errors.ts) with codes
 *   `not_found` / `conflict` / `invalid`, never HTTP errors.
 * - JSON columns round-trip exactly: objects stay objects, `null` stays `null`, keys order kept.
 * - Timestamps are ISO-8601 strings in UTC with milliseconds (`new Date().toISOString()`).
 * - Field names are ACP's (snake_case); AG-UI payloads stored inside JSON keep camelCase.
 * - Several server replicas may share one database: anything that decides "who runs what"
 *   (`claimRun`, `insertRun` busy checks) is atomic in the database, not in process memory.
 */

// The protocol's own value types live with the ACP wire types; storage keeps them as they are.
import type { AcpMessage, RunStatus, ThreadStatus } from "../validation/acp-types.js";
import type { McpSessionStore } from "./mcp-sessions.js";
import type {
  CheckpointRecord,
  CreateThreadInput,
  Fence,
  FinishRunWrites,
  HeldInsert,
  InsertRunOptions,
  NewCheckpoint,
  NewRun,
  RunCountFilter,
  RunFrame,
  RunPatch,
  RunRecord,
  RunSearch,
  ThreadOnFinish,
  ThreadRecord,
  ThreadSearch,
} from "./record-types.js";
import type { RetentionStore } from "./retention.js";

export type {
  McpCallStreamRecord,
  McpSessionRecord,
  McpSessionStore,
} from "./mcp-sessions.js";

import type { StatementKind, WriteCounts } from "./write-counts.js";

export type {
  CheckpointRecord,
  CreateThreadInput,
  Fence,
  FinishRunWrites,
  HeldInsert,
  InsertClaim,
  InsertRunOptions,
  NewCheckpoint,
  NewRun,
  PrincipalFilter,
  RunCountFilter,
  RunFrame,
  RunKind,
  RunPatch,
  RunRecord,
  RunSearch,
  SegmentRecord,
  ThreadOnFinish,
  ThreadRecord,
  ThreadSearch,
} from "./record-types.js";
export type { AcpMessage, RunStatus, StatementKind, ThreadStatus, WriteCounts };
export interface WebhookDelivery {
  delivery_id: string;
  run_id: string;
  url: string;
  /** Serialized JSON body (the `Run`). */
  body: string;
  attempts: number;
  next_attempt_at: string;
  state: "pending" | "delivered" | "failed";
  last_error: string | null;
  created_at: string;
  /** Headers sent besides the server's own (an A2A push config's token and authorization). */
  headers?: Record<string, string> | null;
  /**
   * The stream the delivery belongs to (an ACP run's webhook: the run id; an A2A push config:
   * the run id and the config id). A stream's deliveries are sent one at a time, in order.
   */
  stream: string;
  /** The receiver's origin (`scheme://host:port`), which the deliverer limits per replica. */
  target: string;
}

/** An A2A push notification config a client set on a task (an ACP run). */
export interface PushConfigRecord {
  run_id: string;
  config_id: string;
  url: string;
  token: string | null;
  /** `Authorization: <scheme> <credentials>` on each notification, when set. */
  authentication: { scheme: string; credentials?: string } | null;
  created_at: string;
}

/**
 * Where an A2A task's push relay stands: the events of its frames up to `seq` are queued for
 * delivery, and with `closed` the status that ends its stream at `seq` (final, or input
 * required) is too.
 */
export interface PushCursor {
  seq: number;
  closed: boolean;
}

/** A run whose push relay is behind (see `pushBacklog`). */
export interface PushBacklogEntry {
  run_id: string;
  agent_id: string;
}

export interface Storage {
  /** Backend name for logs and readiness ("sqlite", "postgres"). */
  readonly kind: string;
  /**
   * True when this process is the database's only writer (SQLite, held by its owner lock): what
   * it has not written, nobody has. Callers may then keep bounds of their own writes instead of
   * counting rows again (the queue limit's pending count).
   */
  readonly exclusive?: boolean;
  /** Applies migrations; idempotent. */
  open(): Promise<void>;
  close(): Promise<void>;
  /** True while open and answering. */
  ping(): Promise<boolean>;
  /**
   * What this storage has sent its database: commits of transactions that wrote, statements by
   * kind (src/storage/write-counts.ts). Running totals, read by the metrics when scraped.
   */
  writeCounts(): WriteCounts;

  // Threads
  createThread(input: CreateThreadInput): Promise<{ thread: ThreadRecord; created: boolean }>;
  getThread(threadId: string): Promise<ThreadRecord | null>;
  searchThreads(search: ThreadSearch): Promise<ThreadRecord[]>;
  /** Shallow-merges metadata into the thread's metadata. */
  mergeThreadMetadata(threadId: string, metadata: Record<string, unknown>): Promise<ThreadRecord>;
  setThreadStatus(threadId: string, status: ThreadStatus): Promise<void>;
  /**
   * Deletes the thread, its checkpoints, and its runs' thread link (runs of a hidden thread stay
   * readable with `thread_id: null`). Conflict when the thread has a pending run.
   */
  deleteThread(threadId: string): Promise<void>;
  /**
   * Copies the thread under a new id with all checkpoints (new checkpoint ids, same order),
   * owned by `principal` (the caller of copy; default nobody).
   */
  copyThread(
    threadId: string,
    newThreadId: string,
    principal?: string | null,
  ): Promise<ThreadRecord>;

  // Checkpoints
  /** Appends a checkpoint and makes it the thread's current values/messages. */
  addCheckpoint(threadId: string, checkpoint: NewCheckpoint): Promise<CheckpointRecord>;
  getCheckpoint(threadId: string, checkpointId: string): Promise<CheckpointRecord | null>;
  /** Newest first. `before`: only checkpoints older than that checkpoint id. */
  listCheckpoints(
    threadId: string,
    options: { limit: number; before?: string },
  ): Promise<CheckpointRecord[]>;
  /**
   * Makes an existing checkpoint the thread's current one again (rollback). With
   * `discardRunId`, the checkpoints that run wrote (`metadata.run_id`) are deleted in the same
   * transaction: a rolled-back run leaves no trace in history.
   */
  restoreCheckpoint(
    threadId: string,
    checkpointId: string | null,
    options?: { discardRunId?: string },
  ): Promise<void>;

  // Runs
  insertRun(run: NewRun, options: InsertRunOptions): Promise<RunRecord>;
  /**
   * Optional: `insertRun` for a run whose creator answers only at its end (`wait`), claimed
   * by its insert (`options.claim`). Hands back at once the record the insert writes, so that
   * the run can execute while its insert waits for its commit; `committed` resolves with it
   * once committed, or rejects, having written nothing, as `insertRun` would. Until then the
   * run does not exist for any reader. When the run's end (`finishRun` under the insert's
   * claim) comes before the insert is written, the run is written once, in its final state,
   * with the frames of its end, in one commit (the `finishRun` promise settles after
   * `committed`). Undefined when the storage cannot tell the record without writing (a
   * stateful run, one not due, a queue limit to check…): call `insertRun` then.
   */
  insertRunHeld?(run: NewRun, options: InsertRunOptions): HeldInsert | undefined;
  /**
   * Optional: true (once) for a run whose held insert was written with its end, in one commit
   * (see `insertRunHeld`). No reader anywhere knew of the run before that commit, so none can be
   * following it: a frame bus between replicas need not tell them its frames were stored.
   */
  takeWrittenOnce?(runId: string): boolean;
  /**
   * Optional: a new thread (`thread`, whose `if_exists` is ignored) and a stateful run on it,
   * in one commit: the first run of a thread costs one write, as a stateless run's does. When a
   * thread of that id exists already, nothing is written and it answers null: then look the
   * thread up and call `insertRun`. Without it, `createThread` then `insertRun`.
   */
  insertRunOnNewThread?(
    thread: CreateThreadInput,
    run: NewRun,
    options: InsertRunOptions,
  ): Promise<RunRecord | null>;
  /**
   * Optional: `insertRunHeld` for a stateful run on a new thread (`insertRunOnNewThread`'s
   * arguments) whose id only its creator knows (made by the server, handed out with the run's
   * answer). Until `committed`, neither the thread nor the run exists for any reader; when the
   * run's end (`finishRun` with the thread's status, under the insert's claim) comes first,
   * both are written once, as that end leaves them: the thread with the run's checkpoint and
   * status, the run ended, with its frames, in one commit. `thread` is the thread as the insert
   * creates it (for the run's execution, which cannot read it yet). Undefined when the storage
   * cannot hold it: call `insertRunOnNewThread` then.
   */
  insertRunOnNewThreadHeld?(
    thread: CreateThreadInput,
    run: NewRun,
    options: InsertRunOptions,
  ): HeldInsert | undefined;
  getRun(runId: string): Promise<RunRecord | null>;
  searchRuns(search: RunSearch): Promise<RunRecord[]>;
  /**
   * How many runs match the filter, counting at most `limit` (returns min(count, limit)): a
   * cheap "are there at least N" check that loads no run records.
   */
  countRuns(filter: RunCountFilter, limit: number): Promise<number>;
  /** How many runs `searchRuns` would find for `search` without its `after`, limit and offset. */
  countSearchRuns(search: RunSearch): Promise<number>;
  /** Pending runs of a thread, oldest first. */
  pendingRunsOfThread(threadId: string): Promise<RunRecord[]>;
  /** `fence`: only while the run is still held by that claim (see `Fence`). */
  updateRun(runId: string, patch: RunPatch, fence?: Fence): Promise<RunRecord>;
  /**
   * How a run ends: applies `patch` (its outcome) to the run and, in the same transaction,
   * settles its thread, so no reader sees the run ended and its thread still busy, or the
   * thread set and the run not. Returns the run as it now is.
   *
   * - `{ status }`: sets the thread's status. A run whose thread is gone (`thread_id: null`)
   *   is still updated; there is no thread to set.
   * - `{ delete: true }`: deletes the thread as `deleteThread` does (a stateless run's hidden
   *   thread); the run comes back with `thread_id: null`. `not_found` when the run has no
   *   thread, `conflict` when another run on the thread is still pending.
   *
   * `writes`: the run's remaining frames and its checkpoint, stored first in the same
   * transaction, so that a run's whole end is one commit.
   *
   * `not_found` when the run is missing. Whenever it fails, nothing is written.
   */
  finishRun(
    runId: string,
    patch: RunPatch,
    thread: ThreadOnFinish,
    fence?: Fence,
    writes?: FinishRunWrites,
  ): Promise<RunRecord>;
  /** Deletes the run and its frames. Conflict when pending. */
  deleteRun(runId: string): Promise<void>;
  /**
   * Atomically claims the next runnable run for `owner`: status pending, no owner (or an expired
   * lease), start_after <= now, and no older pending run on the same thread that is claimed or
   * still waiting (runs on one thread execute one at a time, oldest first). Sets owner and
   * lease; returns it, or null when nothing is runnable. `agentIds` limits the claim to agents
   * that still have free concurrency on this replica.
   */
  claimRun(
    owner: string,
    leaseMs: number,
    now: Date,
    agentIds?: string[],
  ): Promise<RunRecord | null>;
  /**
   * Atomically claims one specific run for `owner` when it is pending and not held by a live
   * lease (ignoring queue order), or when it is `interrupted` (not executing anywhere). Used to
   * end a queued or interrupted run without racing a scheduler that might start it. Returns the
   * claimed run, or null when someone else holds it or it is finished.
   */
  claimRunById(runId: string, owner: string, leaseMs: number, now: Date): Promise<RunRecord | null>;
  /** Extends the lease of every run `owner` holds; returns the run ids still held. */
  renewLeases(owner: string, leaseMs: number, now: Date): Promise<string[]>;
  /** Runs whose lease expired before `now` (their owner died). */
  expiredRuns(now: Date): Promise<RunRecord[]>;
  /** Earliest start_after among pending unclaimed runs, to schedule the next wake-up. */
  nextStartAfter(): Promise<string | null>;

  // Frames (the per-run event log behind stream, wait, replay)
  /** With a `fence`, every frame belongs to the fenced run; all or none are written. */
  appendFrames(frames: RunFrame[], fence?: Fence): Promise<void>;
  /** Frames with seq > afterSeq, ascending. */
  readFrames(runId: string, afterSeq: number, limit?: number): Promise<RunFrame[]>;

  // Webhooks
  /**
   * Stores a delivery. Its `next_attempt_at` holds only when its stream has no pending delivery
   * yet; otherwise it is parked (not due) until the ones before it are settled.
   */
  enqueueWebhook(delivery: WebhookDelivery): Promise<void>;
  /**
   * Claims at most `limit` due pending deliveries (next_attempt_at <= now), each the first
   * pending one of its stream, none to a target in `busyTargets`, oldest due first, and pushes
   * their next attempt out by leaseMs.
   */
  claimDueWebhooks(
    now: Date,
    leaseMs: number,
    limit: number,
    busyTargets?: readonly string[],
  ): Promise<WebhookDelivery[]>;
  /**
   * Patches a delivery (not_found when it is gone). Settling it (`delivered` or `failed`) makes
   * the next pending delivery of its stream due now, in the same transaction.
   */
  updateWebhook(
    deliveryId: string,
    patch: Partial<Pick<WebhookDelivery, "attempts" | "next_attempt_at" | "state" | "last_error">>,
  ): Promise<void>;
  getWebhooksOfRun(runId: string): Promise<WebhookDelivery[]>;

  // A2A push notification configs (deleted with their run)
  /**
   * Stores a config, replacing the run's config of the same id; not_found for an unknown run.
   * With `maxPerRun`, false (nothing stored) when the run has that many other configs already.
   */
  putPushConfig(config: PushConfigRecord, maxPerRun?: number): Promise<boolean>;
  /** A run's configs, oldest first. */
  getPushConfigs(runId: string): Promise<PushConfigRecord[]>;
  /** Whether a config was there to delete. */
  deletePushConfig(runId: string, configId: string): Promise<boolean>;
  /** The run's push cursor, null when none was set (deleted with the run). */
  getPushCursor(runId: string): Promise<PushCursor | null>;
  /**
   * Moves the run's push cursor from `from` (null: it has none yet) to `to` and stores
   * `deliveries` (as `enqueueWebhook` does), in one transaction, only when the cursor is still
   * at `from`. False, with nothing written, when it is not: another relay moved it first. So a
   * stream event is queued once, however many relays follow the task.
   */
  advancePushCursor(
    runId: string,
    from: PushCursor | null,
    to: PushCursor,
    deliveries: WebhookDelivery[],
  ): Promise<boolean>;
  /**
   * Runs of `agentIds` with push configs and a cursor whose relay is not done, at most `limit`:
   * finished or interrupted runs whose cursor is not closed at their last frame, and pending
   * runs that `owner` holds (the replica executing a run relays it).
   */
  pushBacklog(
    owner: string,
    agentIds: readonly string[],
    limit: number,
  ): Promise<PushBacklogEntry[]>;

  // Ownership
  /**
   * Gives every thread and run without a principal to `principal` (data from before ownership
   * existed); returns how many of each changed.
   */
  assignUnowned(principal: string): Promise<{ threads: number; runs: number }>;

  /** The retention sweeps' batches (src/storage/retention.ts), on the open storage. */
  retention(): RetentionStore;

  /** The MCP face's sessions and call streams (src/storage/mcp-sessions.ts), on the open storage. */
  mcpSessions(): McpSessionStore;
}
