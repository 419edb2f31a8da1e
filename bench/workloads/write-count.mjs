// Workload `write-count`: what one stateless POST /runs/wait (echo agent) costs the storage, on
// each backend, at 1 connection (nothing to share a commit with) and at 50 (SQLite's group
// commit can share one commit between concurrent runs).
//
// - SQLite: commit frames appended to the WAL during N runs (lib/sqlite-wal.mjs), with a read
//   snapshot held so the WAL cannot start over meanwhile. Statements are not visible from
//   outside the process.
// - PostgreSQL: the server's connections (pool and bus) go through a counting proxy
//   (lib/postgres.mjs) that reads the database's replies: statements, transactions committed,
//   INSERT/UPDATE/DELETE and rows touched. The database-wide pg_stat_database.xact_commit delta
//   is given beside it as a cross-check; it includes every other session on the database.
//
// The runs' own response only comes once their outcome is durable, but some writes may follow
// it (a stateless run's thread is removed after it ends), so the counts are read once they have
// stopped moving. What the server does at rest (lease renewals, polling) is measured over an
// idle window first and reported, not subtracted.
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { jsonRequest, Pool } from "../lib/http.mjs";
import {
  benchSchema,
  pgQuery,
  requirePostgres,
  startCountingProxy,
  viaProxy,
} from "../lib/postgres.mjs";
import { startOurs } from "../lib/servers.mjs";
import { holdSnapshot, readWal } from "../lib/sqlite-wal.mjs";

const RUNS = Math.max(20, Number(process.env.BENCH_WRITE_RUNS ?? 300));
const WARMUP_RUNS = 20;
const IDLE_WINDOW_MS = 2000;

/** N stateless runs over `connections` keep-alive connections; each must end in success. */
async function runMany(origin, body, count, connections) {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  let next = 0;
  let failed = 0;
  try {
    await Promise.all(
      Array.from({ length: connections }, async () => {
        while (next < count) {
          next += 1;
          const res = await jsonRequest(pool, "POST", "/runs/wait", body).catch(() => null);
          if (res?.run?.status !== "success") failed += 1;
        }
      }),
    );
  } finally {
    await pool.close();
  }
  if (failed > 0) throw new Error(`${failed} of ${count} runs did not end in success`);
}

/** Waits until `read()` returns the same value for `quietMs` (at most `maxMs`). */
async function settled(read, { quietMs = 500, maxMs = 5000 } = {}) {
  const deadline = performance.now() + maxMs;
  let last = read();
  let since = performance.now();
  while (performance.now() < deadline) {
    await sleep(100);
    const now = read();
    if (now !== last) {
      last = now;
      since = performance.now();
    } else if (performance.now() - since >= quietMs) break;
  }
  return last;
}

/**
 * The server's own storage counters from GET /metrics (acp_storage_commits_total and
 * acp_storage_statements_total), or null when the server has none (a build from before them).
 */
async function storageCounters(origin) {
  const res = await fetch(`${origin}/metrics`).catch(() => null);
  if (res === null || !res.ok) return null;
  const text = await res.text();
  const counts = { commits: null, statements: {} };
  for (const line of text.split("\n")) {
    const commit = /^acp_storage_commits_total\{[^}]*\} (\S+)$/.exec(line);
    if (commit) counts.commits = Number(commit[1]);
    const statement = /^acp_storage_statements_total\{[^}]*kind="(\w+)"[^}]*\} (\S+)$/.exec(line);
    if (statement) counts.statements[statement[1]] = Number(statement[2]);
  }
  return counts.commits === null ? null : counts;
}

/** What the server's counters moved by between two reads, per run. */
function countersPerRun(before, after, runs) {
  if (before === null || after === null) return null;
  const byKind = Object.keys(after.statements)
    .map((kind) => [kind, ((after.statements[kind] ?? 0) - (before.statements[kind] ?? 0)) / runs])
    .filter(([, n]) => n > 0);
  return {
    commits: (after.commits - before.commits) / runs,
    statements: byKind.reduce((sum, [, n]) => sum + n, 0),
    byKind: byKind.map(([kind, n]) => `${kind} ${n.toFixed(2)}`).join(", "),
  };
}

async function xactCommits() {
  const [r] = await pgQuery(
    "SELECT xact_commit::bigint AS n FROM pg_stat_database WHERE datname = current_database()",
  );
  return Number(r.n);
}

export async function writeCount(kit) {
  const { ctx, row, log, agentIds, waitBody } = kit;
  await requirePostgres();
  for (const connections of [1, 50]) {
    const W = `storage writes, runs/wait, ${connections} conn`;

    // SQLite
    {
      const db = join(ctx.tmp, `writes-${connections}.db`);
      const ours = await startOurs(ctx.plan, { tmp: ctx.tmp, configPath: ctx.config.path, db });
      try {
        const body = JSON.parse(waitBody((await agentIds(ours.origin)).echo));
        log(`${W}: SQLite, ${WARMUP_RUNS} warm-up runs, then ${RUNS}`);
        await runMany(ours.origin, body, WARMUP_RUNS, Math.min(connections, WARMUP_RUNS));
        await settled(() => readWal(db).frames);
        const snapshot = holdSnapshot(db);
        let w0;
        let w1;
        let idle;
        let m0 = null;
        let m1 = null;
        try {
          w0 = readWal(db);
          await sleep(IDLE_WINDOW_MS);
          idle = readWal(db).commits - w0.commits;
          w0 = readWal(db);
          m0 = await storageCounters(ours.origin);
          await runMany(ours.origin, body, RUNS, connections);
          await settled(() => readWal(db).frames);
          w1 = readWal(db);
          m1 = await storageCounters(ours.origin);
        } finally {
          snapshot.release();
        }
        const valid = w0.salt !== null && w0.salt === w1.salt;
        const commits = (w1.commits - w0.commits) / RUNS;
        row({
          id: `writes-sqlite-${connections}`,
          workload: W,
          figure: "write commits per run, SQLite",
          unit: "",
          ours: valid ? commits : null,
          baseline: null,
          baselineLabel: "—",
          target: "≤ 2 (steady state)",
          met: valid ? commits <= 2 : null,
          notes: valid
            ? `WAL commit frames during ${RUNS} runs ÷ ${RUNS}; ${((w1.frames - w0.frames) / RUNS).toFixed(1)} pages (${(((w1.frames - w0.frames) * (w1.pageSize + 24)) / RUNS / 1024).toFixed(1)} KB of WAL) per run; ${idle} commits in ${IDLE_WINDOW_MS / 1000} s at rest before the runs. Statements (reads and writes) run inside the server process and cannot be counted from outside it`
            : `the WAL started over during the count (salts ${w0.salt} → ${w1.salt}); no figure`,
        });
        const counted = countersPerRun(m0, m1, RUNS);
        row({
          id: `writes-sqlite-${connections}-statements`,
          workload: W,
          figure: "statements per run, SQLite (the server's counters)",
          unit: "",
          ours: counted?.statements ?? null,
          baseline: null,
          baselineLabel: "—",
          notes:
            counted === null
              ? "this build has no acp_storage_* counters on /metrics"
              : `acp_storage_statements_total by kind: ${counted.byKind}; acp_storage_commits_total rose ${counted.commits.toFixed(2)} per run (transactions that changed rows: the WAL figure's cross-check); the scrapes' own reads included`,
        });
      } finally {
        await ours.proc.stop();
      }
    }

    // PostgreSQL, through the counting proxy
    {
      const proxy = await startCountingProxy();
      const schema = benchSchema(`writes${connections}`);
      const ours = await startOurs(ctx.plan, {
        tmp: ctx.tmp,
        configPath: ctx.config.path,
        db: viaProxy(schema, proxy.port),
      });
      try {
        const body = JSON.parse(waitBody((await agentIds(ours.origin)).echo));
        log(`${W}: PostgreSQL, ${WARMUP_RUNS} warm-up runs, then ${RUNS}`);
        await runMany(ours.origin, body, WARMUP_RUNS, Math.min(connections, WARMUP_RUNS));
        await settled(() => proxy.counts.statements);
        const idle0 = proxy.snapshot();
        await sleep(IDLE_WINDOW_MS);
        const idle1 = proxy.snapshot();
        const x0 = await xactCommits();
        const c0 = proxy.snapshot();
        const m0 = await storageCounters(ours.origin);
        const runsStarted = performance.now();
        await runMany(ours.origin, body, RUNS, connections);
        await settled(() => proxy.counts.statements);
        const c1 = proxy.snapshot();
        // The server's own writes at rest (lease renewals, the webhook outbox) over the same
        // time, at the idle window's rate: what the runs themselves cost is the rest.
        const atRest =
          ((idle1.writeCommits - idle0.writeCommits) / IDLE_WINDOW_MS) *
          (performance.now() - runsStarted);
        const runCommits = (c1.writeCommits - c0.writeCommits - atRest) / RUNS;
        const counted = countersPerRun(m0, await storageCounters(ours.origin), RUNS);
        const x1 = await xactCommits();
        const per = (key) => (c1[key] - c0[key]) / RUNS;
        const tags = Object.keys(c1.byTag)
          .map((tag) => [tag, ((c1.byTag[tag] ?? 0) - (c0.byTag[tag] ?? 0)) / RUNS])
          .filter(([, n]) => n > 0)
          .sort((a, b) => b[1] - a[1])
          .map(([tag, n]) => `${tag} ${n.toFixed(2)}`)
          .join(", ");
        const idleNote = `${idle1.statements - idle0.statements} statements and ${idle1.commits - idle0.commits} commits in ${IDLE_WINDOW_MS / 1000} s at rest before the runs`;
        row({
          id: `writes-pg-${connections}`,
          workload: W,
          figure: "write commits per run, PostgreSQL",
          unit: "",
          ours: per("writeCommits"),
          baseline: null,
          baselineLabel: "—",
          target: "≤ 2 (steady state)",
          met: runCommits <= 2,
          notes:
            `transactions committed on the server's connections in which an INSERT/UPDATE/DELETE touched a row ÷ ${RUNS} runs (what the SQLite row counts); ${idleNote}; less the at-rest rate over the runs' time: ${runCommits.toFixed(2)} per run (what "met" judges)` +
            (c1.unreadable > 0 ? `; ${c1.unreadable} connection(s) could not be read` : ""),
        });
        row({
          id: `writes-pg-${connections}-transactions`,
          workload: W,
          figure: "transactions per run, PostgreSQL (read-only ones too)",
          unit: "",
          ours: per("commits"),
          baseline: null,
          baselineLabel: "—",
          notes:
            `every transaction committed on the server's connections, explicit or implicit (a statement outside BEGIN is one), as xact_commit counts them: each is a round trip and a commit record; ` +
            `pg_stat_database.xact_commit rose ${((x1 - x0) / RUNS).toFixed(2)} per run meanwhile (database-wide: includes other sessions and the bench's own queries)`,
        });
        row({
          id: `writes-pg-${connections}-statements`,
          workload: W,
          figure: "statements per run, PostgreSQL",
          unit: "",
          ours: per("statements"),
          baseline: null,
          baselineLabel: "—",
          notes:
            `by command tag: ${tags}; ${per("writes").toFixed(2)} INSERT/UPDATE/DELETE touching ${per("rowsWritten").toFixed(2)} rows (BEGIN/COMMIT/SET not counted as statements)` +
            (counted === null
              ? ""
              : `; the server's own counters: ${counted.statements.toFixed(2)} statements (${counted.byKind}; the bus's NOTIFYs are not among them) and ${counted.commits.toFixed(2)} commits that changed rows per run`),
        });
      } finally {
        await ours.proc.stop();
        await proxy.close();
      }
    }
  }
}
