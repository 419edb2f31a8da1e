#!/usr/bin/env node
// One A2A task with many push notification configs (10,000 by default, the per-task limit
// raised to allow them) on the built server as a user runs it: what it costs everyone else.
// Every config points at a receiver of its own that refuses connections (127.x.y.z, a closed
// port), so each notification fails at its first attempt (`maxAttempts: 1`) and nothing is
// delivered: what is measured is the server's own bookkeeping of 10,000 deliveries per event.
//
//   node bench/push-config-flood.mjs [--cli dist/cli.js] [--configs 10000] [--no-limit-key]
//     [--db postgres://…?schema=… (default: a SQLite file)]
//
// `--no-limit-key` leaves `server.a2a.maxPushConfigsPerTask` out of the config (a build that
// does not know it, which has no limit). Phases, each `--seconds` long (default 20):
//   quiet   other callers alone: a SendMessage to another agent, waited for, one after another,
//           and `GET /readyz` beside it; the server's RSS sampled
//   flood   the same while the task's events fan out to every config
// Printed: the time to create the configs, the callers' latencies (p50, p99, max) and the peak
// RSS of each phase, and how many deliveries were settled (acp_webhook_deliveries_total).
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const HERE = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    cli: { type: "string", default: join(HERE, "..", "dist", "cli.js") },
    configs: { type: "string", default: "10000" },
    seconds: { type: "string", default: "20" },
    "no-limit-key": { type: "boolean", default: false },
    db: { type: "string" },
  },
});
const CLI = resolve(values.cli);
const CONFIGS = Number(values.configs);
const PHASE_MS = Number(values.seconds) * 1000;

/** A port nothing listens on (bound, noted, closed). */
async function closedPort() {
  const server = createServer();
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  const { port } = server.address();
  await new Promise((done) => server.close(done));
  return port;
}

async function startServer(tmp) {
  const config = join(tmp, "config.yaml");
  writeFileSync(
    config,
    [
      "server:",
      "  webhooks: { allowPrivateTargets: true, maxAttempts: 1 }",
      ...(values["no-limit-key"] ? [] : [`  a2a: { maxPushConfigsPerTask: ${CONFIGS} }`]),
      "agents:",
      "  - name: long",
      "    version: 1.0.0",
      "    description: Echo, a word a second.",
      "    adapter: { type: echo, delayMs: 1000 }",
      "  - name: quick",
      "    version: 1.0.0",
      "    description: Echo.",
      "    adapter: { type: echo }",
      "",
    ].join("\n"),
  );
  const port = 20000 + Math.floor(Math.random() * 20000);
  const proc = spawn(
    process.execPath,
    [
      ...(process.env.FLOOD_NODE_FLAGS?.split(" ").filter(Boolean) ?? []),
      CLI,
      "serve",
      "--config",
      config,
      "--db",
      values.db ?? join(tmp, "db.sqlite"),
      "--port",
      String(port),
    ],
    {
      stdio: ["ignore", "ignore", "inherit"],
      cwd: tmp,
      env: { ...process.env, LOG_LEVEL: "error" },
    },
  );
  const origin = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${origin}/readyz`)).ok) break;
    } catch {}
    if (i > 200) throw new Error("the server did not start");
    await new Promise((done) => setTimeout(done, 100));
  }
  return {
    origin,
    rssMb: () => {
      const status = readFileSync(`/proc/${proc.pid}/status`, "utf8");
      return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
    },
    signal: (name) => proc.kill(name),
    stop: () =>
      new Promise((done) => {
        proc.once("exit", done);
        proc.kill("SIGKILL");
      }),
  };
}

async function rpc(origin, agent, method, params) {
  const response = await fetch(`${origin}/a2a/${agent}`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  const body = await response.json();
  if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

const message = (text) => ({
  messageId: crypto.randomUUID(),
  role: "ROLE_USER",
  parts: [{ text }],
});

/** The server's V8 heap and external memory now (MB), from its metrics. */
async function heapMb(origin) {
  const text = await (await fetch(`${origin}/metrics`)).text();
  const value = (name) =>
    Number(
      text
        .split("\n")
        .find((line) => line.startsWith(`${name} `))
        ?.split(" ")[1] ?? 0,
    ) /
    2 ** 20;
  return {
    heapUsed: value("nodejs_heap_size_used_bytes"),
    heapTotal: value("nodejs_heap_size_total_bytes"),
    external: value("nodejs_external_memory_bytes"),
  };
}

async function delivered(origin) {
  const text = await (await fetch(`${origin}/metrics`)).text();
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith("acp_webhook_deliveries_total{")) total += Number(line.split(" ").at(-1));
  }
  return total;
}

/** Other callers, one after another, for `ms`: their latencies, and the peak RSS meanwhile. */
async function probe(server, ms) {
  const until = performance.now() + ms;
  const send = [];
  const ready = [];
  let peakRss = server.rssMb();
  let peakHeap = { heapUsed: 0, heapTotal: 0, external: 0 };
  const sampler = setInterval(() => {
    peakRss = Math.max(peakRss, server.rssMb());
    if (process.env.FLOOD_HEAP) {
      void heapMb(server.origin).then((now) => {
        if (now.heapTotal > peakHeap.heapTotal) peakHeap = now;
      });
    }
  }, 250);
  const loop = async (list, call, pauseMs) => {
    while (performance.now() < until) {
      const started = performance.now();
      await call();
      list.push(performance.now() - started);
      if (pauseMs > 0) await new Promise((done) => setTimeout(done, pauseMs));
    }
  };
  await Promise.all([
    loop(send, () => rpc(server.origin, "quick", "SendMessage", { message: message("hello") }), 0),
    loop(ready, async () => (await fetch(`${server.origin}/readyz`)).text(), 100),
  ]);
  clearInterval(sampler);
  if (process.env.FLOOD_HEAP) console.log("  heap at its peak (MB):", peakHeap);
  return { send, ready, peakRss };
}

const quantile = (list, q) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN;
};
const ms = (value) => `${value.toFixed(value < 10 ? 1 : 0)} ms`;
const row = (label, list) =>
  `  ${label.padEnd(22)} n=${String(list.length).padStart(4)}  p50 ${ms(quantile(list, 0.5)).padStart(8)}  p99 ${ms(quantile(list, 0.99)).padStart(8)}  max ${ms(Math.max(...list)).padStart(8)}`;

const tmp = mkdtempSync(join(tmpdir(), "push-config-flood-"));
const server = await startServer(tmp);
try {
  const port = await closedPort();
  // Warm up, then the quiet phase.
  await probe(server, 2000);
  const quiet = await probe(server, PHASE_MS);

  const words = Array.from({ length: 14 }, (_, i) => `word${i}`).join(" ");
  const result = await rpc(server.origin, "long", "SendMessage", {
    message: message(words),
    configuration: { returnImmediately: true },
  });
  const taskId = (result.task ?? result).id;
  const created = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 8 }, async () => {
      while (next < CONFIGS) {
        const i = next++;
        const url = `http://127.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255 || 1}:${port}/c${i}`;
        await rpc(server.origin, "long", "CreateTaskPushNotificationConfig", { taskId, url });
        if ((i + 1) % 1000 === 0) {
          const seconds = ((performance.now() - created) / 1000).toFixed(1);
          console.error(`  ${i + 1} configs created after ${seconds} s`);
        }
      }
    }),
  );
  const createSeconds = (performance.now() - created) / 1000;
  const before = await delivered(server.origin);
  if (process.env.FLOOD_SNAPSHOT_AFTER_MS) {
    setTimeout(() => server.signal("SIGUSR2"), Number(process.env.FLOOD_SNAPSHOT_AFTER_MS));
  }
  const flood = await probe(server, PHASE_MS);
  const settled = (await delivered(server.origin)) - before;

  console.log(`${CLI}: one task with ${CONFIGS} push configs (each receiver refusing connections)`);
  console.log(`  ${CONFIGS} configs created in ${createSeconds.toFixed(1)} s (8 at a time)`);
  console.log(` quiet (no configs), ${PHASE_MS / 1000} s: peak RSS ${quiet.peakRss.toFixed(0)} MB`);
  console.log(row("SendMessage (other)", quiet.send));
  console.log(row("GET /readyz", quiet.ready));
  console.log(
    ` flood, ${PHASE_MS / 1000} s: peak RSS ${flood.peakRss.toFixed(0)} MB, ${settled} deliveries settled`,
  );
  console.log(row("SendMessage (other)", flood.send));
  console.log(row("GET /readyz", flood.ready));
} finally {
  await server.stop();
  rmSync(tmp, { recursive: true, force: true });
}
