#!/usr/bin/env node
// What a stored trivial task costs the database, on SQLite:
// `node bench/workloads/stored-task-bytes.mjs [<other build>/dist/cli.js]`, and the
// `stored-task` row of `npm run bench`.
//
// Sends N (BENCH_STORED_TASKS, 500) echo tasks one after another to a fresh server (this
// checkout's dist/cli.js, and another build when given): A2A `SendMessage` (JSON-RPC) on a new
// context, and ACP stateless `POST /runs/wait`, each on a server of its own. Then reads the
// database with a read-only connection through SQLite's `dbstat` table, before and after the N
// tasks (after 10 warm-up tasks, so the tables' first pages are not counted), and prints per
// task the pages (4 KB each, the space on disk) and the bytes in use (cells and their headers)
// of each table and index, beside the database's pages in use (`page_count − freelist_count`).
import { randomUUID } from "node:crypto";
import { createRequire } from "node:module";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { Pool } from "../lib/http.mjs";
import { installCleanupHooks, pinningPlan } from "../lib/proc.mjs";
import { makeTempDir, ROOT, startOurs, writeBenchConfig } from "../lib/servers.mjs";

const require = createRequire(import.meta.url);
const TASKS = Math.max(20, Number(process.env.BENCH_STORED_TASKS ?? 500));
const WARMUP = 10;
const TARGET_BYTES = 2048;

const A2A_HEADERS = { "content-type": "application/json", "a2a-version": "1.0" };

/** The two ways a client stores a trivial task: what is sent and how success reads. */
const WORKLOADS = {
  "A2A SendMessage, new context": () => ({
    path: "/a2a/echo",
    headers: A2A_HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: {
        message: {
          messageId: randomUUID(),
          role: "ROLE_USER",
          parts: [{ text: "hello from the benchmark" }],
        },
      },
    }),
    ok: (text) => text.includes("TASK_STATE_COMPLETED"),
  }),
  "ACP stateless runs/wait": (agentId) => ({
    path: "/runs/wait",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({
      agent_id: agentId,
      input: { messages: [{ role: "user", content: "hello from the benchmark" }] },
    }),
    ok: (text) => text.includes('"status":"success"'),
  }),
};

/** Pages and bytes in use per table or index (dbstat), and the database's pages in use. */
function readSizes(dbPath) {
  const Database = require("better-sqlite3");
  const db = new Database(dbPath, { readonly: true, fileMustExist: true });
  try {
    db.pragma("busy_timeout = 5000");
    const read = db.transaction(() => {
      const byName = {};
      for (const r of db
        .prepare(
          "SELECT name, count(*) AS pages, sum(pgsize) AS size, sum(pgsize - unused) AS used FROM dbstat GROUP BY name",
        )
        .all()) {
        byName[r.name] = { pages: r.pages, size: r.size, used: r.used };
      }
      const pageSize = db.pragma("page_size", { simple: true });
      const inUse =
        db.pragma("page_count", { simple: true }) - db.pragma("freelist_count", { simple: true });
      return { byName, inUseBytes: inUse * pageSize };
    });
    return read();
  } finally {
    db.close();
  }
}

/** Waits until the database's pages in use stop moving (a stateless run's cleanup follows it). */
async function settledSizes(dbPath) {
  let last = readSizes(dbPath);
  for (let i = 0; i < 20; i++) {
    await sleep(250);
    const now = readSizes(dbPath);
    if (now.inUseBytes === last.inUseBytes) return now;
    last = now;
  }
  return last;
}

async function agentId(origin, name) {
  const res = await fetch(`${origin}/agents/search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  const agents = await res.json();
  const found = agents.find((a) => (a.metadata?.ref?.name ?? a.name) === name);
  if (!found) throw new Error(`agent ${name} not found`);
  return found.agent_id;
}

/** Per task: bytes of pages and bytes in use, by table/index, plus the database's total. */
async function measure(server, dbPath, workload, tasks) {
  const echo = await agentId(server.origin, "echo");
  const pool = new Pool(server.origin, { connections: 1, pipelining: 1 });
  const send = async () => {
    const { path, headers, body, ok } = workload(echo);
    const res = await pool.request({ path, method: "POST", headers, body });
    const text = await res.body.text();
    if (res.statusCode !== 200 || !ok(text)) {
      throw new Error(`${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
    }
  };
  try {
    for (let i = 0; i < WARMUP; i++) await send();
    const before = await settledSizes(dbPath);
    for (let i = 0; i < tasks; i++) await send();
    const after = await settledSizes(dbPath);
    const names = new Set([...Object.keys(before.byName), ...Object.keys(after.byName)]);
    const parts = {};
    for (const name of names) {
      const a = after.byName[name] ?? { size: 0, used: 0 };
      const b = before.byName[name] ?? { size: 0, used: 0 };
      const size = (a.size - b.size) / tasks;
      const used = (a.used - b.used) / tasks;
      if (size !== 0 || used !== 0) parts[name] = { size, used };
    }
    const total = (after.inUseBytes - before.inUseBytes) / tasks;
    const used = Object.values(parts).reduce((sum, p) => sum + p.used, 0);
    return { total, used, parts };
  } finally {
    await pool.close();
  }
}

/** Measures every workload on every build: [{ label, name, total, used, parts }]. */
export async function measureStoredTasks({ plan, tmp, configPath, builds, tasks = TASKS }) {
  const rows = [];
  for (const [label, cli] of builds) {
    for (const [name, workload] of Object.entries(WORKLOADS)) {
      const db = join(tmp, `stored-${randomUUID()}.db`);
      const server = await startOurs(plan, { tmp, configPath, db, cli });
      try {
        rows.push({ label, name, ...(await measure(server, db, workload, tasks)) });
      } finally {
        await server.proc.stop();
      }
    }
  }
  return rows;
}

/** Workload `stored-task` of bench/run.mjs: this build, beside BENCH_STORED_BASELINE_CLI. */
export async function storedTaskBytes(kit) {
  const { ctx, row, log } = kit;
  const builds = [["ours", join(ROOT, "dist", "cli.js")]];
  if (process.env.BENCH_CLI) builds[0][1] = resolve(process.env.BENCH_CLI);
  const baselineCli = process.env.BENCH_STORED_BASELINE_CLI;
  if (baselineCli) builds.push(["baseline", resolve(baselineCli)]);
  log(`stored task: ${TASKS} sequential tasks per workload and build`);
  const rows = await measureStoredTasks({
    plan: ctx.plan,
    tmp: ctx.tmp,
    configPath: ctx.config.path,
    builds,
  });
  for (const name of Object.keys(WORKLOADS)) {
    const ours = rows.find((r) => r.label === "ours" && r.name === name);
    const base = rows.find((r) => r.label === "baseline" && r.name === name);
    row({
      id: `stored-task-${name.startsWith("A2A") ? "a2a" : "acp"}`,
      workload: `stored task, ${name}`,
      figure: "database pages per task, SQLite",
      unit: "B",
      ours: ours.total,
      baseline: base?.total ?? null,
      baselineLabel: base ? "BENCH_STORED_BASELINE_CLI" : "—",
      target: "≤ 2 KB",
      met: ours.total <= TARGET_BYTES,
      notes: `pages in use after ${TASKS} tasks minus before, ÷ ${TASKS} (dbstat, read-only connection); ${Math.round(ours.used)} B of them in use: ${breakdown(ours)}`,
    });
  }
}

function breakdown(r) {
  return Object.entries(r.parts)
    .sort((a, b) => b[1].size - a[1].size)
    .map(([name, p]) => `${name} ${Math.round(p.size)}/${Math.round(p.used)}`)
    .join(", ");
}

async function main() {
  installCleanupHooks();
  const plan = pinningPlan();
  const tmp = makeTempDir();
  const { path: configPath } = writeBenchConfig(tmp);
  const builds = [["this build", join(ROOT, "dist", "cli.js")]];
  if (process.argv[2]) builds.unshift(["other build", resolve(process.argv[2])]);
  const rows = await measureStoredTasks({ plan, tmp, configPath, builds });
  console.log(`Bytes per stored task, ${TASKS} tasks one after another (echo agent, SQLite):\n`);
  for (const name of Object.keys(WORKLOADS)) {
    const mine = rows.filter((r) => r.name === name);
    const names = [...new Set(mine.flatMap((r) => Object.keys(r.parts)))].sort(
      (a, b) =>
        Math.max(...mine.map((r) => r.parts[b]?.size ?? 0)) -
        Math.max(...mine.map((r) => r.parts[a]?.size ?? 0)),
    );
    console.log(`${name}: pages / in use, bytes per task`);
    console.log(`| table or index | ${mine.map((r) => r.label).join(" | ")} |`);
    console.log(`| --- | ${mine.map(() => "---").join(" | ")} |`);
    const cell = (p) => (p ? `${Math.round(p.size)} / ${Math.round(p.used)}` : "—");
    for (const n of names)
      console.log(`| ${n} | ${mine.map((r) => cell(r.parts[n])).join(" | ")} |`);
    console.log(
      `| **database pages in use** | ${mine.map((r) => `**${Math.round(r.total)}** / ${Math.round(r.used)}`).join(" | ")} |\n`,
    );
  }
  process.exit(0);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
