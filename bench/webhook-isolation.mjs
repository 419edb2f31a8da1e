#!/usr/bin/env node
// How long a healthy webhook receiver waits for its first notification while many others hang
// (accept the connection, read the request, never answer), on the built server as a user runs
// it, with a full garbage collection forced every second (bench/lib/force-gc.mjs): Node 20
// drops an `AbortSignal.any([AbortSignal.timeout(…)])`'s inner timeout at a full collection
// (nodejs/node#57736), so a deliverer bounding its attempts that way waits for undici's own
// 300 s headers timeout instead.
//
//   node bench/webhook-isolation.mjs [--cli dist/cli.js] [--hanging 64] [--cap 330]
//
// Three measures, each in a server of its own:
//   a2a        `--hanging` A2A tasks, each with a push config on a hanging receiver of its own;
//              then a task with one config on the healthy receiver, and a task with two
//              configs (a hanging receiver's and the healthy one's): the time from each
//              healthy task's SendMessage to its first notification at the healthy receiver,
//              and to its last (the completed status).
//   acp        `--hanging` ACP runs whose `webhook` hangs, then one whose webhook is healthy:
//              the time to its first run webhook.
// `--cap` bounds each wait (seconds): a measure that reaches it prints "> cap".
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const HERE = dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    cli: { type: "string", default: join(HERE, "..", "dist", "cli.js") },
    hanging: { type: "string", default: "64" },
    cap: { type: "string", default: "330" },
    only: { type: "string", default: "a2a,acp" },
  },
});
const CLI = resolve(values.cli);
const HANGING = Number(values.hanging);
const CAP_MS = Number(values.cap) * 1000;

/** Receivers that accept a request, read it, and never answer (sockets kept until close). */
async function hangingReceivers(count) {
  const servers = [];
  for (let i = 0; i < count; i++) {
    const sockets = new Set();
    const server = createServer((req) => req.resume());
    server.on("connection", (socket) => {
      sockets.add(socket);
      socket.on("close", () => sockets.delete(socket));
    });
    server.headersTimeout = 0;
    server.requestTimeout = 0;
    await new Promise((done) => server.listen(0, "127.0.0.1", done));
    servers.push({ server, sockets, url: `http://127.0.0.1:${server.address().port}/hang` });
  }
  return {
    urls: servers.map((s) => s.url),
    close: () =>
      Promise.all(
        servers.map(({ server, sockets }) => {
          for (const socket of sockets) socket.destroy();
          return new Promise((done) => server.close(done));
        }),
      ),
  };
}

/** A receiver that answers 204 at once and records when each request arrived. */
async function healthyReceiver() {
  const arrivals = [];
  const waiters = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      arrivals.push({ at: performance.now(), path: req.url, body });
      res.writeHead(204).end();
      for (const wake of waiters.splice(0)) wake();
    });
  });
  await new Promise((done) => server.listen(0, "127.0.0.1", done));
  const origin = `http://127.0.0.1:${server.address().port}`;
  return {
    origin,
    arrivals,
    /** The first arrival on `path` for which `match(body)` holds, or null after `deadline`. */
    async first(path, match, deadline) {
      for (;;) {
        const found = arrivals.find((a) => a.path === path && match(a.body));
        if (found) return found.at;
        const left = deadline - performance.now();
        if (left <= 0) return null;
        await new Promise((done) => {
          const timer = setTimeout(done, Math.min(left, 1000));
          waiters.push(() => {
            clearTimeout(timer);
            done();
          });
        });
      }
    },
    close: () => new Promise((done) => server.close(done)),
  };
}

async function startServer(tmp) {
  const config = join(tmp, "config.yaml");
  writeFileSync(
    config,
    [
      "server:",
      "  webhooks: { allowPrivateTargets: true }",
      "agents:",
      "  - name: echo",
      "    version: 1.0.0",
      "    description: Echo that takes a moment.",
      "    adapter: { type: echo, delayMs: 5 }",
      "",
    ].join("\n"),
  );
  const port = 20000 + Math.floor(Math.random() * 20000);
  const proc = spawn(
    process.execPath,
    [
      "--expose-gc",
      "--import",
      join(HERE, "lib", "force-gc.mjs"),
      CLI,
      "serve",
      "--config",
      config,
      "--db",
      join(tmp, "db.sqlite"),
      "--port",
      String(port),
      "--log-level",
      "error",
      "--grace",
      "0",
    ],
    { stdio: ["ignore", "inherit", "inherit"], cwd: tmp },
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
    stop: () =>
      new Promise((done) => {
        proc.once("exit", done);
        proc.kill("SIGKILL");
      }),
  };
}

async function rpc(origin, method, params) {
  const response = await fetch(`${origin}/a2a/echo`, {
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

async function sendWithConfigs(origin, text, urls) {
  const [first, ...rest] = urls;
  const result = await rpc(origin, "SendMessage", {
    message: message(text),
    configuration: { returnImmediately: true, taskPushNotificationConfig: { url: first } },
  });
  const taskId = result.task?.id ?? result.id;
  for (const url of rest) {
    await rpc(origin, "CreateTaskPushNotificationConfig", { taskId, url });
  }
  return taskId;
}

const secs = (ms) => (ms === null ? `> ${CAP_MS / 1000} s` : `${(ms / 1000).toFixed(2)} s`);
const isCompleted = (body) => body.includes("TASK_STATE_COMPLETED");

async function measureA2a(hanging, healthy, origin) {
  for (let i = 0; i < hanging.urls.length; i++) {
    await sendWithConfigs(origin, `hang ${i}`, [hanging.urls[i]]);
  }
  // The hanging attempts are in flight, and a collection has run since they began.
  await new Promise((done) => setTimeout(done, 2500));
  const started = performance.now();
  await sendWithConfigs(origin, "healthy alone", [`${healthy.origin}/alone`]);
  await sendWithConfigs(origin, "healthy beside a hanging one", [
    hanging.urls[0],
    `${healthy.origin}/beside`,
  ]);
  const deadline = started + CAP_MS;
  const rows = [];
  for (const path of ["/alone", "/beside"]) {
    const first = await healthy.first(path, () => true, deadline);
    const last = await healthy.first(path, isCompleted, deadline);
    rows.push([
      path === "/alone" ? "a2a, a task's only config" : "a2a, beside a hanging config",
      first === null ? null : first - started,
      last === null ? null : last - started,
    ]);
  }
  return rows;
}

async function measureAcp(hanging, healthy, origin) {
  const agents = await (
    await fetch(`${origin}/agents/search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    })
  ).json();
  const agentId = agents[0].agent_id;
  const create = async (webhook) => {
    const response = await fetch(`${origin}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        agent_id: agentId,
        input: { messages: [{ role: "user", content: "hi" }] },
        webhook,
      }),
    });
    if (!response.ok) throw new Error(`POST /runs: ${response.status} ${await response.text()}`);
  };
  for (const url of hanging.urls) await create(url);
  await new Promise((done) => setTimeout(done, 2500));
  const started = performance.now();
  await create(`${healthy.origin}/acp`);
  const deadline = started + CAP_MS;
  const first = await healthy.first("/acp", () => true, deadline);
  const last = await healthy.first("/acp", (body) => body.includes('"success"'), deadline);
  return [
    [
      "acp run webhook",
      first === null ? null : first - started,
      last === null ? null : last - started,
    ],
  ];
}

const measures = { a2a: measureA2a, acp: measureAcp };
const rows = [];
for (const name of values.only.split(",")) {
  const tmp = mkdtempSync(join(tmpdir(), "webhook-isolation-"));
  const hanging = await hangingReceivers(HANGING);
  const healthy = await healthyReceiver();
  const server = await startServer(tmp);
  try {
    rows.push(...(await measures[name](hanging, healthy, server.origin)));
  } finally {
    await server.stop();
    await hanging.close();
    await healthy.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}
console.log(`${CLI}: ${HANGING} hanging receivers, a full GC every second`);
console.log("healthy receiver                 | first notification | last (final status)");
for (const [label, first, last] of rows) {
  console.log(`${label.padEnd(32)} | ${secs(first).padStart(18)} | ${secs(last).padStart(19)}`);
}
