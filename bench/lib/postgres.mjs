// PostgreSQL for the benchmarks: a schema of its own per bench run (dropped at exit), the CPU of
// the database backends serving our servers, and a counting proxy for the write counter.
//
// The database is the one the tests use (BENCH_DATABASE_URL, else TEST_DATABASE_URL, else
// postgres://postgres@127.0.0.1:5432/test). Other sessions may use the same database at the
// same time, so nothing here reads database-wide figures as ours: backends are found by the
// `application_name` our servers connect with, and statements are counted on our own wire.
import { randomBytes } from "node:crypto";
import { createServer, connect as netConnect } from "node:net";
import pg from "pg";
import { cpuTimeMs } from "./proc.mjs";

export const PG_URL =
  process.env.BENCH_DATABASE_URL ??
  process.env.TEST_DATABASE_URL ??
  "postgres://postgres@127.0.0.1:5432/test";

/** Fails loudly (never skips) when PostgreSQL is not there. */
export async function requirePostgres() {
  const client = new pg.Client({ connectionString: PG_URL });
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (err) {
    throw new Error(
      `the PostgreSQL rows need PostgreSQL at ${PG_URL} (set BENCH_DATABASE_URL, or start it: ` +
        `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start): ${err.message}`,
    );
  } finally {
    await client.end().catch(() => {});
  }
}

/** Runs one query on a short-lived connection (outside any server's pool). */
export async function pgQuery(sql, values = []) {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows;
  } finally {
    await client.end().catch(() => {});
  }
}

const created = new Set();
let dropHookInstalled = false;

/**
 * A fresh schema name for one server or group of replicas, and the `--db` URL that selects it
 * (the server creates the schema on start). `application_name` names the connections, so their
 * backends can be found in pg_stat_activity. Every schema is dropped by `dropBenchSchemas()`.
 */
export function benchSchema(label) {
  const schema = `acp_bench_${label}_${randomBytes(3).toString("hex")}`;
  created.add(schema);
  const url = new URL(PG_URL);
  url.searchParams.set("schema", schema);
  url.searchParams.set("application_name", schema);
  return { schema, url: url.toString(), applicationName: schema };
}

/** Same schema and application name, the database reached through `host:port` (the proxy). */
export function viaProxy(db, port) {
  const url = new URL(db.url);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return url.toString();
}

/** Drops every schema this process created. Called at the end of the bench (and on failure). */
export async function dropBenchSchemas() {
  for (const schema of [...created]) {
    try {
      await pgQuery(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      created.delete(schema);
    } catch {
      // best effort: the schema name says where it came from
    }
  }
}

export function installSchemaCleanup(log) {
  if (dropHookInstalled) return;
  dropHookInstalled = true;
  // `exit` handlers cannot wait; the bench calls dropBenchSchemas() itself before it exits and
  // this only reports what is left behind when it could not.
  process.on("exit", () => {
    if (created.size > 0) log(`left behind in ${PG_URL}: schemas ${[...created].join(", ")}`);
  });
}

/**
 * CPU of the PostgreSQL backends serving one application name (our servers' pools and the bus),
 * read from /proc/<pid>/stat. Backends come and go (a pool opens connections under load and
 * closes idle ones), so `sample()` is called now and then: the last reading of every backend
 * ever seen is kept, and `totalMs()` is their sum, which only grows. The database's shared
 * background processes (WAL writer, checkpointer) are not included.
 */
export class BackendCpu {
  constructor(applicationNames) {
    this.names = applicationNames;
    this.last = new Map();
  }

  async sample() {
    const rows = await pgQuery(
      "SELECT pid FROM pg_stat_activity WHERE application_name = ANY($1::text[])",
      [this.names],
    );
    for (const { pid } of rows) {
      try {
        this.last.set(pid, cpuTimeMs(pid));
      } catch {
        // exited between the query and the read; its last reading stays
      }
    }
    // Backends seen before and still alive: refresh them too (they may have left the list).
    for (const pid of this.last.keys()) {
      try {
        this.last.set(pid, cpuTimeMs(pid));
      } catch {
        // gone: keep its last reading
      }
    }
    return this.totalMs();
  }

  totalMs() {
    let sum = 0;
    for (const ms of this.last.values()) sum += ms;
    return sum;
  }

  get backends() {
    return this.last.size;
  }

  /** Samples every `everyMs` until the returned stop() is called; stop() takes a last sample. */
  poll(everyMs = 500) {
    let stopped = false;
    const loop = (async () => {
      while (!stopped) {
        await new Promise((r) => setTimeout(r, everyMs));
        if (!stopped) await this.sample().catch(() => {});
      }
    })();
    return async () => {
      stopped = true;
      await loop;
      return this.sample();
    };
  }
}

/**
 * A TCP proxy in front of PostgreSQL that reads the server → client half of the wire protocol
 * (every backend message is a type byte and a length) and counts, per connection:
 *   - statements: CommandComplete ('C') messages, except BEGIN/COMMIT/ROLLBACK/SAVEPOINT/…;
 *   - commits: transactions that ended committed, i.e. a ReadyForQuery ('Z') with status idle
 *     after at least one statement since the previous ReadyForQuery, with no ErrorResponse
 *     and no ROLLBACK in between. An explicit BEGIN … COMMIT is one commit; a statement outside
 *     a transaction is one too (PostgreSQL commits it on its own, as xact_commit counts it);
 *   - writes: INSERT/UPDATE/DELETE statements (by tag), the rows they touched, and the commits
 *     of transactions in which they touched a row (`writeCommits`). An UPDATE that matched
 *     nothing (a poll finding no due delivery) writes no WAL and no commit record, as in SQLite,
 *     so its transaction counts as a commit but not as a write commit. (A transaction whose only
 *     change is a row lock, SELECT … FOR UPDATE, does write a commit record and is not counted
 *     either; the run path locks only rows it then writes.)
 * The client → server half is forwarded untouched. Our servers do not use SSL to localhost, so
 * the stream is plain; a connection that starts with anything else is counted as unreadable.
 */
export async function startCountingProxy(target = PG_URL) {
  const url = new URL(target);
  const upstream = { host: url.hostname, port: Number(url.port || 5432) };
  const counts = {
    statements: 0,
    commits: 0,
    writeCommits: 0,
    writes: 0,
    rowsWritten: 0,
    byTag: {},
    unreadable: 0,
  };
  const sockets = new Set();
  const server = createServer((client) => {
    const db = netConnect(upstream);
    sockets.add(client);
    sockets.add(db);
    const close = () => {
      client.destroy();
      db.destroy();
      sockets.delete(client);
      sockets.delete(db);
    };
    client.on("error", close);
    db.on("error", close);
    client.on("close", close);
    db.on("close", close);
    client.pipe(db);
    const parser = new BackendParser(counts);
    db.on("data", (chunk) => {
      parser.feed(chunk);
      if (!client.write(chunk)) {
        db.pause();
        client.once("drain", () => db.resume());
      }
    });
  });
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  return {
    port: server.address().port,
    counts,
    snapshot: () => structuredClone(counts),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const CONTROL_TAGS = new Set([
  "BEGIN",
  "COMMIT",
  "ROLLBACK",
  "SAVEPOINT",
  "RELEASE",
  "SET",
  "START TRANSACTION",
]);

class BackendParser {
  constructor(counts) {
    this.counts = counts;
    this.buf = Buffer.alloc(0);
    this.sinceReady = 0;
    this.wrote = false;
    this.failed = false;
  }

  feed(chunk) {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    while (this.buf.length >= 5) {
      const type = String.fromCharCode(this.buf[0]);
      const length = this.buf.readUInt32BE(1);
      if (length < 4 || length > 1 << 30) {
        // Not the protocol we expect (SSL, or a parsing error): stop reading this connection.
        this.counts.unreadable += 1;
        this.buf = Buffer.alloc(0);
        this.feed = () => {};
        return;
      }
      if (this.buf.length < 1 + length) return;
      const body = this.buf.subarray(5, 1 + length);
      this.message(type, body);
      this.buf = this.buf.subarray(1 + length);
    }
  }

  message(type, body) {
    if (type === "C") {
      const tag = body.toString("utf8", 0, body.length - 1);
      const verb = tag.replace(/ \d+( \d+)?$/, "");
      if (verb === "ROLLBACK") this.failed = true;
      if (CONTROL_TAGS.has(verb)) return;
      this.counts.statements += 1;
      this.counts.byTag[verb] = (this.counts.byTag[verb] ?? 0) + 1;
      this.sinceReady += 1;
      if (verb === "INSERT" || verb === "UPDATE" || verb === "DELETE") {
        const rows = Number(tag.split(" ").pop()) || 0;
        this.counts.writes += 1;
        this.counts.rowsWritten += rows;
        if (rows > 0) this.wrote = true;
      }
    } else if (type === "E") {
      this.failed = true;
    } else if (type === "Z") {
      const status = String.fromCharCode(body[0]);
      if (status === "I") {
        if (this.sinceReady > 0 && !this.failed) {
          this.counts.commits += 1;
          if (this.wrote) this.counts.writeCommits += 1;
        }
        this.sinceReady = 0;
        this.wrote = false;
        this.failed = false;
      } else if (status === "E") {
        this.failed = true;
      }
      // 'T' (inside a transaction block): keep counting until it ends.
    }
  }
}
