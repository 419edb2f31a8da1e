import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import Database from "better-sqlite3";
import { notFound } from "../../util/errors.js";
import type {
  CreateThreadInput,
  Fence,
  FinishRunWrites,
  InsertRunOptions,
  NewRun,
  RunPatch,
  RunRecord,
  ThreadOnFinish,
} from "../types.js";
import type { WriteCounter } from "../write-counts.js";
import { WalCheckpointer } from "./checkpointer.js";
import { CheckpointRepository } from "./checkpoints.js";
import { storedTextBytes } from "./frame-pages.js";
import { FrameRepository } from "./frames.js";
import { GroupCommit } from "./group-commit.js";
import { HeldRunRows } from "./held-runs.js";
import { makeContainsFunction } from "./json.js";
import { SqliteMcpSessions } from "./mcp-sessions.js";
import { migrate } from "./migrate.js";
import { checkpointSeqOf, sharesState, sqlOutputWithState } from "./output-state.js";
import { OwnerLock } from "./owner-lock.js";
import { PushConfigRepository } from "./push-configs.js";
import { PushCursorRepository } from "./push-cursors.js";
import { SqliteRetention } from "./retention.js";
import { RunRepository } from "./runs.js";
import { ThreadRepository } from "./threads.js";
import { WebhookRepository } from "./webhooks.js";
import { SqliteWriteCounting } from "./write-counting.js";

/** The open database of a SqliteStorage: its connection, repositories and transactions. */
export interface SqliteRepositories {
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
  mcpSessions: SqliteMcpSessions;
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
 * Opens the database file (or `:memory:`): the connection's settings, why each is what it is,
 * the migrations, and the repositories over it. `write` runs a write in the storage's group
 * commit (the retention sweeps write through it).
 */
export function openDatabase(
  path: string,
  counter: WriteCounter,
  write: <T>(work: (repos: SqliteRepositories) => T) => Promise<T>,
): { repos: SqliteRepositories; appliedMigrations: string[] } {
  const inMemory = path === ":memory:";
  if (!inMemory) mkdirSync(dirname(resolve(path)), { recursive: true });
  const db = new Database(path);
  // Before any statement is prepared: every one of them is counted from the start.
  const counting = new SqliteWriteCounting(db, counter);
  let ownerLock: OwnerLock | null = null;
  try {
    // Set before anything else touches the file: another process may hold its lock right now.
    db.pragma("busy_timeout = 5000");
    // A new (empty) file gives the pages retention frees back to the file system; only there,
    // before the first transaction writes its header: an existing file keeps its own mode.
    if (db.pragma("page_count", { simple: true }) === 0) db.pragma("auto_vacuum = INCREMENTAL");
    // Before any change to the file: a process refused it leaves its owner's work alone.
    if (!inMemory) ownerLock = OwnerLock.acquire(db, path);
    if (!inMemory) {
      db.pragma("journal_mode = WAL");
      // A backstop only: the checkpointer's worker copies the WAL back long before this.
      db.pragma("wal_autocheckpoint = 10000");
      // Each restart of the WAL truncates the file to at most 4 MB, so its size keeps telling
      // the checkpointer how much there is to copy.
      db.pragma("journal_size_limit = 4194304");
    }
    db.pragma("synchronous = NORMAL");
    // A 1 MB page cache, not better-sqlite3's 16 MB (SQLITE_DEFAULT_CACHE_SIZE=-16000): the
    // run path's working set is the tail of a few indexes, and a long run's frames filled the
    // rest with pages never read again. 4 MB took 12 MB off a 10 MB run's peak, and 1 MB another
    // 3-4 MB off a 4 MB run's on a fresh server; runs/s unchanged (BENCH_ONLY=storage and
    // wait-50, alternated). The OS's page cache still has the file.
    db.pragma("cache_size = -1000");
    db.pragma("foreign_keys = ON");
    // Bounds the ANALYZE that `PRAGMA optimize` (at close) may run on a large database.
    db.pragma("analysis_limit = 1000");
    db.function("acp_json_contains", { deterministic: true }, makeContainsFunction());
    // The trigger of a deleted checkpoint (migration 018) writes its runs' outputs whole again.
    db.function("acp_output_state_of", { deterministic: true }, checkpointSeqOf);
    db.function("acp_output_with_state", { deterministic: true }, sqlOutputWithState);
    db.function("acp_page_text_bytes", { deterministic: true }, (data: unknown) =>
      data === null ? null : storedTextBytes(data as string | Buffer),
    );
    const appliedMigrations = migrate(db);
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
    const repos: SqliteRepositories = {
      db,
      checkpoints,
      threads,
      runs,
      heldRuns: new HeldRunRows(db, frames, threads, checkpoints),
      frames,
      webhooks,
      pushConfigs: new PushConfigRepository(db),
      pushCursors: new PushCursorRepository(db, webhooks),
      writes: new GroupCommit(db, counting),
      checkpointer: inMemory
        ? null
        : new WalCheckpointer(path, (message) =>
            process.emitWarning(`WAL checkpoint failed: ${message}`, "SqliteWarning"),
          ),
      ownerLock,
      retention: new SqliteRetention(db, write),
      mcpSessions: new SqliteMcpSessions(db, (work) => write(() => work())),
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
          // An output holding the checkpoint's state refers to it (output-state.ts).
          const stateOf = sharesState(runId, patch.output, writes?.checkpoint)
            ? checkpoints.nextSeq()
            : undefined;
          const updated = runs.updateInTransaction(runId, patch, fence, lastSeq, stateOf);
          if (writes?.checkpoint !== undefined) {
            if (updated.thread_id === null) throw notFound("thread of run", runId);
            checkpoints.addEnding(updated.thread_id, writes.checkpoint, thread.status, stateOf);
          } else if (updated.thread_id !== null) {
            // A deleted thread leaves its runs with thread_id NULL: nothing to set then.
            threads.setStatus(updated.thread_id, thread.status);
          }
          return updated;
        },
      ),
    };
    return { repos, appliedMigrations };
  } catch (err) {
    db.close();
    ownerLock?.release();
    throw err;
  }
}
