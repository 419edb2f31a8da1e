import type Database from "better-sqlite3";
import { isWrite, statementKind, type WriteCounter } from "../write-counts.js";

/**
 * Counts what this connection runs (see write-counts.ts): every statement it prepares counts
 * each time it runs, by kind, and a write that changed rows outside a transaction is a commit
 * of its own (one that changed nothing leaves nothing to commit, like SQLite's WAL).
 * Writes inside a transaction are remembered until the one who opened it (the group commit,
 * group-commit.ts) says whether it committed.
 *
 * Installed on the connection before the repositories prepare their statements; what it adds
 * per statement is one function call and an increment.
 */
export class SqliteWriteCounting {
  readonly counter: WriteCounter;
  /** A write ran inside the transaction that is open now. */
  #wroteInTransaction = false;

  constructor(db: Database.Database, counter: WriteCounter) {
    this.counter = counter;
    const prepare = db.prepare.bind(db);
    db.prepare = ((sql: string) => {
      const statement = prepare(sql);
      const kind = statementKind(sql);
      const write = isWrite(kind);
      for (const method of ["run", "get", "all", "iterate"] as const) {
        const original = statement[method] as (...args: unknown[]) => unknown;
        (statement as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
          if (kind !== null) counter.statements[kind]++;
          const result = original.apply(statement, args);
          if (write && changedRows(method, result)) {
            if (db.inTransaction) this.#wroteInTransaction = true;
            else counter.commit();
          }
          return result;
        };
      }
      return statement;
    }) as typeof db.prepare;
  }

  /** The transaction opened by the caller committed: a commit if something in it wrote. */
  committed(): void {
    if (this.#wroteInTransaction) this.counter.commit();
    this.#wroteInTransaction = false;
  }

  /** It rolled back: nothing it wrote counts as committed. */
  rolledBack(): void {
    this.#wroteInTransaction = false;
  }
}

/** Whether a write statement changed a row: `run` says so, RETURNING statements return rows. */
function changedRows(method: "run" | "get" | "all" | "iterate", result: unknown): boolean {
  if (method === "run") return (result as Database.RunResult).changes > 0;
  if (method === "get") return result !== undefined;
  if (method === "all") return (result as unknown[]).length > 0;
  return true;
}
