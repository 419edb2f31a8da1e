#!/usr/bin/env node
// What one A2A task alone allocates: `node bench/peer/a2a-alloc.mjs [<other build>/dist/cli.js]`.
// Sends tasks one after another (one connection) to this checkout's dist/cli.js, and to another
// build when given, the builds taking turns (BENCH_ALLOC_ROUNDS, 2 by default), and reads the
// server's own young-generation collections (`--trace-gc-nvp`): per task, the bytes allocated
// and promoted (kept alive across a scavenge), the scavenges per 1,000 tasks and their pauses,
// and the task's latency. Counting bytes, not time, holds on a busy machine.
// BENCH_ALLOC_WORKLOAD: jsonrpc-send (default), jsonrpc-stream, rest-send, acp-wait or acp-thread.
// BENCH_ALLOC_NODE_FLAGS: more flags for the servers' node, e.g. "--cpu-prof --cpu-prof-dir=DIR"
// to profile a lone client's requests (read with `node bench/profile.mjs --analyze FILE`).
import { randomUUID } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "../lib/http.mjs";
import { installCleanupHooks, pinningPlan } from "../lib/proc.mjs";
import { makeTempDir, ROOT, startOurs, writeBenchConfig } from "../lib/servers.mjs";

const TASKS = Math.max(100, Number(process.env.BENCH_ALLOC_TASKS ?? 3000));
const WARMUP = Math.max(50, Number(process.env.BENCH_ALLOC_WARMUP ?? 1000));
const ROUNDS = Math.max(1, Number(process.env.BENCH_ALLOC_ROUNDS ?? 2));
const NODE_FLAGS = (process.env.BENCH_ALLOC_NODE_FLAGS ?? "").split(" ").filter(Boolean);
const A2A = { "content-type": "application/json", "a2a-version": "1.0" };
const message = () => ({
  messageId: randomUUID(),
  role: "ROLE_USER",
  parts: [{ text: "hello from the benchmark" }],
});
const WORKLOADS = {
  "jsonrpc-send": () => ({
    path: "/a2a/echo",
    headers: A2A,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: message() },
    }),
    done: "TASK_STATE_COMPLETED",
  }),
  // The stream's whole body read: done once its last event (the final status) arrived.
  "jsonrpc-stream": () => ({
    path: "/a2a/echo",
    headers: A2A,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendStreamingMessage",
      params: { message: message() },
    }),
    done: "TASK_STATE_COMPLETED",
  }),
  "rest-send": () => ({
    path: "/a2a/echo/message:send",
    headers: A2A,
    body: JSON.stringify({ message: message() }),
    done: "TASK_STATE_COMPLETED",
  }),
  "acp-wait": () => ({
    path: "/runs/wait",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      agent_id: echoId,
      input: { messages: [{ role: "user", content: "hello from the benchmark" }] },
    }),
    done: '"success"',
  }),
  // The run an A2A message makes, on ACP: stateful, on a new thread each time.
  "acp-thread": () => ({
    path: `/threads/${randomUUID()}/runs/wait`,
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      agent_id: echoId,
      input: { messages: [{ role: "user", content: "hello from the benchmark" }] },
      if_not_exists: "create",
    }),
    done: '"success"',
  }),
};
const name = process.env.BENCH_ALLOC_WORKLOAD ?? "jsonrpc-send";
const workload = WORKLOADS[name];
if (!workload) throw new Error(`BENCH_ALLOC_WORKLOAD: one of ${Object.keys(WORKLOADS).join(", ")}`);

/** The server's GC lines (`--trace-gc-nvp`), gathered from its output as they come. */
function gcLog(proc) {
  const lines = [];
  let partial = "";
  const take = (chunk) => {
    const parts = (partial + chunk.toString()).split("\n");
    partial = parts.pop();
    for (const line of parts) if (line.includes("gc=")) lines.push(line);
  };
  proc.child.stdout.on("data", take);
  proc.child.stderr.on("data", take);
  return lines;
}

/**
 * The server's waits for a core (Linux): ns spent runnable but not running (`schedstat`), and
 * the times another process took its core from it (nonvoluntary context switches), summed over
 * its threads. What a busy machine adds to a lone request's latency, apart from the server's own.
 */
function preempted(pid) {
  const total = { waitNs: 0, switches: 0 };
  try {
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      total.waitNs += Number(
        readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[1],
      );
      const status = readFileSync(`/proc/${pid}/task/${tid}/status`, "utf8");
      total.switches += Number(/nonvoluntary_ctxt_switches:\s+(\d+)/.exec(status)?.[1] ?? 0);
    }
  } catch {
    return { waitNs: Number.NaN, switches: Number.NaN };
  }
  return total;
}

const field = (line, key) => Number(new RegExp(`(?:^|\\s)${key}=([\\d.]+)`).exec(line)?.[1] ?? 0);

/** The echo agent's ACP id (`runs/wait` names it). */
let echoId;
async function findEcho(origin) {
  const res = await fetch(`${origin}/agents/search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  const agents = await res.json();
  echoId = agents.find((a) => (a.metadata?.ref?.name ?? a.name) === "echo")?.agent_id;
}

async function measure(server, lines) {
  await findEcho(server.origin);
  const pool = new Pool(server.origin, { connections: 1, pipelining: 1 });
  const send = async () => {
    const { path, headers, body, done } = workload();
    const res = await pool.request({ path, method: "POST", headers, body });
    const text = await res.body.text();
    if (res.statusCode !== 200 || !text.includes(done)) {
      throw new Error(`${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
    }
  };
  try {
    for (let i = 0; i < WARMUP; i++) await send();
    await sleep(300);
    const from = lines.length;
    const schedBefore = preempted(server.proc.pid);
    const latencies = [];
    for (let i = 0; i < TASKS; i++) {
      const t0 = process.hrtime.bigint();
      await send();
      latencies.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    const schedAfter = preempted(server.proc.pid);
    const gcs = lines.slice(from);
    const scavenges = gcs.filter((l) => /\sgc=s\s/.test(` ${l} `));
    const sum = (list, key) => list.reduce((s, l) => s + field(l, key), 0);
    const sorted = [...latencies].sort((a, b) => a - b);
    const slowOver = 3 * sorted[Math.floor(sorted.length / 2)];
    const slow = latencies.filter((ms) => ms > slowOver).length;
    if (process.env.BENCH_ALLOC_SHOW_SLOW) {
      const at = latencies.flatMap((ms, i) => (ms > slowOver ? [`${i}:${ms.toFixed(1)}`] : []));
      console.log(`slow tasks (index:ms): ${at.slice(0, 80).join(" ")}`);
    }
    latencies.sort((a, b) => a - b);
    const q = (p) => latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))];
    const pauses = scavenges.map((l) => field(l, "pause"));
    return {
      allocated: sum(gcs, "allocated") / TASKS,
      promoted: sum(scavenges, "promoted") / TASKS,
      scavenges: (scavenges.length * 1000) / TASKS,
      others: gcs.length - scavenges.length,
      pause: pauses.length ? pauses.reduce((s, p) => s + p, 0) / pauses.length : 0,
      maxPause: pauses.length ? Math.max(...pauses) : 0,
      slow: (slow * 1000) / TASKS,
      waitMs: (schedAfter.waitNs - schedBefore.waitNs) / 1e6 / TASKS,
      switches: ((schedAfter.switches - schedBefore.switches) * 1000) / TASKS,
      p50: q(0.5),
      p99: q(0.99),
    };
  } finally {
    await pool.close();
  }
}

installCleanupHooks();
const plan = pinningPlan();
const tmp = makeTempDir();
const { path: configPath } = writeBenchConfig(tmp);
const builds = [["this build", join(ROOT, "dist", "cli.js")]];
if (process.argv[2]) builds.unshift(["other build", resolve(process.argv[2])]);
const rows = [];
for (let round = 1; round <= ROUNDS; round++) {
  for (const [label, cli] of round % 2 ? builds : [...builds].reverse()) {
    const db = join(tmp, `${randomUUID()}.db`);
    const server = await startOurs(plan, {
      tmp,
      configPath,
      db,
      cli,
      nodeFlags: ["--trace-gc-nvp", ...NODE_FLAGS],
    });
    try {
      rows.push({ round, label, ...(await measure(server, gcLog(server.proc))) });
    } finally {
      await server.proc.stop();
    }
  }
}
console.log(`${name}, ${TASKS} tasks one after another after ${WARMUP} (echo agent, SQLite):\n`);
console.log(
  "| round | build | KB allocated / task | bytes promoted / task | scavenges / 1,000 tasks | mean / max pause ms | other GCs | tasks > 3× p50 / 1,000 | waited for a core, ms / task | preempted / 1,000 tasks | p50 / p99 ms | p99 ÷ p50 |",
);
console.log("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |");
for (const r of rows) {
  console.log(
    `| ${r.round} | ${r.label} | ${(r.allocated / 1024).toFixed(1)} | ${r.promoted.toFixed(0)} | ${r.scavenges.toFixed(1)} | ${r.pause.toFixed(2)} / ${r.maxPause.toFixed(1)} | ${r.others} | ${r.slow.toFixed(1)} | ${r.waitMs.toFixed(3)} | ${r.switches.toFixed(0)} | ${r.p50.toFixed(2)} / ${r.p99.toFixed(2)} | ${(r.p99 / r.p50).toFixed(1)} |`,
  );
}
process.exit(0);
