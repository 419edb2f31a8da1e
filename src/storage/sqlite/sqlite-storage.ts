import type Database from "better-sqlite3";
import { HeldInserts, planHeldRun, planHeldRunOnNewThread } from "../held-inserts.js";
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
import { openDatabase, type SqliteRepositories } from "./open-database.js";
import type { WebhookPatch } from "./webhooks.js";

export interface SqliteStorageOptions {
  /** A file path (parent directories are created) or `:memory:`. */
  path: string;
}

/**
 * The embedded backend. better-sqlite3 is synchronous; every method is still async (the contract
 * says so). Reads run at once; writes are grouped: those requested in one turn of the event loop
 * commit in one immediate transaction (group-commit.ts), each still atomic on its own, so
 * another connection to the file (an operator's `sqlite3`) is waited for instead of failing a
 * lock upgrade. One process owns a file (owner-lock.ts); replicas share PostgreSQL instead.
 */
export class SqliteStorage implements Storage {
  readonly kind = "sqlite";
  /** One process owns the file (owner-lock.ts; an in-memory database is the process's own). */
  readonly exclusive = true;
  readonly path: string;
  /** Names of the migrations the last `open()` applied (empty when the schema was current). */
  appliedMigrations: string[] = [];
  #repos: SqliteRepositories | null = null;
  /** Commits and statements of this storage (see write-counts.ts), kept across reopenings. */
  readonly #counter = new WriteCounter();
  /** Inserts held back for their run's end (see insertRunHeld). */
  readonly #held = new HeldInserts();

  constructor(options: SqliteStorageOptions) {
    this.path = options.path;
  }

  async open(): Promise<void> {
    if (this.#repos !== null) return;
    const { repos, appliedMigrations } = openDatabase(this.path, this.#counter, (work) =>
      this.#write(work),
    );
    this.#repos = repos;
    this.appliedMigrations = appliedMigrations;
  }

  async close(): Promise<void> {
    const repos = this.#repos;
    if (repos === null) return;
    // Nothing accepted is dropped: held inserts join the last group.
    this.#held.releaseAll();
    this.#repos = null;
    try {
      repos.writes.flushNow();
      await repos.checkpointer?.stop();
      try {
        // Lets SQLite refresh planner statistics for the queries this connection ran.
        repos.db.pragma("optimize");
      } catch (err) {
        // Statistics only (a full disk refuses them): not a reason to fail the close.
        process.emitWarning(`PRAGMA optimize failed: ${(err as Error).message}`, "SqliteWarning");
      }
    } finally {
      // Closed whatever failed above, and the file given up only once nothing writes to it.
      repos.db.close();
      repos.ownerLock?.release();
    }
  }

  /** Commits and statements since this storage was made (see write-counts.ts). */
  writeCounts(): WriteCounts {
    return this.#counter.snapshot();
  }

  async ping(): Promise<boolean> {
    if (this.#repos === null) return false;
    try {
      return this.#repos.db.prepare("SELECT 1 AS one").get() !== undefined;
    } catch {
      return false;
    }
  }

  /** The open connection, for tests and maintenance scripts. */
  get database(): Database.Database {
    return this.#open().db;
  }

  // Threads

  async createThread(
    input: CreateThreadInput,
  ): Promise<{ thread: ThreadRecord; created: boolean }> {
    this.#held.releaseThread(input.thread_id);
    return this.#write((repos) => repos.threads.create(input));
  }

  async getThread(threadId: string): Promise<ThreadRecord | null> {
    return this.#open().threads.get(threadId);
  }

  async searchThreads(search: ThreadSearch): Promise<ThreadRecord[]> {
    return this.#open().threads.search(search);
  }

  async mergeThreadMetadata(
    threadId: string,
    metadata: Record<string, unknown>,
  ): Promise<ThreadRecord> {
    this.#held.releaseThread(threadId);
    return this.#write((repos) => repos.threads.mergeMetadata(threadId, metadata));
  }

  async setThreadStatus(threadId: string, status: ThreadStatus): Promise<void> {
    this.#held.releaseThread(threadId);
    return this.#write((repos) => repos.threads.setStatus(threadId, status));
  }

  async deleteThread(threadId: string): Promise<void> {
    this.#held.releaseThread(threadId);
    return this.#write((repos) => repos.threads.delete(threadId));
  }

  async copyThread(
    threadId: string,
    newThreadId: string,
    principal: string | null = null,
  ): Promise<ThreadRecord> {
    this.#held.releaseThread(threadId);
    return this.#write((repos) => repos.threads.copy(threadId, newThreadId, principal));
  }

  // Checkpoints

  async addCheckpoint(threadId: string, checkpoint: NewCheckpoint): Promise<CheckpointRecord> {
    this.#held.releaseThread(threadId);
    return this.#write((repos) => repos.checkpoints.add(threadId, checkpoint));
  }

  async getCheckpoint(threadId: string, checkpointId: string): Promise<CheckpointRecord | null> {
    return this.#open().checkpoints.get(threadId, checkpointId);
  }

  async listCheckpoints(
    threadId: string,
    options: { limit: number; before?: string },
  ): Promise<CheckpointRecord[]> {
    return this.#open().checkpoints.list(threadId, options);
  }

  async restoreCheckpoint(
    threadId: string,
    checkpointId: string | null,
    options: { discardRunId?: string } = {},
  ): Promise<void> {
    this.#held.releaseThread(threadId);
    if (options.discardRunId !== undefined) this.#held.release(options.discardRunId);
    return this.#write((repos) =>
      repos.checkpoints.restore(threadId, checkpointId, options.discardRunId),
    );
  }

  // Runs

  async insertRun(run: NewRun, options: InsertRunOptions): Promise<RunRecord> {
    this.#held.releaseThread(run.thread_id);
    return this.#write((repos) => repos.runs.insert(run, options));
  }

  /** See `Storage.insertRunOnNewThread`: both inserts in one write, atomic together. */
  async insertRunOnNewThread(
    thread: CreateThreadInput,
    run: NewRun,
    options: InsertRunOptions,
  ): Promise<RunRecord | null> {
    this.#held.releaseThread(thread.thread_id);
    return this.#write((repos) => repos.newThreadRunTx.immediate(thread, run, options));
  }

  /**
   * See `Storage.insertRunOnNewThreadHeld`: held as `insertRunHeld` holds a stateless run's
   * insert, released by the first write that concerns the run or its thread.
   */
  insertRunOnNewThreadHeld(
    thread: CreateThreadInput,
    run: NewRun,
    options: InsertRunOptions,
  ): HeldInsert | undefined {
    this.#open();
    const planned = planHeldRunOnNewThread(thread, run, options);
    if (planned === undefined) return undefined;
    const { record } = planned;
    const committed = this.#held.hold(
      record,
      (end) => this.#write((r) => r.heldRuns.insertOnNewThread(thread, record, end)),
      true,
    );
    return { run: record, committed, thread: planned.thread };
  }

  /**
   * See `Storage.insertRunHeld`. Held here, the insert is queued by the first write that
   * concerns the run or its hidden thread (every write method below releases it first), or
   * after `HOLD_MS`; its end, when that comes first, is written with it as one row.
   */
  insertRunHeld(run: NewRun, options: InsertRunOptions): HeldInsert | undefined {
    this.#open();
    const record = planHeldRun(run, options);
    if (record === undefined) return undefined;
    const committed = this.#held.hold(record, (end) =>
      this.#write((r) =>
        end === undefined
          ? r.heldRuns.insertPlanned(record)
          : r.heldRuns.insertFinished(record, end.patch, end.writes?.frames ?? []),
      ),
    );
    return { run: record, committed };
  }

  async getRun(runId: string): Promise<RunRecord | null> {
    return this.#open().runs.get(runId);
  }

  async searchRuns(search: RunSearch): Promise<RunRecord[]> {
    return this.#open().runs.search(search);
  }

  async countRuns(filter: RunCountFilter, limit: number): Promise<number> {
    return this.#open().runs.count(filter, limit);
  }

  async countSearchRuns(search: RunSearch): Promise<number> {
    return this.#open().runs.countSearch(search);
  }

  async pendingRunsOfThread(threadId: string): Promise<RunRecord[]> {
    return this.#open().runs.pendingOfThread(threadId);
  }

  async updateRun(runId: string, patch: RunPatch, fence?: Fence): Promise<RunRecord> {
    this.#held.release(runId);
    return this.#write((repos) => repos.runs.update(runId, patch, fence));
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
    return this.#write((repos) => repos.finishRunTx(runId, patch, thread, fence, writes));
  }

  async deleteRun(runId: string): Promise<void> {
    this.#held.release(runId);
    return this.#write((repos) => repos.runs.delete(runId));
  }

  async claimRun(
    owner: string,
    leaseMs: number,
    now: Date,
    agentIds?: string[],
  ): Promise<RunRecord | null> {
    return this.#write((repos) => repos.runs.claim(owner, leaseMs, now, agentIds));
  }

  async claimRunById(
    runId: string,
    owner: string,
    leaseMs: number,
    now: Date,
  ): Promise<RunRecord | null> {
    this.#held.release(runId);
    return this.#write((repos) => repos.runs.claimById(runId, owner, leaseMs, now));
  }

  async renewLeases(owner: string, leaseMs: number, now: Date): Promise<string[]> {
    return this.#write((repos) => repos.runs.renewLeases(owner, leaseMs, now));
  }

  async expiredRuns(now: Date): Promise<RunRecord[]> {
    return this.#open().runs.expired(now);
  }

  async nextStartAfter(): Promise<string | null> {
    return this.#open().runs.nextStartAfter();
  }

  // Frames

  async appendFrames(frames: RunFrame[], fence?: Fence): Promise<void> {
    for (const frame of frames) this.#held.release(frame.run_id);
    return this.#write((repos) => repos.frames.append(frames, fence));
  }

  async readFrames(runId: string, afterSeq: number, limit?: number): Promise<RunFrame[]> {
    return this.#open().frames.read(runId, afterSeq, limit);
  }

  // Webhooks

  async enqueueWebhook(delivery: WebhookDelivery): Promise<void> {
    this.#held.release(delivery.run_id);
    return this.#write((repos) => repos.webhooks.enqueue(delivery));
  }

  async claimDueWebhooks(
    now: Date,
    leaseMs: number,
    limit: number,
    busyTargets?: readonly string[],
  ): Promise<WebhookDelivery[]> {
    return this.#write((repos) => repos.webhooks.claimDue(now, leaseMs, limit, busyTargets));
  }

  async updateWebhook(deliveryId: string, patch: WebhookPatch): Promise<void> {
    return this.#write((repos) => repos.webhooks.update(deliveryId, patch));
  }

  async getWebhooksOfRun(runId: string): Promise<WebhookDelivery[]> {
    return this.#open().webhooks.ofRun(runId);
  }

  // A2A push notification configs

  async putPushConfig(config: PushConfigRecord, maxPerRun?: number): Promise<boolean> {
    this.#held.release(config.run_id);
    return this.#write((repos) => repos.pushConfigs.put(config, maxPerRun));
  }

  async getPushConfigs(runId: string): Promise<PushConfigRecord[]> {
    return this.#open().pushConfigs.ofRun(runId);
  }

  async deletePushConfig(runId: string, configId: string): Promise<boolean> {
    this.#held.release(runId);
    return this.#write((repos) => repos.pushConfigs.delete(runId, configId));
  }

  async getPushCursor(runId: string): Promise<PushCursor | null> {
    return this.#open().pushCursors.get(runId);
  }

  async advancePushCursor(
    runId: string,
    from: PushCursor | null,
    to: PushCursor,
    deliveries: WebhookDelivery[],
  ): Promise<boolean> {
    return this.#write((repos) => repos.pushCursors.advance(runId, from, to, deliveries));
  }

  async pushBacklog(
    owner: string,
    agentIds: readonly string[],
    limit: number,
  ): Promise<PushBacklogEntry[]> {
    return this.#open().pushCursors.backlog(owner, agentIds, limit);
  }

  async assignUnowned(principal: string): Promise<{ threads: number; runs: number }> {
    this.#held.releaseAll();
    return this.#write(({ db }) => ({
      threads: db.prepare("UPDATE threads SET principal = ? WHERE principal IS NULL").run(principal)
        .changes,
      runs: db.prepare("UPDATE runs SET principal = ? WHERE principal IS NULL").run(principal)
        .changes,
    }));
  }

  retention(): RetentionStore {
    return this.#open().retention;
  }

  mcpSessions(): McpSessionStore {
    return this.#open().mcpSessions;
  }

  /** Queues a write for the next group commit (see group-commit.ts). */
  #write<T>(write: (repos: SqliteRepositories) => T): Promise<T> {
    const repos = this.#open();
    repos.checkpointer?.noteWrite();
    return repos.writes.run(() => write(repos));
  }

  #open(): SqliteRepositories {
    if (this.#repos === null) throw new Error("SQLite storage is not open: call open() first");
    return this.#repos;
  }
}
