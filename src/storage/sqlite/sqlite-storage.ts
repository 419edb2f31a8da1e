import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { notFound } from "../../errors.js";
import { HeldInserts, planHeldRun } from "../held-inserts.js";
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
import { WalCheckpointer } from "./checkpointer.js";
import { CheckpointRepository } from "./checkpoints.js";
import { FrameRepository } from "./frames.js";
import { GroupCommit } from "./group-commit.js";
import { HeldRunRows } from "./held-runs.js";
import { makeContainsFunction } from "./json.js";
import { migrate } from "./migrate.js";
import { OwnerLock } from "./owner-lock.js";
import { PushConfigRepository } from "./push-configs.js";
import { PushCursorRepository } from "./push-cursors.js";
import { SqliteRetention } from "./retention.js";
import { RunRepository } from "./runs.js";
import { ThreadRepository } from "./threads.js";
import { type WebhookPatch, WebhookRepository } from "./webhooks.js";
import { SqliteWriteCounting } from "./write-counting.js";

export interface SqliteStorageOptions {
  /** A file path (parent directories are created) or `:memory:`. */
  path: string;
}

interface Repositories {
  db: Database.Database;
  threads: ThreadRepository;
  checkpoints: CheckpointRepository;
  runs: RunRepository;
  /** The rows of held inserts (see insertRunHeld). */
  heldRuns: HeldRunRows;
  frames: FrameRepository;
  webhooks: WebhookRepository;
  pushConfigs: PushConfigRepository;
  pushCursors: PushCursorRepository;
  /** Every write goes through it: one commit per event-loop turn (see group-commit.ts). */
  writes: GroupCommit;
  /** WAL checkpoints off the event loop (a file database only; see checkpointer.ts). */
  checkpointer: WalCheckpointer | null;
  /** This process's claim on the file (a file database only; see owner-lock.ts). */
  ownerLock: OwnerLock | null;
  retention: SqliteRetention;
  /** A new thread and a run on it, or nothing (null) when the thread exists. */
  newThreadRunTx: Database.Transaction<
    (thread: CreateThreadInput, run: NewRun, options: InsertRunOptions) => RunRecord | null
  >;
  finishRunTx: Database.Transaction<
    (
      runId: string,
      patch: RunPatch,
      thread: ThreadOnFinish,
      fence: Fence | undefined,
      writes: FinishRunWrites | undefined,
    ) => RunRecord
  >;
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
  #repos: Repositories | null = null;
  /** Commits and statements of this storage (see write-counts.ts), kept across reopenings. */
  readonly #counter = new WriteCounter();
  /** Inserts held back for their run's end (see insertRunHeld). */
  readonly #held = new HeldInserts();

  constructor(options: SqliteStorageOptions) {
    this.path = options.path;
  }

  async open(): Promise<void> {
    if (this.#repos !== null) return;
    const inMemory = this.path === ":memory:";
    if (!inMemory) mkdirSync(dirname(resolve(this.path)), { recursive: true });
    const db = new Database(this.path);
    // Before any statement is prepared: every one of them is counted from the start.
    const counting = new SqliteWriteCounting(db, this.#counter);
    let ownerLock: OwnerLock | null = null;
    try {
      // Set before anything else touches the file: another process may hold its lock right now.
      db.pragma("busy_timeout = 5000");
      // A new (empty) file gives the pages retention frees back to the file system; only there,
      // before the first transaction writes its header: an existing file keeps its own mode.
      if (db.pragma("page_count", { simple: true }) === 0) db.pragma("auto_vacuum = INCREMENTAL");
      // Before any change to the file: a process refused it leaves its owner's work alone.
      if (!inMemory) ownerLock = OwnerLock.acquire(db, this.path);
      if (!inMemory) {
        db.pragma("journal_mode = WAL");
        // A backstop only: the checkpointer's worker copies the WAL back long before this.
        db.pragma("wal_autocheckpoint = 10000");
        // Each restart of the WAL truncates the file to at most 4 MB, so its size keeps telling
        // the checkpointer how much there is to copy.
        db.pragma("journal_size_limit = 4194304");
      }
      db.pragma("synchronous = NORMAL");
      // A 4 MB page cache, not better-sqlite3's 16 MB (SQLITE_DEFAULT_CACHE_SIZE=-16000): the
      // run path's working set is the tail of a few indexes, and a long run's frames filled the
      // rest with pages never read again. A 10 MB run peaked 12 MB lower, runs/s unchanged
      // (BENCH_ONLY=storage and wait-50, alternated); the OS's page cache still has the file.
      db.pragma("cache_size = -4000");
      db.pragma("foreign_keys = ON");
      // Bounds the ANALYZE that `PRAGMA optimize` (at close) may run on a large database.
      db.pragma("analysis_limit = 1000");
      db.function("acp_json_contains", { deterministic: true }, makeContainsFunction());
      this.appliedMigrations = migrate(db);
      // Savepoint journals in memory. Each write in a group commit has its own savepoint, and
      // SQLite copies every page a savepoint first touches into a sub-journal; once a group's
      // copies pass 64 KB they went to a temporary file, one pwrite per page, 18 % of a run's
      // CPU. In memory: 0.44–0.49 ms per run instead of 0.67–0.71 (BENCH_ONLY=wait-50,
      // alternated). The cost: a write that changes many existing pages holds their old copies
      // in memory until its savepoint ends, not in a file past 64 KB. Deleting a thread of 2,000
      // runs (a 36 MB file) in a group peaked the same either way (36.4 MB above rest against
      // 36.2). Set after the migrations, so that an index built over a large table still sorts
      // in temporary files.
      db.pragma("temp_store = MEMORY");
      const checkpoints = new CheckpointRepository(db);
      const threads = new ThreadRepository(db, checkpoints);
      const runs = new RunRepository(db);
      const frames = new FrameRepository(db);
      const webhooks = new WebhookRepository(db);
      this.#repos = {
        db,
        checkpoints,
        threads,
        runs,
        heldRuns: new HeldRunRows(db, frames),
        frames,
        webhooks,
        pushConfigs: new PushConfigRepository(db),
        pushCursors: new PushCursorRepository(db, webhooks),
        writes: new GroupCommit(db, counting),
        checkpointer: inMemory
          ? null
          : new WalCheckpointer(this.path, (message) =>
              process.emitWarning(`WAL checkpoint failed: ${message}`, "SqliteWarning"),
            ),
        ownerLock,
        retention: new SqliteRetention(db, (work) => this.#write(work)),
        // Nested in this transaction, each insert is a savepoint: a throw from the run's undoes
        // the thread's too.
        newThreadRunTx: db.transaction(
          (thread: CreateThreadInput, run: NewRun, options: InsertRunOptions) => {
            const { created } = threads.create({ ...thread, if_exists: "do_nothing" });
            return created ? runs.insert(run, options) : null;
          },
        ),
        // One transaction for the run's last frames, checkpoint, outcome and thread: a throw from
        // any of them undoes them all.
        finishRunTx: db.transaction(
          (
            runId: string,
            patch: RunPatch,
            thread: ThreadOnFinish,
            fence: Fence | undefined,
            writes: FinishRunWrites | undefined,
          ) => {
            // Frames first: under a fence they need the run still held by it. Under a fence (the
            // engine's ends) the run's new last seq rides in the UPDATE below, not a write of
            // its own; inside this transaction, neither needs a savepoint.
            let lastSeq: number | undefined;
            const ending = writes?.frames ?? [];
            if (ending.length > 0) {
              if (fence !== undefined && ending.every((frame) => frame.run_id === runId)) {
                lastSeq = frames.appendLeavingLastSeq(ending, fence);
              } else {
                frames.append(ending, fence);
              }
            }
            if ("delete" in thread) {
              const threadId = runs.threadOf(runId);
              const updated = runs.updateDetached(runId, patch, fence, lastSeq);
              if (threadId == null) throw notFound("thread of run", runId);
              threads.delete(threadId);
              return updated;
            }
            const updated = runs.updateInTransaction(runId, patch, fence, lastSeq);
            if (writes?.checkpoint !== undefined) {
              if (updated.thread_id === null) throw notFound("thread of run", runId);
              checkpoints.add(updated.thread_id, writes.checkpoint);
            }
            // A deleted thread leaves its runs with thread_id NULL: nothing to set then.
            if (updated.thread_id !== null) threads.setStatus(updated.thread_id, thread.status);
            return updated;
          },
        ),
      };
    } catch (err) {
      db.close();
      ownerLock?.release();
      throw err;
    }
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
    return this.#write((repos) => repos.runs.insert(run, options));
  }

  /** See `Storage.insertRunOnNewThread`: both inserts in one write, atomic together. */
  async insertRunOnNewThread(
    thread: CreateThreadInput,
    run: NewRun,
    options: InsertRunOptions,
  ): Promise<RunRecord | null> {
    return this.#write((repos) => repos.newThreadRunTx.immediate(thread, run, options));
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

  /** Queues a write for the next group commit (see group-commit.ts). */
  #write<T>(write: (repos: Repositories) => T): Promise<T> {
    const repos = this.#open();
    repos.checkpointer?.noteWrite();
    return repos.writes.run(() => write(repos));
  }

  #open(): Repositories {
    if (this.#repos === null) throw new Error("SQLite storage is not open: call open() first");
    return this.#repos;
  }
}
