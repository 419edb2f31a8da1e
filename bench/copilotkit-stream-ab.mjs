#!/usr/bin/env node
// Two builds alternately on one stream through the CopilotKit route: `POST
// /copilotkit/agent/stream-10k/run` (the bench's 10,000-event scripted run, one client, a new
// thread per run), a fresh server per build and round, 5 warm-up runs then 15 timed ones.
// Prints per round the median time to the last byte and the server's CPU per run, and the
// ratio of this checkout's build to the other.
//
// Usage: node bench/copilotkit-stream-ab.mjs <other checkout>/dist/cli.js [rounds=6]
import { join } from "node:path";
import { Pool } from "undici";
import { cpuTimeMs, installCleanupHooks, pinningPlan, pinSelf } from "./lib/proc.mjs";
import { makeTempDir, ROOT, startOurs, writeBenchConfig } from "./lib/servers.mjs";

const [other, roundsArg] = process.argv.slice(2);
if (!other)
  throw new Error("usage: node bench/copilotkit-stream-ab.mjs OTHER/dist/cli.js [rounds]");
const ROUNDS = Number(roundsArg ?? 6);
installCleanupHooks();
const plan = pinningPlan();
pinSelf(plan);
const tmp = makeTempDir();
const config = writeBenchConfig(tmp);
const builds = { other, this: join(ROOT, "dist", "cli.js") };
const body = (i) =>
  JSON.stringify({
    threadId: `ab-${i}-${Math.random()}`,
    runId: `run-${i}`,
    messages: [{ id: `m-${i}`, role: "user", content: "go" }],
    state: {},
    tools: [],
    context: [],
    forwardedProps: {},
  });

async function oneRun(pool, i) {
  const t0 = performance.now();
  const res = await pool.request({
    path: "/copilotkit/agent/stream-10k/run",
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream" },
    body: body(i),
  });
  if (res.statusCode !== 200) throw new Error(`HTTP ${res.statusCode}: ${await res.body.text()}`);
  for await (const _ of res.body);
  return performance.now() - t0;
}

const got = { other: [], this: [] };
let fresh = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (const side of ["other", "this"]) {
    const server = await startOurs(plan, {
      tmp,
      configPath: config.path,
      db: join(tmp, `ab-${++fresh}.db`),
      cli: builds[side],
    });
    const pool = new Pool(server.origin, { connections: 1 });
    try {
      for (let i = 0; i < 5; i++) await oneRun(pool, i);
      const cpu0 = cpuTimeMs(server.proc.pid);
      const times = [];
      for (let i = 0; i < 15; i++) times.push(await oneRun(pool, 100 + i));
      const cpuPerRun = (cpuTimeMs(server.proc.pid) - cpu0) / 15;
      times.sort((a, b) => a - b);
      got[side].push({ medianMs: times[7], cpuPerRun });
    } finally {
      await pool.close();
      await server.proc.stop();
    }
  }
  const [o, t] = [got.other[round], got.this[round]];
  process.stdout.write(
    `round ${round + 1}: other ${o.medianMs.toFixed(0)} ms, ${o.cpuPerRun.toFixed(0)} cpu-ms; this ${t.medianMs.toFixed(0)} ms, ${t.cpuPerRun.toFixed(0)} cpu-ms; this ÷ other: time ${(t.medianMs / o.medianMs).toFixed(2)}×, CPU ${(t.cpuPerRun / o.cpuPerRun).toFixed(2)}×\n`,
  );
}
