#!/usr/bin/env node
// `npm run bench`: end-to-end benchmarks of the built server (dist/cli.js, as a user runs it),
// each figure beside a baseline measured in the same run, interleaved with it.
// See bench/README.md for what every row means.
//
// Environment:
//   BENCH_SECONDS=10        main measuring time of the 50-connection runs/wait workload (per
//                           side); the other workloads scale from it
//   BENCH_ROUNDS=2          ceiling/ours alternations per workload
//   BENCH_ONLY=a,b          only these workloads (ids: see WORKLOADS below / README)
//   BENCH_THREADS=100000    threads seeded for the search workload
//   BENCH_IDLE_STREAMS=1000 idle streams held open
//   BENCH_WRITE_RUNS=300    runs counted by the write counter (per backend and concurrency)
//   BENCH_STORAGE_MB=10     text content of the storage workload's one large run
//   BENCH_STORAGE_BASELINE_CLI  another build's dist/cli.js, measured beside ours by `storage`
//   BENCH_DATABASE_URL      PostgreSQL for the wait-pg and write-count rows (default: the
//                           tests' TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test);
//                           each server gets a schema of its own, dropped at the end
//   BENCH_QUIET_WAIT=0      before each workload, wait up to this many seconds for other
//                           processes to leave the CPUs alone (< 5 % of a core for 1 s)
//   BENCH_NO_PIN=1          do not pin with taskset
//   BENCH_SKIP_BUILD=1, BENCH_STRICT_BUILD=1, BENCH_KEEP_TMP=1
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fmt, fmtNum } from "./lib/format.mjs";
import {
  Client,
  cannon,
  jsonRequest,
  latencyLoop,
  openIdleStreams,
  Pool,
  readSse,
  summarize,
  ttfeLoop,
} from "./lib/http.mjs";
import { dropBenchSchemas, installSchemaCleanup } from "./lib/postgres.mjs";
import {
  cpuTimeMs,
  foreignLoad,
  installCleanupHooks,
  machineFacts,
  pinningPlan,
  pinSelf,
  procAvailable,
  rssBytes,
  spawnNode,
} from "./lib/proc.mjs";
import {
  BENCH_DIR,
  ensureBuilt,
  makeTempDir,
  RESULTS_DIR,
  STREAM_EVENTS,
  startCeiling,
  startOurs,
  writeBenchConfig,
} from "./lib/servers.mjs";
import { conversationsWorkload } from "./workloads/conversations.mjs";
import { mcpCall } from "./workloads/mcp-call.mjs";
import { postgresWait } from "./workloads/postgres-wait.mjs";
import { storageLargeRun } from "./workloads/storage-large-run.mjs";
import { storedTaskBytes } from "./workloads/stored-task-bytes.mjs";
import { tracingWait } from "./workloads/tracing-wait.mjs";
import { writeCount } from "./workloads/write-count.mjs";

const env = process.env;
const SECONDS = Math.max(2, Number(env.BENCH_SECONDS ?? 10));
const ROUNDS = Math.max(1, Math.round(Number(env.BENCH_ROUNDS ?? 2)));
const THREADS = Math.max(1000, Number(env.BENCH_THREADS ?? 100_000));
const IDLE_STREAMS = Math.max(10, Number(env.BENCH_IDLE_STREAMS ?? 1000));
const WARMUP_SECONDS = 1;
/** Upper bound on requests in any one latency phase. */
const MAX_REQUESTS = 200_000;

const log = (msg) =>
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

// ---------------------------------------------------------------------------------------------
// Results

/** @type {Array<Record<string, unknown>>} */
const rows = [];
/** Per workload: elapsed seconds and the CPU other processes used meanwhile (share of one core). */
const workloadRuns = [];

function row(r) {
  const ratio =
    r.ratio !== undefined
      ? r.ratio
      : Number.isFinite(r.ours) && Number.isFinite(r.baseline) && r.baseline !== 0
        ? r.ours / r.baseline
        : null;
  rows.push({ baselineLabel: null, target: "—", met: null, notes: "", ...r, ratio });
}

function printTable(facts) {
  const header = ["workload", "figure", "ours", "baseline", "ratio", "target", "met?"];
  const lines = rows.map((r) => [
    r.workload,
    r.figure,
    fmt(r.ours, r.unit),
    r.baseline === null || r.baseline === undefined
      ? (r.baselineLabel ?? "n/a")
      : `${fmt(r.baseline, r.unit)}${r.baselineLabel ? ` (${r.baselineLabel})` : ""}`,
    r.ratio === null || !Number.isFinite(r.ratio) ? "n/a" : `${fmtNum(r.ratio, 2)}×`,
    r.target,
    r.met === null ? "—" : r.met ? "met" : "NOT met",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
  const pad = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`;
  const out = [];
  out.push("");
  out.push("## Machine");
  out.push(`CPU: ${facts.cpuModel}; cores: ${facts.cores}; memory: ${facts.memTotalMb} MB`);
  out.push(`Node: ${facts.node} (${facts.platform}); pinning: ${facts.pinning}`);
  out.push(
    `build: ${facts.build}; load average at start: ${facts.loadAverageAtStart}; BENCH_SECONDS=${SECONDS}, BENCH_ROUNDS=${ROUNDS}`,
  );
  out.push("");
  out.push(
    "## Results (ratio = ours ÷ baseline; the baseline is measured in this run, interleaved)",
  );
  out.push("");
  out.push(pad(header));
  out.push(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const l of lines) out.push(pad(l));
  out.push("");
  out.push(
    `Other processes' CPU during each workload (share of one core; anything well above 0 % makes the absolute figures unreliable, the ratios less so): ${workloadRuns
      .map((w) => `${w.id} ${Math.round(w.foreignLoad * 100)} %`)
      .join(", ")}`,
  );
  if (workloadRuns.some((w) => w.foreignLoad > 0.1)) {
    out.push(
      "WARNING: the machine was busy with other work during this run; rerun on a quiet machine for absolute figures.",
    );
  }
  const notes = rows.filter((r) => r.notes);
  if (notes.length > 0) {
    out.push("");
    out.push("## Notes");
    for (const r of notes) out.push(`- ${r.workload} / ${r.figure}: ${r.notes}`);
  }
  process.stdout.write(`${out.join("\n")}\n`);
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the workloads

let ctx;

async function agentIds(origin) {
  const pool = new Pool(origin, { connections: 1 });
  try {
    const list = await jsonRequest(pool, "POST", "/agents/search", {});
    return Object.fromEntries(list.map((a) => [a.metadata?.ref?.name ?? a.name, a.agent_id]));
  } finally {
    await pool.close();
  }
}

/** Starts a fresh ceiling server and a fresh server of ours (own SQLite file), runs fn, stops both. */
async function withServers(id, fn, { db } = {}) {
  const servers = [];
  try {
    const ceiling = await startCeiling(ctx.plan, { tmp: ctx.tmp });
    servers.push(ceiling);
    const ours = await startOurs(ctx.plan, {
      tmp: ctx.tmp,
      configPath: ctx.config.path,
      db: db ?? join(ctx.tmp, `${id}.db`),
    });
    servers.push(ours);
    const agents = await agentIds(ours.origin);
    for (const name of ["echo", "stream-10k"]) {
      if (!agents[name]) throw new Error(`agent ${name} not found in ${JSON.stringify(agents)}`);
    }
    return await fn({ ceiling, ours, agents });
  } finally {
    for (const s of servers.reverse()) await s.proc.stop();
  }
}

const userMessage = { role: "user", content: "hello from the benchmark" };
const waitBody = (agentId) =>
  JSON.stringify({ agent_id: agentId, input: { messages: [userMessage] } });

function clientCpu() {
  const t = process.cpuUsage();
  const wall = performance.now();
  return () => {
    const d = process.cpuUsage(t);
    return (d.user + d.system) / 1000 / (performance.now() - wall);
  };
}

/** With BENCH_QUIET_WAIT=N: waits up to N s until other processes use < 5 % of a core for 1 s. */
async function waitQuiet(id) {
  const limit = Number(env.BENCH_QUIET_WAIT ?? 0);
  if (!(limit > 0)) return;
  const deadline = performance.now() + limit * 1000;
  let load = 1;
  while (performance.now() < deadline) {
    const measure = foreignLoad();
    await sleep(1000);
    load = measure();
    if (load < 0.05) return;
  }
  log(`${id}: other processes still use ${Math.round(load * 100)} % of a core; going on`);
}

// ---------------------------------------------------------------------------------------------
// Workloads

async function waitThroughput() {
  const W = "runs/wait, echo, 50 conn";
  await withServers("wait-50", async ({ ceiling, ours, agents }) => {
    const body = waitBody(agents.echo);
    const pool = new Pool(ours.origin, { connections: 1 });
    const check = await jsonRequest(pool, "POST", "/runs/wait", JSON.parse(body));
    await pool.close();
    if (check?.run?.status !== "success") {
      throw new Error(`runs/wait sanity check: ${JSON.stringify(check).slice(0, 300)}`);
    }
    const targets = {
      ours: { url: `${ours.origin}/runs/wait`, pid: ours.proc.pid },
      ceil: { url: `${ceiling.origin}/echo`, pid: ceiling.proc.pid },
    };
    log(`${W}: warm-up`);
    for (const side of ["ceil", "ours"]) {
      await cannon({ url: targets[side].url, connections: 50, seconds: WARMUP_SECONDS, body });
    }
    const acc = {
      ours: { ok: 0, seconds: 0, cpu: 0, bad: 0, client: [] },
      ceil: { ok: 0, seconds: 0, cpu: 0, bad: 0, client: [] },
    };
    const phase = Math.max(1, Math.round(SECONDS / ROUNDS));
    for (let r = 0; r < ROUNDS; r++) {
      for (const side of ["ceil", "ours"]) {
        log(
          `${W}: round ${r + 1}/${ROUNDS}, ${side === "ours" ? "ours" : "ceiling A"}, ${phase} s`,
        );
        const cpu0 = cpuTimeMs(targets[side].pid);
        const client = clientCpu();
        const res = await cannon({ url: targets[side].url, connections: 50, seconds: phase, body });
        acc[side].client.push(client());
        acc[side].cpu += cpuTimeMs(targets[side].pid) - cpu0;
        acc[side].ok += res.ok;
        acc[side].seconds += res.seconds;
        acc[side].bad += res.non2xx + res.errors + res.timeouts;
      }
    }
    const rps = (a) => a.ok / a.seconds;
    const oursRps = rps(acc.ours);
    const ceilRps = rps(acc.ceil);
    const share = oursRps / ceilRps;
    const maxClient = (a) => Math.round(Math.max(...a.client) * 100);
    row({
      id: "wait-50",
      workload: W,
      figure: "runs/s",
      unit: "/s",
      ours: oursRps,
      baseline: ceilRps,
      baselineLabel: "ceiling A req/s",
      target: "≥ 3,000/s",
      met: oursRps >= 3000,
      notes:
        `${acc.ours.ok} runs in ${acc.ours.seconds.toFixed(1)} s (${acc.ours.bad} non-2xx/errors), ${Math.round(share * 100)} % of ceiling A's req/s; ` +
        `ceiling ${acc.ceil.ok} req (${acc.ceil.bad} non-2xx/errors); ` +
        `load-generator CPU up to ${maxClient(acc.ours)} % (ours) / ${maxClient(acc.ceil)} % (ceiling) of one core`,
    });
    const cpuRatio = acc.ours.cpu / acc.ours.ok / (acc.ceil.cpu / acc.ceil.ok);
    row({
      id: "wait-50-cpu",
      workload: W,
      figure: "server CPU per run",
      unit: "cpu-ms",
      ours: acc.ours.cpu / acc.ours.ok,
      baseline: acc.ceil.cpu / acc.ceil.ok,
      baselineLabel: "ceiling A per req",
      target: "≤ 10× ceiling A",
      met: cpuRatio <= 10,
      notes: "user+system CPU time of the server process (/proc/<pid>/stat) ÷ completed requests",
    });
  });
}

async function waitLatency() {
  const W = "runs/wait, echo, 1 conn";
  await withServers("wait-1", async ({ ceiling, ours, agents }) => {
    const body = waitBody(agents.echo);
    const sides = {
      ours: { origin: ours.origin, path: "/runs/wait" },
      ceil: { origin: ceiling.origin, path: "/echo" },
    };
    log(`${W}: warm-up`);
    for (const side of ["ceil", "ours"]) {
      await latencyLoop({ ...sides[side], body, seconds: WARMUP_SECONDS, maxRequests: 5000 });
    }
    const samples = { ours: [], ceil: [] };
    let errors = 0;
    const phase = Math.max(1, SECONDS / 2 / ROUNDS);
    for (let r = 0; r < ROUNDS; r++) {
      for (const side of ["ceil", "ours"]) {
        log(`${W}: round ${r + 1}/${ROUNDS}, ${side}, ${phase} s`);
        const res = await latencyLoop({
          ...sides[side],
          body,
          seconds: phase,
          maxRequests: MAX_REQUESTS,
        });
        samples[side].push(...res.samples);
        if (side === "ours") errors += res.errors;
      }
    }
    const o = summarize(samples.ours);
    const c = summarize(samples.ceil);
    row({
      id: "wait-1-p50",
      workload: W,
      figure: "p50 latency",
      unit: "ms",
      ours: o.p50,
      baseline: c.p50,
      baselineLabel: "ceiling A p50",
      target: "≤ 2 ms",
      met: o.p50 <= 2,
      notes: `${o.count} runs (${errors} errors), mean ${o.mean.toFixed(3)} ms, max ${o.max.toFixed(1)} ms; ceiling ${c.count} req`,
    });
    row({
      id: "wait-1-p99",
      workload: W,
      figure: "p99 latency",
      unit: "ms",
      ours: o.p99,
      baseline: c.p99,
      baselineLabel: "ceiling A p99",
    });
  });
}

async function timeToFirstEvent() {
  const W = "runs/stream, echo";
  await withServers("ttfe", async ({ ceiling, ours, agents }) => {
    const body = JSON.stringify({
      agent_id: agents.echo,
      input: { messages: [userMessage] },
      stream_mode: ["custom"],
    });
    const sides = {
      ours: { origin: ours.origin, request: { path: "/runs/stream", method: "POST", body } },
      // Same body, parsed and ignored; a short stream of small events.
      ceil: { origin: ceiling.origin, request: { path: "/sse?n=8", method: "POST", body } },
    };
    for (const connections of [1, 50]) {
      log(`${W}: ${connections} client(s), warm-up`);
      for (const side of ["ceil", "ours"]) {
        await ttfeLoop({ ...sides[side], connections, seconds: WARMUP_SECONDS, maxRequests: 5000 });
      }
      const samples = { ours: [], ceil: [] };
      let errors = 0;
      const phase = Math.max(1, SECONDS / 4 / ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        for (const side of ["ceil", "ours"]) {
          log(`${W}: ${connections} client(s), round ${r + 1}/${ROUNDS}, ${side}, ${phase} s`);
          const res = await ttfeLoop({
            ...sides[side],
            connections,
            seconds: phase,
            maxRequests: MAX_REQUESTS,
          });
          samples[side].push(...res.samples);
          if (side === "ours") errors += res.errors;
        }
      }
      const o = summarize(samples.ours);
      const c = summarize(samples.ceil);
      row({
        id: `ttfe-${connections}`,
        workload: W,
        figure: `time to first event p50, ${connections} client${connections > 1 ? "s" : ""}`,
        unit: "ms",
        ours: o.p50,
        baseline: c.p50,
        baselineLabel: "ceiling B p50",
        target: connections === 1 ? "≤ 3 ms" : "≤ 10 ms",
        met: connections === 1 ? o.p50 <= 3 : o.p50 <= 10,
        notes: `${o.count} streams (${errors} errors), p99 ${o.p99.toFixed(2)} ms (ceiling p99 ${c.p99.toFixed(2)} ms)`,
      });
    }
  });
}

async function customStream() {
  const W = `custom stream, ${STREAM_EVENTS.toLocaleString("en-US")}-event run`;
  await withServers("custom", async ({ ceiling, ours, agents }) => {
    const agentId = agents["stream-10k"];
    const oursPool = new Pool(ours.origin, { connections: 60, pipelining: 1 });
    const ceilPool = new Pool(ceiling.origin, { connections: 60, pipelining: 1 });
    const runBody = (extra = {}) =>
      JSON.stringify({ agent_id: agentId, input: {}, stream_mode: ["custom"], ...extra });
    try {
      // One client: POST /runs/stream, the whole run end to end.
      const single = async (side) => {
        const t0 = performance.now();
        const r =
          side === "ours"
            ? await readSse(oursPool, { path: "/runs/stream", method: "POST", body: runBody() }, t0)
            : await readSse(ceilPool, { path: `/sse?n=${STREAM_EVENTS}`, method: "GET" }, t0);
        if (r.customFrames !== STREAM_EVENTS) {
          throw new Error(
            `${side}: got ${r.customFrames} custom frames, expected ${STREAM_EVENTS}`,
          );
        }
        return { eps: r.customFrames / (r.totalMs / 1000), ms: r.totalMs };
      };
      // 50 clients. Ours: one run created with after_seconds: 1, 50 clients join it with
      // GET /runs/{id}/stream and Last-Event-ID: 0 before it starts, so it is delivered live to
      // all of them. Ceiling: 50 concurrent streams of the same number of events.
      const fanout = async (side, clients) => {
        let requests;
        if (side === "ours") {
          const run = await jsonRequest(
            oursPool,
            "POST",
            "/runs",
            JSON.parse(runBody({ after_seconds: 1 })),
          );
          requests = Array.from({ length: clients }, () => ({
            path: `/runs/${run.run_id}/stream`,
            method: "GET",
            headers: { "last-event-id": "0" },
          }));
        } else {
          requests = Array.from({ length: clients }, () => ({
            path: `/sse?n=${STREAM_EVENTS}`,
            method: "GET",
          }));
        }
        const pool = side === "ours" ? oursPool : ceilPool;
        const t0 = performance.now();
        const results = await Promise.all(requests.map((req) => readSse(pool, req, t0)));
        const first = Math.min(...results.map((r) => r.firstDataAt));
        const last = Math.max(...results.map((r) => r.endAt));
        const events = results.reduce((s, r) => s + r.customFrames, 0);
        if (events !== clients * STREAM_EVENTS) {
          throw new Error(
            `${side}: ${events} events delivered, expected ${clients * STREAM_EVENTS}`,
          );
        }
        return { eps: events / ((last - first) / 1000), ms: last - first };
      };

      // Warm-up: both sides alternately for at least 2 s and 5 runs each. The first few runs
      // of a fresh process are several times slower (V8 compiles the per-frame path), and
      // one warm-up run left the median on them: this row measures the steady state, as the
      // autocannon rows do.
      log(`${W}: warm-up`);
      const warmUntil = performance.now() + 2000;
      for (let n = 0; n < 5 || performance.now() < warmUntil; n++) {
        await single("ceil");
        await single("ours");
      }
      const rounds = Math.max(5, ROUNDS);
      const one = { ours: [], ceil: [] };
      for (let r = 0; r < rounds; r++) {
        for (const side of ["ceil", "ours"]) {
          log(`${W}: 1 client, round ${r + 1}/${rounds}, ${side}`);
          one[side].push(await single(side));
        }
      }
      const many = { ours: [], ceil: [] };
      for (let r = 0; r < ROUNDS; r++) {
        for (const side of ["ceil", "ours"]) {
          log(`${W}: 50 clients, round ${r + 1}/${ROUNDS}, ${side}`);
          many[side].push(await fanout(side, 50));
        }
      }
      const median = (list) => [...list].sort((a, b) => a.eps - b.eps)[Math.floor(list.length / 2)];
      const o1 = median(one.ours);
      const c1 = median(one.ceil);
      row({
        id: "custom-1",
        workload: W,
        figure: "AG-UI events/s to 1 client",
        unit: "/s",
        ours: o1.eps,
        baseline: c1.eps,
        baselineLabel: "ceiling B",
        target: "≥ 150,000/s",
        met: o1.eps >= 150_000,
        notes: `POST /runs/stream (stream_mode custom), its own run each time, timed from the request to the last byte; median of ${rounds}: ${o1.ms.toFixed(0)} ms per run (ceiling ${c1.ms.toFixed(0)} ms)`,
      });
      const o50 = median(many.ours);
      const c50 = median(many.ceil);
      row({
        id: "custom-50",
        workload: W,
        figure: "AG-UI events/s to 50 clients (total)",
        unit: "/s",
        ours: o50.eps,
        baseline: c50.eps,
        baselineLabel: "ceiling B, 50 streams",
        notes: `one run, 50 clients joined with GET /runs/{id}/stream + Last-Event-ID: 0 before it started (after_seconds: 1); timed from the first data byte any client got to the last byte of the last client; median of ${ROUNDS}: ${o50.ms.toFixed(0)} ms (ceiling ${c50.ms.toFixed(0)} ms)`,
      });
    } finally {
      await oursPool.close().catch(() => {});
      await ceilPool.close().catch(() => {});
    }
  });
}

async function pipeline() {
  const W = "in-process pipeline";
  log(`${W}: child process (ours 100k events; both pipelines on the smaller stream)`);
  const proc = spawnNode(ctx.plan, ["--expose-gc", join(BENCH_DIR, "pipeline-bench.mjs")], {
    logFile: join(ctx.tmp, "pipeline.log"),
  });
  const timer = setTimeout(() => proc.child.kill("SIGKILL"), 180_000);
  const { code, signal } = await proc.exited;
  clearTimeout(timer);
  const line = proc.output.trim().split("\n").pop();
  if (code !== 0)
    throw new Error(`pipeline bench exited with ${code ?? signal}:\n${proc.output.slice(-2000)}`);
  const res = JSON.parse(line);
  row({
    id: "pipeline-100k",
    workload: W,
    figure: `events/s, ${res.bigEvents.toLocaleString("en-US")}-event mixed stream`,
    unit: "/s",
    ours: res.oursBig.eps,
    baseline: null,
    baselineLabel: "client cannot finish 100k",
    ratio: null,
    target: "≥ 1,000,000/s",
    met: res.oursBig.eps >= 1_000_000,
    notes: `SegmentPipeline (validate → verify → accumulate) of dist/pipeline; median of ${res.oursBig.rounds} passes, ${res.oursBig.msPerPass.toFixed(1)} ms per pass. @ag-ui/client's pipeline is quadratic here (10k events ≈ 6.5 s, 20k exhaust the 4 GB heap), so it is compared on the smaller stream in the next row`,
  });
  row({
    id: "pipeline-vs-client",
    workload: W,
    figure: `events/s, ${res.smallEvents.toLocaleString("en-US")}-event mixed stream`,
    unit: "/s",
    ours: res.oursSmall.eps,
    baseline: res.clientSmall.eps,
    baselineLabel: "@ag-ui/client pipeline",
    target: "≥ 3× client",
    met: res.oursSmall.eps / res.clientSmall.eps >= 3,
    notes: `client = enforceEvents → transformChunks → verifyEvents → defaultApplyEvents on the same events; interleaved, median of ${res.clientSmall.rounds} rounds (client ${res.clientSmall.msPerPass.toFixed(0)} ms per pass, ours ${res.oursSmall.msPerPass.toFixed(2)} ms)`,
  });
}

async function idleStreams() {
  const W = `${IDLE_STREAMS.toLocaleString("en-US")} idle streams`;
  await withServers("idle", async ({ ceiling, ours, agents }) => {
    await sleep(500);
    const idleOurs = rssBytes(ours.proc.pid);
    const idleCeil = rssBytes(ceiling.proc.pid);
    row({
      id: "idle-rss",
      workload: "server start",
      figure: "idle RSS right after start",
      unit: "bytes",
      ours: idleOurs,
      baseline: idleCeil,
      baselineLabel: "bare Fastify",
      target: "≤ 80 MB",
      met: idleOurs <= 80 * 1024 * 1024,
      notes: "VmRSS 0.5 s after /readyz (ours) and /healthz (ceiling) answered, before any request",
    });

    // Ours: IDLE_STREAMS runs that wait (after_seconds: 600), one GET /runs/{id}/stream each.
    log(`${W}: creating ${IDLE_STREAMS} runs that wait (after_seconds: 600)`);
    const pool = new Pool(ours.origin, { connections: 20 });
    const ids = [];
    let next = 0;
    const body = { agent_id: agents.echo, input: { messages: [userMessage] }, after_seconds: 600 };
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        while (next < IDLE_STREAMS) {
          next += 1;
          ids.push((await jsonRequest(pool, "POST", "/runs", body)).run_id);
        }
      }),
    );
    await pool.close();
    await sleep(1000);
    const beforeOurs = rssBytes(ours.proc.pid);
    log(`${W}: ceiling, opening ${IDLE_STREAMS} streams`);
    const beforeCeil = rssBytes(ceiling.proc.pid);
    const ceilStreams = await openIdleStreams(
      ceiling.origin,
      Array.from({ length: IDLE_STREAMS }, () => "/sse-idle"),
    );
    await sleep(1000);
    const afterCeil = rssBytes(ceiling.proc.pid);
    await ceilStreams.close();

    log(`${W}: ours, opening ${IDLE_STREAMS} streams`);
    const oursStreams = await openIdleStreams(
      ours.origin,
      ids.map((id) => `/runs/${id}/stream`),
    );
    await sleep(1000);
    const afterOurs = rssBytes(ours.proc.pid);
    await oursStreams.close();
    if (oursStreams.open !== IDLE_STREAMS || ceilStreams.open !== IDLE_STREAMS) {
      throw new Error(
        `idle streams: ours ${oursStreams.open} open (${oursStreams.failures} failed), ceiling ${ceilStreams.open} (${ceilStreams.failures} failed)`,
      );
    }
    const perOurs = (afterOurs - beforeOurs) / IDLE_STREAMS;
    const perCeil = (afterCeil - beforeCeil) / IDLE_STREAMS;
    row({
      id: "idle-per-stream",
      workload: W,
      figure: "RSS per open stream",
      unit: "bytes",
      ours: perOurs,
      baseline: perCeil,
      baselineLabel: "bare Fastify SSE",
      target: "≤ 20 KB",
      met: perOurs <= 20 * 1024,
      notes:
        `(RSS with ${IDLE_STREAMS} GET /runs/{id}/stream open − RSS before) ÷ ${IDLE_STREAMS}, 1 s after the last opened; ` +
        `ours ${fmt(beforeOurs, "bytes")} → ${fmt(afterOurs, "bytes")}; the ${IDLE_STREAMS} waiting runs themselves added ${fmt((beforeOurs - idleOurs) / IDLE_STREAMS, "bytes")} each before any stream; ` +
        `ceiling ${fmt(beforeCeil, "bytes")} → ${fmt(afterCeil, "bytes")}`,
    });
  });
}

async function threadSearch() {
  const W = `thread search, ${THREADS.toLocaleString("en-US")} threads`;
  const db = join(ctx.tmp, "search.db");
  log(`${W}: seeding through dist/storage (createThread in transactions) into ${db}`);
  const seed = spawnNode(
    ctx.plan,
    [join(BENCH_DIR, "seed-threads.mjs"), "--db", db, "--count", String(THREADS)],
    {
      logFile: join(ctx.tmp, "seed.log"),
    },
  );
  const seedTimer = setTimeout(() => seed.child.kill("SIGKILL"), 180_000);
  const { code } = await seed.exited;
  clearTimeout(seedTimer);
  if (code !== 0) throw new Error(`seeding failed:\n${seed.output.slice(-2000)}`);
  const seeded = JSON.parse(seed.output.trim().split("\n").pop());
  log(`${W}: seeded ${seeded.count} threads in ${(seeded.ms / 1000).toFixed(1)} s`);

  await withServers(
    "search",
    async ({ ceiling, ours }) => {
      const filters = [
        {
          id: "search-user",
          label: "p50, metadata {user} (0.1 % of threads match)",
          body: (i) => ({ metadata: { user: `user-${(i * 7) % 1000}` } }),
          expect: 10,
        },
        {
          id: "search-team",
          label: "p50, metadata {team} (10 % match)",
          body: (i) => ({ metadata: { team: `team-${i % 10}` } }),
          expect: 10,
        },
        {
          id: "search-two-keys",
          label: "p50, metadata {user, team} (0.1 % match)",
          body: (i) => {
            const u = (i * 7) % 1000;
            return { metadata: { user: `user-${u}`, team: `team-${u % 10}` } };
          },
          expect: 10,
        },
      ];
      const pool = new Pool(ours.origin, { connections: 1 });
      for (const f of filters) {
        const found = await jsonRequest(pool, "POST", "/threads/search", f.body(1));
        if (!Array.isArray(found) || found.length !== f.expect) {
          throw new Error(
            `${f.id}: expected ${f.expect} threads, got ${JSON.stringify(found).slice(0, 200)}`,
          );
        }
      }
      await pool.close();
      for (const f of filters) {
        const sides = {
          ours: { origin: ours.origin, path: "/threads/search" },
          ceil: { origin: ceiling.origin, path: "/echo" },
        };
        const bodies = Array.from({ length: 1000 }, (_, i) => JSON.stringify(f.body(i)));
        // One keep-alive connection per phase, the filter value rotating over 1000 bodies.
        const phaseLoop = async (side, seconds) => {
          const client = new Client(sides[side].origin, { pipelining: 1 });
          const samples = [];
          let errors = 0;
          const deadline = performance.now() + seconds * 1000;
          try {
            for (let i = 0; performance.now() < deadline && i < MAX_REQUESTS; i++) {
              const t0 = performance.now();
              const res = await client.request({
                path: sides[side].path,
                method: "POST",
                headers: { "content-type": "application/json" },
                body: bodies[i % bodies.length],
              });
              await res.body.arrayBuffer();
              if (res.statusCode === 200) samples.push(performance.now() - t0);
              else errors += 1;
            }
          } finally {
            await client.close();
          }
          return { samples, errors };
        };
        log(`${W}: ${f.id} warm-up`);
        await phaseLoop("ceil", WARMUP_SECONDS);
        await phaseLoop("ours", WARMUP_SECONDS);
        const samples = { ours: [], ceil: [] };
        let errors = 0;
        const phase = Math.max(1, SECONDS / 4 / ROUNDS);
        for (let r = 0; r < ROUNDS; r++) {
          for (const side of ["ceil", "ours"]) {
            log(`${W}: ${f.id}, round ${r + 1}/${ROUNDS}, ${side}, ${phase} s`);
            const res = await phaseLoop(side, phase);
            samples[side].push(...res.samples);
            if (side === "ours") errors += res.errors;
          }
        }
        const o = summarize(samples.ours);
        const c = summarize(samples.ceil);
        row({
          id: f.id,
          workload: W,
          figure: f.label,
          unit: "ms",
          ours: o.p50,
          baseline: c.p50,
          baselineLabel: "ceiling A p50",
          target: "≤ 10 ms",
          met: o.p50 <= 10,
          notes:
            `POST /threads/search, limit 10 (default), 1 connection, filter value rotating; ${o.count} queries (${errors} errors), p99 ${o.p99.toFixed(2)} ms` +
            (f.id === "search-user"
              ? `; ${seeded.count} threads seeded in ${(seeded.ms / 1000).toFixed(1)} s through dist/storage createThread on the server's SQLite file before it started`
              : ""),
        });
      }
    },
    { db },
  );
}

/** What the workloads in bench/workloads/ need from this file. */
const kit = () => ({
  ctx,
  row,
  log,
  agentIds,
  waitBody,
  SECONDS,
  ROUNDS,
  WARMUP_SECONDS,
});

const WORKLOADS = [
  { id: "wait-50", run: waitThroughput },
  { id: "wait-pg", run: () => postgresWait(kit()) },
  { id: "wait-tracing", run: () => tracingWait(kit()) },
  { id: "write-count", run: () => writeCount(kit()) },
  { id: "wait-1", run: waitLatency },
  { id: "ttfe", run: timeToFirstEvent },
  { id: "custom-stream", run: customStream },
  { id: "pipeline", run: pipeline },
  { id: "idle-streams", run: idleStreams },
  { id: "thread-search", run: threadSearch },
  { id: "storage", run: () => storageLargeRun(kit()) },
  { id: "stored-task", run: () => storedTaskBytes(kit()) },
  { id: "conversations", run: () => conversationsWorkload(kit()) },
  { id: "mcp-call", run: () => mcpCall(kit()) },
];

// ---------------------------------------------------------------------------------------------

async function main() {
  installCleanupHooks();
  installSchemaCleanup(log);
  if (!procAvailable()) throw new Error("this benchmark reads /proc (Linux only)");
  const only = env.BENCH_ONLY
    ? env.BENCH_ONLY.split(",")
        .map((s) => s.trim())
        .filter(Boolean)
    : null;
  if (only) {
    const unknown = only.filter((id) => !WORKLOADS.some((w) => w.id === id));
    if (unknown.length > 0) {
      throw new Error(
        `unknown BENCH_ONLY workload(s) ${unknown.join(", ")}; known: ${WORKLOADS.map((w) => w.id).join(", ")}`,
      );
    }
  }
  const plan = pinningPlan();
  pinSelf(plan);
  const facts = machineFacts(plan);
  facts.loadAverageAtStart = readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
  facts.build = ensureBuilt(log);
  process.stdout.write(
    `# acp-agui benchmark\nCPU: ${facts.cpuModel}; cores: ${facts.cores}; Node ${facts.node}; pinning: ${facts.pinning}\n`,
  );
  const tmp = makeTempDir();
  const config = writeBenchConfig(tmp);
  ctx = { plan, tmp, config };
  const started = Date.now();
  const failures = [];
  for (const w of WORKLOADS) {
    if (only && !only.includes(w.id)) continue;
    await waitQuiet(w.id);
    const t0 = Date.now();
    const foreign = foreignLoad();
    log(`== ${w.id}`);
    try {
      await w.run();
    } catch (err) {
      failures.push({ workload: w.id, error: String(err?.stack ?? err) });
      log(`!! ${w.id} failed: ${err?.stack ?? err}`);
      row({
        id: w.id,
        workload: w.id,
        figure: "FAILED (see notes)",
        unit: "",
        ours: null,
        baseline: null,
        notes: String(err?.message ?? err).slice(0, 500),
        met: false,
      });
    }
    const load = foreign();
    workloadRuns.push({ id: w.id, seconds: (Date.now() - t0) / 1000, foreignLoad: load });
    log(
      `== ${w.id} done in ${((Date.now() - t0) / 1000).toFixed(1)} s (other processes: ${Math.round(load * 100)} % of a core)`,
    );
  }
  await dropBenchSchemas();
  const elapsed = (Date.now() - started) / 1000;
  printTable(facts);
  process.stdout.write(`\ntotal time ${elapsed.toFixed(0)} s\n`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const out = join(RESULTS_DIR, "latest.json");
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        date: new Date().toISOString(),
        machine: facts,
        settings: {
          seconds: SECONDS,
          rounds: ROUNDS,
          threads: THREADS,
          idleStreams: IDLE_STREAMS,
          streamEvents: STREAM_EVENTS,
          only,
        },
        elapsedSeconds: elapsed,
        rows,
        workloads: workloadRuns,
        failures,
      },
      null,
      2,
    )}\n`,
  );
  process.stdout.write(`results: ${out}\n`);
  process.exitCode = failures.length > 0 ? 1 : 0;
}

main().catch((err) => {
  process.stderr.write(`bench: ${err?.stack ?? err}\n`);
  process.exit(1);
});
