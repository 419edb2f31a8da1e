import { realpathSync } from "node:fs";
import { hostname } from "node:os";
import Database from "better-sqlite3";
import { sqliteCode } from "./mapping.js";

/** Who holds a database file: shown to a process that is refused it. */
export interface DatabaseOwner {
  pid: number;
  host: string;
  /** When it took the file (ISO 8601). */
  since: string;
}

/** A second process tried to open a SQLite file that a live process owns. */
export class DatabaseInUseError extends Error {
  constructor(
    readonly path: string,
    readonly owner: DatabaseOwner | null,
  ) {
    const who = owner
      ? `another process (pid ${owner.pid} on host ${owner.host}, since ${owner.since})`
      : "another process";
    super(
      `database file ${path} is in use by ${who}: one server owns a SQLite file; stop that one or give this one another database file`,
    );
    this.name = "DatabaseInUseError";
  }
}

const OWNER_TABLE = `CREATE TABLE IF NOT EXISTS owner (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  pid INTEGER NOT NULL,
  host TEXT NOT NULL,
  since TEXT NOT NULL
)`;

/**
 * One process owns a SQLite database file: it holds a write lock on a sidecar file
 * (`<database>-lock`) for as long as the storage is open, and another process that cannot
 * take that lock refuses the file, naming the owner.
 *
 * Why a held OS lock rather than a pid or a lease in the database: the kernel drops the lock the
 * moment its process ends, however it ends (SIGKILL, out of memory), so a dead owner is taken over
 * at once and a live one is never mistaken for dead, with no pid that could have been reused and
 * no clock or renewal involved. SQLite takes the lock (fcntl on POSIX, LockFileEx on Windows),
 * which also orders connections within one process. The lock cannot live on the database file
 * itself: the server's own connections, its checkpoint worker and an operator's `sqlite3 .backup`
 * all take that file's locks.
 *
 * The lock is SQLite's RESERVED lock (an open `BEGIN IMMEDIATE`): other processes may still read
 * the sidecar, so the one refused can say who holds it. The owner writes its pid and host before
 * taking the lock for good, and that write and the refused process's read both happen under the
 * database's own write lock, so a refused process never reads a half-finished takeover.
 */
export class OwnerLock {
  private constructor(
    private readonly lock: Database.Database,
    readonly path: string,
  ) {}

  /**
   * Takes the file `path` (already opened as `db`) for this process, or throws
   * DatabaseInUseError when a live process holds it. Locks through symlinks reach the real file.
   */
  static acquire(db: Database.Database, path: string): OwnerLock {
    const file = realpathSync(path);
    const gate = takeGate(db);
    let lock: Database.Database | undefined;
    try {
      lock = openLockFile(`${file}-lock`);
      takeOrRefuse(lock, file);
      lock.exec(OWNER_TABLE);
      lock
        .prepare("INSERT OR REPLACE INTO owner (id, pid, host, since) VALUES (1, ?, ?, ?)")
        .run(process.pid, hostname(), new Date().toISOString());
      lock.exec("COMMIT");
      // Held from here until release(): only a process holding the gate tries to take it.
      takeOrRefuse(lock, file);
      return new OwnerLock(lock, file);
    } catch (err) {
      lock?.close();
      throw err;
    } finally {
      if (gate) db.exec("ROLLBACK");
    }
  }

  /** Gives the file up (close() of the storage); a process that exits gives it up anyway. */
  release(): void {
    if (!this.lock.open) return;
    if (this.lock.inTransaction) this.lock.exec("ROLLBACK");
    this.lock.close();
  }
}

/**
 * The database's write lock, held while the owner is checked and written (see OwnerLock). An
 * owner busy writing for longer than the busy timeout leaves it to us: the check is then made
 * without it, which is as safe (the sidecar's lock decides) but may name the previous owner.
 */
function takeGate(db: Database.Database): boolean {
  try {
    db.exec("BEGIN IMMEDIATE");
    return true;
  } catch (err) {
    if (sqliteCode(err) === "SQLITE_BUSY") return false;
    throw err;
  }
}

function openLockFile(path: string): Database.Database {
  try {
    // No busy wait: a held lock means a live owner, and waiting would not change that.
    return new Database(path, { timeout: 0 });
  } catch (err) {
    throw new Error(`cannot open the lock file ${path}: ${(err as Error).message}`);
  }
}

function takeOrRefuse(lock: Database.Database, file: string): void {
  try {
    lock.exec("BEGIN IMMEDIATE");
  } catch (err) {
    if (sqliteCode(err) !== "SQLITE_BUSY") throw err;
    throw new DatabaseInUseError(file, readOwner(lock));
  }
}

function readOwner(lock: Database.Database): DatabaseOwner | null {
  try {
    return (
      (lock.prepare("SELECT pid, host, since FROM owner WHERE id = 1").get() as
        | DatabaseOwner
        | undefined) ?? null
    );
  } catch {
    // No owner table yet (a process that died while creating it), or unreadable: name no one.
    return null;
  }
}
