// Workload `wait-pg`: stateless POST /runs/wait on the echo agent at 50 connections, on
// PostgreSQL with one replica and with two replicas sharing one schema, beside SQLite, all in
// the same run and interleaved (SQLite, one replica, two replicas; again), each server of ours
// pinned to the server CPU as in the other workloads.
//
// The CPU figures: each server process's own (/proc/<pid>/stat), and the PostgreSQL backends
// serving its connections (found by application_name, see lib/postgres.mjs). SQLite does its
// storage work inside the server process, so "server + database CPU per run" compares like
// with like.
import { join } from "node:path";
import { cannon, jsonRequest, Pool } from "../lib/http.mjs";
import { BackendCpu, benchSchema, PG_URL, requirePostgres } from "../lib/postgres.mjs";
import { addOwnCpuSource, cpuTimeMs } from "../lib/proc.mjs";
import { startOurs } from "../lib/servers.mjs";

const CONNECTIONS = 50;

export async function postgresWait(kit) {
  const { ctx, row, log, agentIds, waitBody, SECONDS, ROUNDS, WARMUP_SECONDS } = kit;
  const W = `runs/wait, echo, ${CONNECTIONS} conn`;
  await requirePostgres();
  const single = benchSchema("one");
  const shared = benchSchema("two");
  const servers = [];
  const start = async (db) => {
    const s = await startOurs(ctx.plan, { tmp: ctx.tmp, configPath: ctx.config.path, db });
    servers.push(s);
    return s;
  };
  try {
    const sqlite = await start(join(ctx.tmp, "wait-pg-sqlite.db"));
    const one = await start(single.url);
    // The second replica starts once the first has migrated the shared schema.
    const twoA = await start(shared.url);
    const twoB = await start(shared.url);
    const echo = (await agentIds(sqlite.origin)).echo;
    const body = waitBody(echo);
    for (const s of [sqlite, one, twoA, twoB]) {
      const pool = new Pool(s.origin, { connections: 1 });
      const check = await jsonRequest(pool, "POST", "/runs/wait", JSON.parse(body));
      await pool.close();
      if (check?.run?.status !== "success") {
        throw new Error(
          `runs/wait sanity check on ${s.name}: ${JSON.stringify(check).slice(0, 300)}`,
        );
      }
    }
    const dbCpu = {
      one: new BackendCpu([single.applicationName]),
      two: new BackendCpu([shared.applicationName]),
    };
    for (const tracker of Object.values(dbCpu)) {
      await tracker.sample();
      addOwnCpuSource(tracker);
    }

    // Each side: the processes it measures and how the 50 connections are spread over them.
    const sides = {
      sqlite: { label: "SQLite", procs: [sqlite], db: null },
      one: { label: "PostgreSQL, 1 replica", procs: [one], db: dbCpu.one },
      two: { label: "PostgreSQL, 2 replicas", procs: [twoA, twoB], db: dbCpu.two },
    };
    const acc = {};
    for (const id of Object.keys(sides)) {
      acc[id] = {
        ok: 0,
        bad: 0,
        seconds: 0,
        db: 0,
        perProc: sides[id].procs.map(() => ({ ok: 0, cpu: 0 })),
      };
    }
    const phaseOf = async (id, seconds) => {
      const side = sides[id];
      const share = Math.floor(CONNECTIONS / side.procs.length);
      const cpu0 = side.procs.map((p) => cpuTimeMs(p.proc.pid));
      const db0 = side.db ? await side.db.sample() : 0;
      const stopPolling = side.db ? side.db.poll() : async () => 0;
      // Two replicas: two autocannon instances at once, 25 connections each.
      const results = await Promise.all(
        side.procs.map((p) =>
          cannon({ url: `${p.origin}/runs/wait`, connections: share, seconds, body }),
        ),
      );
      const db1 = await stopPolling();
      return {
        results,
        cpu: side.procs.map((p, i) => cpuTimeMs(p.proc.pid) - cpu0[i]),
        db: db1 - db0,
      };
    };

    log(`${W}: warm-up (SQLite, PostgreSQL 1 replica, 2 replicas)`);
    for (const id of Object.keys(sides)) await phaseOf(id, WARMUP_SECONDS);
    const phase = Math.max(1, Math.round(SECONDS / ROUNDS));
    for (let r = 0; r < ROUNDS; r++) {
      for (const id of Object.keys(sides)) {
        log(`${W}: round ${r + 1}/${ROUNDS}, ${sides[id].label}, ${phase} s`);
        const res = await phaseOf(id, phase);
        const a = acc[id];
        // The phase lasts as long as its longest autocannon (they start together).
        a.seconds += Math.max(...res.results.map((x) => x.seconds));
        a.db += res.db;
        res.results.forEach((x, i) => {
          a.ok += x.ok;
          a.bad += x.non2xx + x.errors + x.timeouts;
          a.perProc[i].ok += x.ok;
          a.perProc[i].cpu += res.cpu[i];
        });
      }
    }

    const rps = (a) => a.ok / a.seconds;
    const nodeCpu = (a) => a.perProc.reduce((s, p) => s + p.cpu, 0);
    const perRun = (ms, a) => ms / a.ok;
    const s = acc.sqlite;
    const o = acc.one;
    const t = acc.two;
    const ofSqlite = rps(o) / rps(s);
    row({
      id: "wait-pg-1",
      workload: W,
      figure: "runs/s, PostgreSQL, 1 replica",
      unit: "/s",
      ours: rps(o),
      baseline: rps(s),
      baselineLabel: "SQLite, same run",
      target: "≥ 0.6× SQLite",
      met: ofSqlite >= 0.6,
      notes:
        `${rps(o) >= 1000 ? "at least" : "below"} 1,000 runs/s; ${o.ok} runs in ${o.seconds.toFixed(1)} s (${o.bad} non-2xx/errors); SQLite ${s.ok} runs (${s.bad} non-2xx/errors); ` +
        `PostgreSQL at ${new URL(PG_URL).host} on this machine (not pinned: it shares both CPUs with the bench), schema ${single.schema}, pool of 10 connections per replica`,
    });
    row({
      id: "wait-pg-1-cpu",
      workload: W,
      figure: "server CPU per run, PostgreSQL, 1 replica",
      unit: "cpu-ms",
      ours: perRun(nodeCpu(o), o),
      baseline: perRun(nodeCpu(s), s),
      baselineLabel: "SQLite server",
      target: "≤ 1.5× SQLite",
      met: perRun(nodeCpu(o), o) <= 1.5 * perRun(nodeCpu(s), s),
      notes: `the server process only; the PostgreSQL backends serving it used another ${perRun(o.db, o).toFixed(3)} ms per run (${dbCpu.one.backends} backends seen)`,
    });
    row({
      id: "wait-pg-1-db-cpu",
      workload: W,
      figure: "database CPU per run, PostgreSQL, 1 replica",
      unit: "cpu-ms",
      ours: perRun(o.db, o),
      baseline: perRun(nodeCpu(s), s),
      baselineLabel: "SQLite server, storage and all",
      target: "≤ 0.6 ms",
      met: perRun(o.db, o) <= 0.6,
      notes: `the PostgreSQL backends serving the replica (${dbCpu.one.backends} seen), /proc/<pid>/stat sampled every 0.5 s, ÷ runs`,
    });
    row({
      id: "wait-pg-1-total-cpu",
      workload: W,
      figure: "server + database CPU per run, PostgreSQL, 1 replica",
      unit: "cpu-ms",
      ours: perRun(nodeCpu(o) + o.db, o),
      baseline: perRun(nodeCpu(s), s),
      baselineLabel: "SQLite server (storage in-process)",
      notes:
        "server process + its PostgreSQL backends (/proc/<pid>/stat, found in pg_stat_activity by application_name); " +
        "the database's shared background processes (WAL writer, checkpointer, autovacuum) are not included",
    });
    row({
      id: "wait-pg-2",
      workload: W,
      figure: "runs/s, PostgreSQL, 2 replicas on one schema",
      unit: "/s",
      ours: rps(t),
      baseline: rps(o),
      baselineLabel: "1 replica, same run",
      target: "reported beside 1 replica",
      notes:
        `two autocannon instances at once, ${Math.floor(CONNECTIONS / 2)} connections to each replica; ` +
        `${t.ok} runs in ${t.seconds.toFixed(1)} s (${t.bad} non-2xx/errors): replica A ${t.perProc[0].ok}, replica B ${t.perProc[1].ok}. ` +
        (ctx.plan.applied
          ? "Both replicas are pinned to the one server CPU (as the single replica is), so this shows what coordination costs at equal CPU, not how replicas scale on more cores"
          : "no pinning: the replicas, PostgreSQL and the load generator share every CPU"),
    });
    for (const [i, name] of ["A", "B"].entries()) {
      const p = t.perProc[i];
      row({
        id: `wait-pg-2-cpu-${name.toLowerCase()}`,
        workload: W,
        figure: `server CPU per run, replica ${name} of 2`,
        unit: "cpu-ms",
        ours: p.cpu / p.ok,
        baseline: perRun(nodeCpu(o), o),
        baselineLabel: "1 replica",
        notes: `replica ${name}'s CPU ÷ the runs it answered (${p.ok}); it also executes runs queued by the other replica, so the two can differ`,
      });
    }
    row({
      id: "wait-pg-2-db-cpu",
      workload: W,
      figure: "database CPU per run, 2 replicas",
      unit: "cpu-ms",
      ours: perRun(t.db, t),
      baseline: perRun(o.db, o),
      baselineLabel: "1 replica",
      notes: `PostgreSQL backends serving both replicas (${dbCpu.two.backends} seen) ÷ runs`,
    });
  } finally {
    for (const s of servers.reverse()) await s.proc.stop();
  }
}
