import type Database from "better-sqlite3";

/** Told whether the transactions it opens commit (for the write counters, write-counting.ts). */
export interface CommitObserver {
  committed(): void;
  rolledBack(): void;
}

interface QueuedWrite {
  write: () => unknown;
  resolve: (value: unknown) => void;
  reject: (reason: unknown) => void;
}

/**
 * Group commit: the write operations requested during one turn of the event loop run in one
 * immediate transaction, each inside its own savepoint, and their promises settle after that
 * transaction commits.
 *
 * Why: with WAL and `synchronous = NORMAL` a commit costs more than the statements in it (the
 * WAL frames of every dirtied page, plus a checkpoint every ~1,000 pages). Concurrent runs touch
 * the same pages (the tail of `runs`, `run_frames` and their indexes), so one commit for all of
 * them writes far fewer pages than one commit each.
 *
 * Nothing is weakened: an operation's promise resolves only once its transaction is committed,
 * exactly as before, and an operation that throws rolls back to its own savepoint and rejects
 * alone; the others in the group still commit. Reads are not queued: a write nobody has seen
 * resolve yet has not happened, so a read before its commit is correctly ordered before it.
 */
export class GroupCommit {
  #queue: QueuedWrite[] = [];
  #scheduled = false;
  readonly #inSavepoint: Database.Transaction<(write: () => unknown) => unknown>;
  readonly #group: Database.Transaction<(writes: QueuedWrite[]) => PromiseSettledResult<unknown>[]>;

  readonly #observer: CommitObserver | undefined;

  constructor(db: Database.Database, observer?: CommitObserver) {
    this.#observer = observer;
    // Called inside the group's transaction, better-sqlite3 makes this a SAVEPOINT/RELEASE pair
    // (ROLLBACK TO on a throw), so each write is atomic on its own.
    this.#inSavepoint = db.transaction((write: () => unknown) => write());
    this.#group = db.transaction((writes: QueuedWrite[]) =>
      writes.map((queued): PromiseSettledResult<unknown> => {
        try {
          return { status: "fulfilled", value: this.#inSavepoint(queued.write) };
        } catch (reason) {
          // SQLITE_FULL, IOERR or NOMEM roll back the whole transaction, not just the savepoint:
          // then nothing of the group is kept, and the writes after it must not run alone.
          if (!db.inTransaction) throw reason;
          return { status: "rejected", reason };
        }
      }),
    );
  }

  /** Runs `write` in the next group; resolves with its result once that group is committed. */
  run<T>(write: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ write, resolve: resolve as (value: unknown) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  /** Commits what is queued now (close() calls it so no accepted write is dropped). */
  flushNow(): void {
    this.#flush();
  }

  #flush(): void {
    this.#scheduled = false;
    const writes = this.#queue;
    this.#queue = [];
    if (writes.length === 0) return;
    if (writes.length === 1) {
      // Alone: its own transaction (the repositories open one where they need it).
      const [only] = writes as [QueuedWrite];
      let value: unknown;
      try {
        value = only.write();
      } catch (err) {
        this.#observer?.rolledBack();
        only.reject(err);
        return;
      }
      this.#observer?.committed();
      only.resolve(value);
      return;
    }
    let results: PromiseSettledResult<unknown>[];
    try {
      results = this.#group.immediate(writes);
      this.#observer?.committed();
    } catch (err) {
      this.#observer?.rolledBack();
      // BEGIN or COMMIT failed (another process held the lock past busy_timeout, disk full…):
      // nothing of the group was kept.
      for (const queued of writes) queued.reject(err);
      return;
    }
    writes.forEach((queued, i) => {
      const result = results[i]!;
      if (result.status === "fulfilled") queued.resolve(result.value);
      else queued.reject(result.reason);
    });
  }
}
