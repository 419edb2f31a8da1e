#!/usr/bin/env node
// What one A2A task alone costs SQLite: `node bench/peer/a2a-writes.mjs [<other build>/dist/cli.js]`.
// Sends tasks one after another (one connection) to this checkout's dist/cli.js, and to another
// build when given (e.g. main's, copied as bench/README.md says for BENCH_CLI_BEFORE), on each
// binding: a blocking SendMessage on a new context, JSON-RPC and HTTP+JSON, and on a context
// the client names. Prints per task the WAL frames (pages written; lib/sqlite-wal.mjs, with a
// read snapshot held so that the WAL cannot start over meanwhile), the commits, and the
// statements by kind as the server's /metrics counts them.
import { randomUUID } from "node:crypto";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Pool } from "../lib/http.mjs";
import { installCleanupHooks, pinningPlan } from "../lib/proc.mjs";
import { makeTempDir, ROOT, startOurs, writeBenchConfig } from "../lib/servers.mjs";
import { holdSnapshot, readWal } from "../lib/sqlite-wal.mjs";

const TASKS = Math.max(20, Number(process.env.BENCH_A2A_WRITE_TASKS ?? 200));
const HEADERS = { "content-type": "application/json", "a2a-version": "1.0" };
const message = (contextId) => ({
  messageId: randomUUID(),
  role: "ROLE_USER",
  parts: [{ text: "hello from the benchmark" }],
  ...(contextId ? { contextId } : {}),
});
const WORKLOADS = {
  "JSON-RPC SendMessage, new context": () => ({
    path: "/a2a/echo",
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: message() },
    }),
  }),
  "HTTP+JSON message:send, new context": () => ({
    path: "/a2a/echo/message:send",
    body: JSON.stringify({ message: message() }),
  }),
  "HTTP+JSON message:send, the client's new context": () => ({
    path: "/a2a/echo/message:send",
    body: JSON.stringify({ message: message(randomUUID()) }),
  }),
};

/** The server's storage counters (commits, statements by kind) from /metrics. */
async function counters(origin) {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const found = {};
  for (const line of text.split("\n")) {
    const m =
      /^acp_storage_(commits_total|statements_total)\{backend="sqlite"(?:,kind="(\w+)")?\} ([\d.e+]+)$/.exec(
        line,
      );
    if (m) found[m[2] ?? "commits"] = Number(m[3]);
  }
  return found;
}

async function measure(server, db, workload) {
  const pool = new Pool(server.origin, { connections: 1, pipelining: 1 });
  const send = async () => {
    const { path, body } = workload();
    const res = await pool.request({ path, method: "POST", headers: HEADERS, body });
    const text = await res.body.text();
    if (res.statusCode !== 200 || !text.includes("TASK_STATE_COMPLETED")) {
      throw new Error(`${path} answered ${res.statusCode}: ${text.slice(0, 300)}`);
    }
  };
  try {
    for (let i = 0; i < 10; i++) await send();
    await sleep(300);
    const snapshot = holdSnapshot(db);
    try {
      const wal = readWal(db);
      const before = await counters(server.origin);
      for (let i = 0; i < TASKS; i++) await send();
      await sleep(300);
      const after = await counters(server.origin);
      const walAfter = readWal(db);
      if (walAfter.salt !== wal.salt) throw new Error("the WAL started over during the count");
      const per = (key) => ((after[key] ?? 0) - (before[key] ?? 0)) / TASKS;
      return {
        frames: (walAfter.frames - wal.frames) / TASKS,
        commits: per("commits"),
        select: per("select"),
        insert: per("insert"),
        update: per("update"),
        delete: per("delete"),
      };
    } finally {
      snapshot.release();
    }
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
for (const [label, cli] of builds) {
  for (const [name, workload] of Object.entries(WORKLOADS)) {
    const db = join(tmp, `${randomUUID()}.db`);
    const server = await startOurs(plan, { tmp, configPath, db, cli });
    try {
      rows.push({ label, name, ...(await measure(server, db, workload)) });
    } finally {
      await server.proc.stop();
    }
  }
}
console.log(`Per A2A task, ${TASKS} tasks one after another (echo agent, SQLite):\n`);
console.log("| build | workload | WAL pages | commits | select | insert | update | delete |");
console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
const f = (n) => n.toFixed(2);
for (const r of rows) {
  console.log(
    `| ${r.label} | ${r.name} | ${f(r.frames)} | ${f(r.commits)} | ${f(r.select)} | ${f(r.insert)} | ${f(r.update)} | ${f(r.delete)} |`,
  );
}
process.exit(0);
