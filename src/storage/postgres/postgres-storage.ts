import { HeldInserts, planHeldRun } from "../held-inserts.js";
import type { McpSessionStore } from "../mcp-sessions.js";
import type { RetentionStore } from "../retention.js";
import type {
  CheckpointRecord,
  CreateThreadInput,
  Fence,
  FinishRunWrites,
  HeldInsert,
  InsertRunOptions,
  NewCheckpoint,
  NewRun,
  PushBacklogEntry,
  PushConfigRecord,
  PushCursor,
  RunCountFilter,
  RunFrame,
  RunPatch,
  RunRecord,
  RunSearch,
  Storage,
  ThreadOnFinish,
  ThreadRecord,
  ThreadSearch,
  ThreadStatus,
  WebhookDelivery,
} from "../types.js";
import { WriteCounter, type WriteCounts } from "../write-counts.js";
import type { Database } from "./connection.js";
import {
  type ConnectionTarget,
  connectionTarget,
  type PoolSettings,
  type PostgresStorageOptions,
  poolSettings,
} from "./connection-target.js";
import type { Repositories } from "./repositories.js";
import type { WebhookPatch } from "./webhooks.js";

export type { PostgresStorageOptions };

/** How many runs written once are remembered for the frame bus at most (see takeWrittenOnce). */
const WRITTEN_ONCE_KEPT = 4096;

/**
 * The shared backend: several replicas point at one database. Decisions about who runs what take
 * row locks in the database (see runs.ts and run-claims.ts), never process memory.
 */
export class PostgresStorage implements Storage {
  readonly kind = "postgres";
  /** The schema holding the tables. */
  readonly schema: string;
  /** Names of the migrations the last `open()` applied (empty when the schema was current). */
  appliedMigrations: string[] = [];
  readonly #target: ConnectionTarget;
  readonly #pool: PoolSettings;
  #repos: Repositories | null = null;
  /** Inserts held back for their run's end (see insertRunHeld). */
  readonly #held = new HeldInserts();
  /** Runs written once with their end, until the frame bus asks (see takeWrittenOnce). */
  readonly #writtenOnce = new Set<string>();
  #opening: Promise<void> | null = null;

  constructor(options: PostgresStorageOptions) {
    this.#target = connectionTarget(options.url, options.schema);
    this.schema = this.#target.schema;
    this.#pool = poolSettings(options, this.#target);
  }

  async open(): Promise<void> {
    if (this.#repos !== null) return;
    this.#opening ??= this.#open().finally(() => {
      this.#opening = null;
    });
    await this.#opening;
  }

  async #open(): Promise<void> {
    // Imported here, not at the top: a server on SQLite never loads the PostgreSQL code.
    const { openRepositories } = await import("./repositories.js");
    const { repos, appliedMigrations } = await openRepositories(this.#target, this.#pool);
    this.appliedMigrations = appliedMigrations;
    this.#repos = repos;
  }

  async close(): Promise<void> {
    // An open under way ends first: the pool it opens would otherwise outlive the close.
    await this.#opening?.catch(() => undefined);
    const repos = this.#repos;
    if (repos === null) return;
    // Nothing accepted is dropped: held inserts are queued before the drain.
    this.#held.releaseAll();
    this.#repos = null;
    // Every write accepted before close() is committed (or fails) before the pool goes.
    await repos.db.drain();
    await repos.db.pool.end();
  }

  async ping(): Promise<boolean> {
    if (this.#repos === null) return false;
    try {
      return (await this.#repos.db.query("SELECT 1")).rowCount === 1;
    } catch {
      return false;
    }
  }

  /** Commits and statements since open (see write-counts.ts); zeros when not open. */
  writeCounts(): WriteCounts {
    return this.#repos?.db.counter.snapshot() ?? new WriteCounter().snapshot();
  }

  /** The open pool's query access, for tests and maintenance scripts. */
  get database(): Database {
    return this.#require().db;
  }

  // Threads

  async createThread(
    input: CreateThreadInput,
  ): Promise<{ thread: ThreadRecord; created: boolean }> {
    return this.#require().threads.create(input);
  }

  async getThread(threadId: string): Promise<ThreadRecord | null> {
    return this.#require().threads.get(threadId);
  }

  async searchThreads(search: ThreadSearch): Promise<ThreadRecord[]> {
    return this.#require().threads.search(search);
  }

  async mergeThreadMetadata(
    threadId: string,
    metadata: Record<string, unknown>,
  ): Promise<ThreadRecord> {
    const waiting = this.#held.beforeThread(threadId);
    if (waiting !== undefined) await waiting;
    return this.#require().threads.mergeMetadata(threadId, metadata);
  }

  async setThreadStatus(threadId: string, status: ThreadStatus): Promise<void> {
    const waiting = this.#held.beforeThread(threadId);
    if (waiting !== undefined) await waiting;
    await this.#require().threads.setStatus(threadId, status);
  }

  async deleteThread(threadId: string): Promise<void> {
    const waiting = this.#held.beforeThread(threadId);
    if (waiting !== undefined) await waiting;
    await this.#require().threads.delete(threadId);
  }

  async copyThread(
    threadId: string,
    newThreadId: string,
    principal: string | null = null,
  ): Promise<ThreadRecord> {
    const waiting = this.#held.beforeThread(threadId);
    if (waiting !== undefined) await waiting;
    return this.#require().threads.copy(threadId, newThreadId, principal);
  }

  // Checkpoints

  async addCheckpoint(threadId: string, checkpoint: NewCheckpoint): Promise<CheckpointRecord> {
    const waiting = this.#held.beforeThread(threadId);
    if (waiting !== undefined) await waiting;
    return this.#require().checkpoints.add(threadId, checkpoint);
  }

  async getCheckpoint(threadId: string, checkpointId: string): Promise<CheckpointRecord | null> {
    return this.#require().checkpoints.get(threadId, checkpointId);
  }

  async listCheckpoints(
    threadId: string,
    options: { limit: number; before?: string },
  ): Promise<CheckpointRecord[]> {
    return this.#require().checkpoints.list(threadId, options);
  }

  async restoreCheckpoint(
    threadId: string,
    checkpointId: string | null,
    options: { discardRunId?: string } = {},
  ): Promise<void> {
    const threadWait = this.#held.beforeThread(threadId);
    const runWait =
      options.discardRunId === undefined ? undefined : this.#held.before(options.discardRunId);
    if (threadWait !== undefined || runWait !== undefined) await Promise.all([threadWait, runWait]);
    await this.#require().checkpoints.restore(threadId, checkpointId, options.discardRunId);
  }

  // Runs

  async insertRun(run: NewRun, options: InsertRunOptions): Promise<RunRecord> {
    return this.#require().runs.insert(run, options);
  }

  /** See `Storage.insertRunOnNewThread`: both inserts in one statement. */
  async insertRunOnNewThread(
    thread: CreateThreadInput,
    run: NewRun,
    options: InsertRunOptions,
  ): Promise<RunRecord | null> {
    // As every write that concerns a thread: a held run's hidden thread of that id is written
    // first, and the thread then exists (null).
    const waiting = this.#held.beforeThread(thread.thread_id);
    if (waiting !== undefined) await waiting;
    return this.#require().runs.insertOnNewThread(thread, run, options);
  }

  /**
   * See `Storage.insertRunHeld`. Held here, the insert is queued by the first write that
   * concerns the run or its hidden thread (every write method releases it first, and waits for
   * its commit: groups commit on several connections, not always in the order they were
   * queued), or after `HOLD_MS`; its end, when that comes first, is written with it as one row
   * and one statement.
   */
  insertRunHeld(run: NewRun, options: InsertRunOptions): HeldInsert | undefined {
    const repos = this.#require();
    const record = planHeldRun(run, options);
    if (record === undefined) return undefined;
    const committed = this.#held.hold(record, async (end) => {
      if (end === undefined) return repos.runs.insertPlanned(record);
      const finished = await repos.runs.insertFinished(record, end.patch, end.writes?.frames ?? []);
      this.#rememberWrittenOnce(record.run_id);
      return finished;
    });
    return { run: record, committed };
  }

  takeWrittenOnce(runId: string): boolean {
    return this.#writtenOnce.delete(runId);
  }

  /**
   * The frame bus asks right after the run's end is reported; the bound only matters when no
   * bus asks at all (a storage used without the PostgreSQL bus).
   */
  #rememberWrittenOnce(runId: string): void {
    if (this.#writtenOnce.size >= WRITTEN_ONCE_KEPT) {
      const oldest = this.#writtenOnce.values().next();
      if (oldest.done !== true) this.#writtenOnce.delete(oldest.value);
    }
    this.#writtenOnce.add(runId);
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    return this.#require().runs.get(runId);
  }

  async searchRuns(search: RunSearch): Promise<RunRecord[]> {
    return this.#require().runs.search(search);
  }

  async countRuns(filter: RunCountFilter, limit: number): Promise<number> {
    return this.#require().runs.count(filter, limit);
  }

  async countSearchRuns(search: RunSearch): Promise<number> {
    return this.#require().runs.countSearch(search);
  }

  async pendingRunsOfThread(threadId: string): Promise<RunRecord[]> {
    return this.#require().runs.pendingOfThread(threadId);
  }

  async updateRun(runId: string, patch: RunPatch, fence?: Fence): Promise<RunRecord> {
    const waiting = this.#held.before(runId);
    if (waiting !== undefined) await waiting;
    return this.#require().runs.update(runId, patch, fence);
  }

  async finishRun(
    runId: string,
    patch: RunPatch,
    thread: ThreadOnFinish,
    fence?: Fence,
    writes?: FinishRunWrites,
  ): Promise<RunRecord> {
    const once = this.#held.end(runId, patch, thread, fence, writes);
    if (once !== undefined) return once;
    const waiting = this.#held.before(runId);
    if (waiting !== undefined) await waiting;
    return this.#require().runs.finish(runId, patch, thread, fence, writes);
  }

  async deleteRun(runId: string): Promise<void> {
    const waiting = this.#held.before(runId);
    if (waiting !== undefined) await waiting;
    await this.#require().runs.delete(runId);
  }

  async claimRun(
    owner: string,
    leaseMs: number,
    now: Date,
    agentIds?: string[],
  ): Promise<RunRecord | null> {
    return this.#require().claims.claim(owner, leaseMs, now, agentIds);
  }

  async claimRunById(
    runId: string,
    owner: string,
    leaseMs: number,
    now: Date,
  ): Promise<RunRecord | null> {
    const waiting = this.#held.before(runId);
    if (waiting !== undefined) await waiting;
    return this.#require().claims.claimById(runId, owner, leaseMs, now);
  }

  async renewLeases(owner: string, leaseMs: number, now: Date): Promise<string[]> {
    return this.#require().claims.renewLeases(owner, leaseMs, now);
  }

  async expiredRuns(now: Date): Promise<RunRecord[]> {
    return this.#require().claims.expired(now);
  }

  async nextStartAfter(): Promise<string | null> {
    return this.#require().claims.nextStartAfter();
  }

  // Frames

  async appendFrames(frames: RunFrame[], fence?: Fence): Promise<void> {
    for (const runId of new Set(frames.map((frame) => frame.run_id))) {
      const waiting = this.#held.before(runId);
      if (waiting !== undefined) await waiting;
    }
    await this.#require().frames.append(frames, fence);
  }

  async readFrames(runId: string, afterSeq: number, limit?: number): Promise<RunFrame[]> {
    return this.#require().frames.read(runId, afterSeq, limit);
  }

  // Webhooks

  async enqueueWebhook(delivery: WebhookDelivery): Promise<void> {
    const waiting = this.#held.before(delivery.run_id);
    if (waiting !== undefined) await waiting;
    await this.#require().webhooks.enqueue(delivery);
  }

  async claimDueWebhooks(
    now: Date,
    leaseMs: number,
    limit: number,
    busyTargets?: readonly string[],
  ): Promise<WebhookDelivery[]> {
    return this.#require().webhooks.claimDue(now, leaseMs, limit, busyTargets);
  }

  async updateWebhook(deliveryId: string, patch: WebhookPatch): Promise<void> {
    await this.#require().webhooks.update(deliveryId, patch);
  }

  async getWebhooksOfRun(runId: string): Promise<WebhookDelivery[]> {
    return this.#require().webhooks.ofRun(runId);
  }

  // A2A push notification configs

  async putPushConfig(config: PushConfigRecord, maxPerRun?: number): Promise<boolean> {
    const waiting = this.#held.before(config.run_id);
    if (waiting !== undefined) await waiting;
    return this.#require().pushConfigs.put(config, maxPerRun);
  }

  async getPushConfigs(runId: string): Promise<PushConfigRecord[]> {
    return this.#require().pushConfigs.ofRun(runId);
  }

  async deletePushConfig(runId: string, configId: string): Promise<boolean> {
    const waiting = this.#held.before(runId);
    if (waiting !== undefined) await waiting;
    return this.#require().pushConfigs.delete(runId, configId);
  }

  async getPushCursor(runId: string): Promise<PushCursor | null> {
    return this.#require().pushCursors.get(runId);
  }

  async advancePushCursor(
    runId: string,
    from: PushCursor | null,
    to: PushCursor,
    deliveries: WebhookDelivery[],
  ): Promise<boolean> {
    return this.#require().pushCursors.advance(runId, from, to, deliveries);
  }

  async pushBacklog(
    owner: string,
    agentIds: readonly string[],
    limit: number,
  ): Promise<PushBacklogEntry[]> {
    return this.#require().pushCursors.backlog(owner, agentIds, limit);
  }

  async assignUnowned(principal: string): Promise<{ threads: number; runs: number }> {
    const waiting = this.#held.beforeAll();
    if (waiting !== undefined) await waiting;
    const db = this.#require().db;
    const { assignUnowned } = await import("./repositories.js");
    return assignUnowned(db, principal);
  }

  retention(): RetentionStore {
    return this.#require().retention;
  }

  mcpSessions(): McpSessionStore {
    return this.#require().mcpSessions;
  }

  #require(): Repositories {
    if (this.#repos === null) {
      throw new Error("PostgreSQL storage is not open: call open() first");
    }
    return this.#repos;
  }
}
