/**
 * The connection pool: URL and schema handling, per-connection settings, type parsing, and the
 * transaction helper every multi-statement operation goes through.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { invalid, isDomainError } from "../../util/errors.js";
import {
  type GiveUpReason,
  isWrite,
  type StatementKind,
  statementKind,
  WriteCounter,
} from "../write-counts.js";
import type { ConnectionTarget } from "./connection-target.js";
import {
  abortedAtCommit,
  type GroupConnection,
  PgGroupCommit,
  type WriteOptions,
} from "./group-commit.js";

/** What the repositories need from a pool or a client inside a transaction. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>>;
}

/**
 * Statements sent as named prepared statements: the text → its name. Parse analysis and
 * planning were most of the database's CPU per run (a run's INSERT took 0.45 ms to parse and
 * plan and 0.15 ms to execute, measured with log_statement_stats); prepared once per pooled
 * connection, a statement is then only bound and executed, and after five executions PostgreSQL
 * keeps a generic plan when it is no worse than the custom ones.
 *
 * Only statements whose best plan does not depend on their values are registered (see
 * `prepared`): lookups and writes by primary key, inserts. A statement whose plan depends on
 * its values (a count by status: `pending` is rare, `success` is most of the table) or on
 * `SET LOCAL` plan settings (the claim, run-claims.ts: a generic plan would outlive them) is
 * planned each time, as unnamed statements are.
 */
const PREPARED = new Map<string, { name: string; kind: StatementKind | null }>();

/**
 * Registers `text` as a statement to prepare (see PREPARED) and returns it unchanged. A
 * statement built at run time (an UPDATE of the patched columns) registers each form it takes:
 * the forms are few (one per set of columns), so the names stay bounded per connection.
 */
export function prepared(text: string): string {
  if (!PREPARED.has(text)) {
    // Its kind is worked out once too: a statement's WITH is read character by character.
    PREPARED.set(text, {
      name: `acp_${createHash("sha1").update(text).digest("hex").slice(0, 16)}`,
      kind: statementKind(text),
    });
  }
  return text;
}

/** The query pg gets: a prepared statement's name with its text when registered. */
function querySpec(text: string, values: unknown[] | undefined): string | pg.QueryConfig {
  const name = values === undefined ? undefined : PREPARED.get(text)?.name;
  return name === undefined ? text : { name, text, values };
}

/** pg's Query class, kept when the pool is made (pg is imported there: see createPool). */
let QueryClass: typeof pg.Query | undefined;

/**
 * `client.query(text, values)`, a registered statement sent by its name. Its Query is made from
 * the text and named afterwards: given a config object (name, text, values), pg copies it
 * property by property for every query (getOwnPropertyDescriptors, a slow path), which showed
 * in a run's profile; a text it takes as it is.
 */
function send<R extends pg.QueryResultRow>(
  client: pg.PoolClient,
  text: string,
  values: unknown[] | undefined,
): Promise<pg.QueryResult<R>> {
  const name = values === undefined ? undefined : PREPARED.get(text)?.name;
  if (name === undefined) return client.query<R>(text, values);
  const Query = QueryClass;
  if (Query === undefined) return client.query<R>({ name, text, values });
  return new Promise((resolve, reject) => {
    const query = new Query(text, values, (err, result) => {
      if (err) reject(err);
      else resolve(result as unknown as pg.QueryResult<R>);
    });
    (query as unknown as { name: string }).name = name;
    client.query(query);
  });
}

/** Counts `text` as WriteCounter.statement does, a prepared statement by its known kind. */
function countStatement(counter: WriteCounter, text: string): StatementKind | null {
  const known = PREPARED.get(text);
  if (known === undefined) return counter.statement(text);
  if (known.kind !== null) counter.statements[known.kind]++;
  return known.kind;
}

/**
 * Opens the pool. pg is imported here, not at the top: a server on SQLite never loads it (it
 * costs about 3 MB of memory at rest).
 */
export async function createPool(target: ConnectionTarget, max: number): Promise<pg.Pool> {
  const { default: pgModule } = await import("pg");
  QueryClass = pgModule.Query;
  // `-c search_path=…` is applied by the server when each pooled connection starts, so every
  // query (and every replica) sees the configured schema without an extra round trip.
  const options = [target.options, `-c search_path=${target.schema}`]
    .filter((o) => o !== null && o !== "")
    .join(" ");
  const pool = new pgModule.Pool({
    connectionString: target.url,
    max,
    options,
    // A query is written as soon as it is issued, without waiting for the one before to be
    // answered: a transaction's BEGIN goes out with its first statement (see `transaction`).
    // Code that awaits each query before the next, as everything else here does, sees no
    // difference.
    pipeline: true,
    types: typeParsers(pgModule.types),
  });
  // An idle connection that breaks (database restart, network cut) is emitted here; without a
  // listener the EventEmitter rethrows it and takes the whole server down. The pool drops the
  // connection and the next query opens a fresh one.
  pool.on("error", () => {});
  return pool;
}

function typeParsers(types: typeof pg.types): pg.CustomTypesConfig {
  // pg's own timestamptz parser gives a Date; the contract wants `toISOString()` text.
  const parseTimestamp = types.getTypeParser(types.builtins.TIMESTAMPTZ);
  const timestamp = (text: string) => (parseTimestamp(text) as Date).toISOString();
  // count(*) and other bigints: numbers, not strings (no value here comes near 2^53).
  const bigint = (text: string) => Number(text);
  // Asked for every column of every result: the parsers are made once, not per column.
  return {
    getTypeParser: ((oid: number, format?: string) => {
      if (oid === types.builtins.TIMESTAMPTZ) return timestamp;
      if (oid === types.builtins.INT8) return bigint;
      return types.getTypeParser(oid, format as "text");
    }) as pg.CustomTypesConfig["getTypeParser"],
  };
}

/** The options of a write whose statements must be atomic together. */
export const TRANSACTION: WriteOptions = { transaction: true };
/** A write of one statement, or a few issued together (see `WriteOptions.pipelined`). */
export const PIPELINED: WriteOptions = { pipelined: true };
/** TRANSACTION, for statements issued together (see `WriteOptions.pipelined`). */
export const PIPELINED_TRANSACTION: WriteOptions = { transaction: true, pipelined: true };

const RETRYABLE = new Set(["40P01", "40001"]); // deadlock detected, serialization failure
/** A group gives up on a write failing with one of these and runs it alone (group-commit.ts). */
const GROUP_GIVES_UP = new Map<string, GiveUpReason>([
  ["55P03", "lock_timeout"],
  ["40P01", "deadlock"],
  ["40001", "serialization"],
]);

const PLAIN_SELECT = /^\s*select\b/i;

/**
 * The pool as the repositories use it: plain queries, transactions on one connection, and
 * writes, which go through group commit (group-commit.ts). Every query error passes through
 * `translate`, so data PostgreSQL cannot take (a NUL character in any text, an out-of-range
 * number) becomes an `invalid` domain error wherever it shows up, reads included, instead of a
 * 500. Every statement and every commit of a transaction that wrote is counted (`counter`).
 */
export class Database implements Queryable {
  readonly pool: pg.Pool;
  readonly counter = new WriteCounter();
  readonly #groups: PgGroupCommit;

  constructor(pool: pg.Pool, maxGroups = 1, writesPerGroup?: number, groupBudgetMs?: number) {
    this.pool = pool;
    const connection: GroupConnection = {
      pool,
      counter: this.counter,
      alone: (write) =>
        write.transaction === true
          ? this.transaction(write.work, write.setup)
          : this.#autocommit(write.work),
      on: (client, wrote, before) => this.#counted(client, wrote, before),
      givesUp: (err) => GROUP_GIVES_UP.get(pgCode(err) ?? "") ?? null,
    };
    this.#groups = new PgGroupCommit(connection, maxGroups, writesPerGroup, groupBudgetMs);
  }

  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(
    text: string,
    values?: unknown[],
  ): Promise<pg.QueryResult<R>> {
    const kind = countStatement(this.counter, text);
    let result: pg.QueryResult<R>;
    try {
      const spec = querySpec(text, values);
      result =
        typeof spec === "string"
          ? await this.pool.query<R>(text, values)
          : await this.pool.query<R>(spec);
    } catch (err) {
      throw translate(err);
    }
    // Outside a transaction a write statement that changed rows commits on its own.
    if (isWrite(kind) && (result.rowCount ?? 0) > 0) this.counter.commit();
    return result;
  }

  /**
   * A write: queued for the next group commit, resolved once it is committed (see
   * group-commit.ts). `transaction` says its statements must be atomic together when it runs
   * alone; in a group it always has its own savepoint.
   */
  write<T>(work: (db: Queryable) => Promise<T>, options: WriteOptions = {}): Promise<T> {
    return this.#groups.run(work, options);
  }

  /** Waits for every queued write to settle (before the pool ends). */
  drain(): Promise<void> {
    return this.#groups.drain();
  }

  /**
   * Runs `work` in one READ COMMITTED transaction on one pooled connection, retrying a few times
   * when PostgreSQL aborts it as a deadlock victim (the work was rolled back, so it can run again).
   * `setup` (e.g. `SET LOCAL …`) goes out with the BEGIN, in the same round trip.
   */
  async transaction<T>(work: (db: Queryable) => Promise<T>, setup?: string): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      let wrote = false;
      // BEGIN is not awaited on its own: it goes out with the transaction's first statement,
      // one round trip for both, and is awaited by that statement (or before COMMIT). The
      // statement cannot run outside the transaction: BEGIN fails only with the connection,
      // which fails the statement too, and a failed `setup` aborts the transaction it began.
      let begin: Promise<unknown> | undefined = client.query(
        setup === undefined ? "BEGIN" : `BEGIN; ${setup}`,
      );
      begin.catch(() => undefined);
      const begun = async () => {
        const pending = begin;
        begin = undefined;
        await pending;
      };
      const db = this.#counted(
        client,
        () => {
          wrote = true;
        },
        begun,
      );
      let broken: Error | undefined;
      try {
        const result = await work(db);
        await begun();
        const done = await client.query("COMMIT");
        // COMMIT of an aborted transaction is answered ROLLBACK, not with an error.
        if (done.command !== "COMMIT") throw abortedAtCommit();
        if (wrote) this.counter.commit();
        return result;
      } catch (err) {
        try {
          await client.query("ROLLBACK");
        } catch (rollbackError) {
          // The connection is unusable: let the pool discard it instead of reusing it.
          broken = rollbackError as Error;
        }
        if (attempt < 3 && RETRYABLE.has(pgCode(err) ?? "")) continue;
        throw err;
      } finally {
        client.release(broken);
      }
    }
  }

  /**
   * Runs `work`'s statements each on its own (autocommit), retrying it a few times when
   * PostgreSQL aborts a statement as a deadlock victim or for serialization, as `transaction`
   * does, but only while none of its statements that may write has gone through: the aborted
   * statement was rolled back, and a write already committed must not run twice.
   */
  async #autocommit<T>(work: (db: Queryable) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let committed = false;
      const db: Queryable = {
        query: async <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => {
          const result = await this.query<R>(text, values);
          // Anything but a plain SELECT (a WITH may hold an UPDATE) may have committed rows.
          if (!PLAIN_SELECT.test(text)) committed = true;
          return result;
        },
      };
      try {
        return await work(db);
      } catch (err) {
        if (attempt < 3 && !committed && RETRYABLE.has(pgCode(err) ?? "")) continue;
        throw err;
      }
    }
  }

  /** Queries on `client` inside a transaction: counted, errors translated, writes reported. */
  #counted(
    client: pg.PoolClient,
    wrote: () => void,
    before: () => Promise<void> = async () => undefined,
  ): Queryable {
    return {
      query: async <R extends pg.QueryResultRow>(text: string, values?: unknown[]) => {
        const kind = countStatement(this.counter, text);
        let result: pg.QueryResult<R>;
        try {
          const pending = send<R>(client, text, values);
          pending.catch(() => undefined);
          // Written already; what was sent before it (BEGIN) is answered first.
          await before();
          result = await pending;
        } catch (err) {
          throw translate(err);
        }
        if (isWrite(kind) && (result.rowCount ?? 0) > 0) wrote();
        return result;
      },
    };
  }
}

function translate(err: unknown): unknown {
  const code = pgCode(err);
  if (code?.startsWith("22")) {
    return invalid(`a value cannot be stored: ${(err as Error).message}`, { sqlstate: code });
  }
  return err;
}

/** The SQLSTATE of a pg error, e.g. "23505". */
export function pgCode(err: unknown): string | undefined {
  if (isDomainError(err)) return undefined;
  if (err instanceof Error && "code" in err && typeof err.code === "string") return err.code;
  return undefined;
}
