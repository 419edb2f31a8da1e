// Workload `wait-tracing`: stateless POST /runs/wait on the echo agent at 50 connections, by a
// server with tracing off (the default) and one with tracing on, exporting every span over
// OTLP/HTTP protobuf to a sink in the bench process; interleaved (off, on; again), each pinned
// to the server CPU as in the other workloads. Also each server's idle RSS: tracing off loads no
// OpenTelemetry package, so the off server's figure is the server's usual one.
//
// The sink answers every export with 200 and counts spans' bytes only: its cost, in the bench
// process, is the load generator's. BENCH_TRACING_BASELINE_CLI=<another checkout>/dist/cli.js
// (the previous release, built) adds a third server, of that build, to the rotation: the row
// "tracing off vs that build" says what tracing's presence costs when it is off. The batch processor's defaults apply (OTEL_BSP_*: a queue
// of 2048 spans, exported every 5 s): past that rate the SDK drops spans rather than slow the
// server, as it would in production; the notes say how many export requests arrived.
import { once } from "node:events";
import http from "node:http";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { cannon, jsonRequest, Pool } from "../lib/http.mjs";
import { cpuTimeMs, rssBytes } from "../lib/proc.mjs";
import { startOurs } from "../lib/servers.mjs";

const CONNECTIONS = 50;

/** An OTLP/HTTP endpoint that accepts everything: requests and bytes counted. */
async function startSink() {
  const stats = { requests: 0, bytes: 0 };
  const server = http.createServer((req, res) => {
    req.on("data", (chunk) => {
      stats.bytes += chunk.length;
    });
    req.on("end", () => {
      stats.requests++;
      res.writeHead(200, { "content-type": "application/x-protobuf" });
      res.end();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    stats,
    url: `http://127.0.0.1:${server.address().port}`,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}

export async function tracingWait(kit) {
  const { ctx, row, log, agentIds, waitBody, SECONDS, ROUNDS, WARMUP_SECONDS } = kit;
  const W = `runs/wait, echo, ${CONNECTIONS} conn, tracing`;
  const sink = await startSink();
  const servers = [];
  try {
    const off = await startOurs(ctx.plan, {
      tmp: ctx.tmp,
      configPath: ctx.config.path,
      db: join(ctx.tmp, "wait-tracing-off.db"),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: "", OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "" },
    });
    servers.push(off);
    const on = await startOurs(ctx.plan, {
      tmp: ctx.tmp,
      configPath: ctx.config.path,
      db: join(ctx.tmp, "wait-tracing-on.db"),
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" },
    });
    servers.push(on);
    const baselineCli = process.env.BENCH_TRACING_BASELINE_CLI;
    const previous = baselineCli
      ? await startOurs(ctx.plan, {
          tmp: ctx.tmp,
          configPath: ctx.config.path,
          db: join(ctx.tmp, "wait-tracing-previous.db"),
          cli: baselineCli,
        })
      : undefined;
    if (previous) servers.push(previous);
    await sleep(500);
    const rss = { off: rssBytes(off.proc.pid), on: rssBytes(on.proc.pid) };
    const body = waitBody((await agentIds(off.origin)).echo);
    const sides = previous ? { previous, off, on } : { off, on };
    const acc = {};
    for (const side of Object.keys(sides)) acc[side] = { ok: 0, bad: 0, seconds: 0, cpu: 0 };
    for (const s of Object.values(sides)) {
      const pool = new Pool(s.origin, { connections: 1 });
      const check = await jsonRequest(pool, "POST", "/runs/wait", JSON.parse(body));
      await pool.close();
      if (check?.run?.status !== "success") {
        throw new Error(`runs/wait sanity check: ${JSON.stringify(check).slice(0, 300)}`);
      }
    }
    log(`${W}: warm-up`);
    for (const s of Object.values(sides)) {
      await cannon({
        url: `${s.origin}/runs/wait`,
        connections: CONNECTIONS,
        seconds: WARMUP_SECONDS,
        body,
      });
    }
    const phase = Math.max(1, Math.round(SECONDS / ROUNDS));
    for (let r = 0; r < ROUNDS; r++) {
      for (const side of Object.keys(sides)) {
        log(`${W}: round ${r + 1}/${ROUNDS}, tracing ${side}, ${phase} s`);
        const pid = sides[side].proc.pid;
        const cpu0 = cpuTimeMs(pid);
        const res = await cannon({
          url: `${sides[side].origin}/runs/wait`,
          connections: CONNECTIONS,
          seconds: phase,
          body,
        });
        const a = acc[side];
        a.cpu += cpuTimeMs(pid) - cpu0;
        a.ok += res.ok;
        a.seconds += res.seconds;
        a.bad += res.non2xx + res.errors + res.timeouts;
      }
    }
    // The last batch leaves within the schedule delay (5 s by default).
    await sleep(5500);
    const rps = (a) => a.ok / a.seconds;
    row({
      id: "wait-tracing",
      workload: W,
      figure: "runs/s, tracing on",
      unit: "/s",
      ours: rps(acc.on),
      baseline: rps(acc.off),
      baselineLabel: "tracing off runs/s",
      target: "report",
      met: null,
      notes:
        `off: ${acc.off.ok} runs in ${acc.off.seconds.toFixed(1)} s (${acc.off.bad} non-2xx/errors); ` +
        `on: ${acc.on.ok} runs in ${acc.on.seconds.toFixed(1)} s (${acc.on.bad} non-2xx/errors); ` +
        `the sink got ${sink.stats.requests} OTLP export requests, ${(sink.stats.bytes / 1e6).toFixed(1)} MB`,
    });
    if (previous) {
      row({
        id: "wait-tracing-off",
        workload: W,
        figure: "runs/s, tracing off",
        unit: "/s",
        ours: rps(acc.off),
        baseline: rps(acc.previous),
        baselineLabel: "the baseline build's runs/s",
        target: "no measurable cost",
        met: null,
        notes: `baseline build: ${baselineCli}; ${acc.previous.ok} runs in ${acc.previous.seconds.toFixed(1)} s; CPU per run ${(acc.off.cpu / acc.off.ok).toFixed(3)} ms (off) vs ${(acc.previous.cpu / acc.previous.ok).toFixed(3)} ms (baseline)`,
      });
    }
    row({
      id: "wait-tracing-cpu",
      workload: W,
      figure: "server CPU per run, tracing on",
      unit: "cpu-ms",
      ours: acc.on.cpu / acc.on.ok,
      baseline: acc.off.cpu / acc.off.ok,
      baselineLabel: "tracing off",
      target: "report",
      met: null,
      notes: "user+system CPU time of the server process ÷ completed runs",
    });
    row({
      id: "wait-tracing-rss",
      workload: W,
      figure: "idle RSS, tracing on",
      unit: "bytes",
      ours: rss.on,
      baseline: rss.off,
      baselineLabel: "tracing off",
      target: "off: no OpenTelemetry loaded",
      met: null,
      notes: "VmRSS 0.5 s after /readyz answered, before any request",
    });
  } finally {
    for (const s of servers.reverse()) await s.proc.stop();
    await sink.close();
  }
}
