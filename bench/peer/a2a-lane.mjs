// The A2A lane of `npm run bench:peer`: our A2A face beside the official `@a2a-js/sdk` server
// (a2a-server.mjs) in memory and on its SQLite database task store, the same echo behaviour,
// on JSON-RPC `SendMessage`, HTTP+JSON `message:send` and JSON-RPC `SendStreamingMessage`, at
// 1, 10 and 50 connections. Every server is pinned to the server CPU, the load generator to the
// other; each phase goes round the servers in turn (ours, SDK, SDK on SQLite, ours…), so a
// ratio compares servers measured under the same conditions. Ours also serves ACP `runs/wait`
// (the same echo run) for the "CPU per run at 1 connection ÷ at 50" and "A2A ÷ ACP" rows.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fmt, fmtNum } from "../lib/format.mjs";
import { Pool, summarize, ttfeLoop } from "../lib/http.mjs";
import { cpuTimeMs, freePort, spawnNode, waitReady } from "../lib/proc.mjs";
import { BENCH_DIR, startOurs } from "../lib/servers.mjs";

const CONNECTIONS = [1, 10, 50];
const SERVERS = ["ours", "sdk", "sdkDb"];
/**
 * Another build of ours (its dist/cli.js, e.g. main's copied aside) measured in the same turns
 * as "before", for the before ÷ after table: BENCH_CLI_BEFORE=<dir>/dist/cli.js.
 */
/** Seconds each server is warmed on each workload before the first is measured. */
const WARM_SECONDS = Math.max(0, Number(process.env.BENCH_A2A_WARMUP ?? 2));
const BEFORE_CLI = process.env.BENCH_CLI_BEFORE ? resolve(process.env.BENCH_CLI_BEFORE) : null;
const TEXT = "hello from the benchmark";
const message = { messageId: "bench-1", role: "ROLE_USER", parts: [{ text: TEXT }] };
const HEADERS = { "content-type": "application/json", "a2a-version": "1.0" };
const rpc = (method) => JSON.stringify({ jsonrpc: "2.0", id: 1, method, params: { message } });

/** Where each server takes each workload's request. */
const PATHS = {
  "jsonrpc-send": { ours: "/a2a/echo", sdk: "/a2a/jsonrpc", body: rpc("SendMessage") },
  "rest-send": {
    ours: "/a2a/echo/message:send",
    sdk: "/a2a/rest/message:send",
    body: JSON.stringify({ message }),
  },
  "jsonrpc-stream": {
    ours: "/a2a/echo",
    sdk: "/a2a/jsonrpc",
    body: rpc("SendStreamingMessage"),
  },
};

/**
 * Some workloads only: BENCH_A2A_ONLY=jsonrpc-send,rest-send,jsonrpc-stream,acp-wait,acp-thread
 * (all by default).
 */
const ONLY = (
  process.env.BENCH_A2A_ONLY ?? "jsonrpc-send,rest-send,jsonrpc-stream,acp-wait,acp-thread"
)
  .split(",")
  .map((w) => w.trim());

const LABEL = {
  "jsonrpc-send": "JSON-RPC SendMessage",
  "rest-send": "HTTP+JSON message:send",
  "jsonrpc-stream": "JSON-RPC SendStreamingMessage",
  "acp-wait": "ACP POST /runs/wait (ours only)",
  "acp-thread": "ACP POST /threads/{new}/runs/wait (ours only)",
};

async function startSdk(plan, tmp, store) {
  const port = await freePort();
  const args = [join(BENCH_DIR, "peer", "a2a-server.mjs"), "--port", String(port)];
  if (store === "sqlite") args.push("--store", "sqlite", "--db", join(tmp, `sdk-${port}.db`));
  const proc = spawnNode(plan, args, { logFile: join(tmp, `a2a-sdk-${store}.log`) });
  const origin = `http://127.0.0.1:${port}`;
  await waitReady(proc, `${origin}/ok`);
  return { proc, origin };
}

/**
 * `connections` workers on one undici pool, each sending one request after another for
 * `seconds`; per-request latency in ms (performance.now()), only 2xx answers count.
 */
async function sendLoop({ origin, path, body, connections, seconds }) {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const samples = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const at = typeof path === "function" ? path() : path;
        const res = await pool.request({ path: at, method: "POST", headers: HEADERS, body });
        await res.body.arrayBuffer();
        if (res.statusCode >= 200 && res.statusCode < 300) samples.push(performance.now() - t0);
        else errors += 1;
      } catch {
        errors += 1;
      }
    }
  };
  const t0 = performance.now();
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    await pool.close().catch(() => {});
  }
  return { samples, errors, seconds: (performance.now() - t0) / 1000 };
}

async function streamLoop({ origin, path, body, connections, seconds }) {
  const t0 = performance.now();
  const res = await ttfeLoop({
    origin,
    request: { path, method: "POST", body, headers: { "a2a-version": "1.0" } },
    connections,
    seconds,
    maxRequests: 1_000_000,
  });
  return { samples: res.samples, errors: res.errors, seconds: (performance.now() - t0) / 1000 };
}

/** Every server must answer a completed echo task before anything is timed. */
async function check(origin, path, body, streaming) {
  const res = await fetch(`${origin}${path}`, { method: "POST", headers: HEADERS, body });
  const text = await res.text();
  const ok = res.status === 200 && text.includes("TASK_STATE_COMPLETED") && text.includes(TEXT);
  if (!ok || (streaming && !text.startsWith("data: "))) {
    throw new Error(`${origin}${path} answered ${res.status}: ${text.slice(0, 300)}`);
  }
}

/** One workload at 1, 10 and 50 connections, the servers in turn; figures per server. */
async function measure({ id, targets, log, seconds, rounds }) {
  const loop = id === "jsonrpc-stream" ? streamLoop : sendLoop;
  const out = {};
  for (const connections of CONNECTIONS) {
    const acc = Object.fromEntries(
      targets.map((t) => [t.key, { samples: [], errors: 0, seconds: 0, cpu: 0 }]),
    );
    for (const t of targets) {
      await loop({ origin: t.origin, path: t.path, body: t.body, connections, seconds: 1 });
    }
    const phase = Math.max(1, seconds / rounds);
    for (let r = 0; r < rounds; r++) {
      for (const t of targets) {
        log(`a2a ${id}, ${connections} conn, round ${r + 1}/${rounds}, ${t.key}, ${phase} s`);
        const cpu0 = cpuTimeMs(t.pid);
        const res = await loop({ ...t, connections, seconds: phase });
        const a = acc[t.key];
        a.cpu += cpuTimeMs(t.pid) - cpu0;
        a.samples.push(...res.samples);
        a.errors += res.errors;
        a.seconds += res.seconds;
      }
    }
    out[connections] = Object.fromEntries(
      Object.entries(acc).map(([key, a]) => {
        const s = summarize(a.samples);
        return [
          key,
          {
            tasksPerSecond: s.count / a.seconds,
            cpuPerTask: a.cpu / s.count,
            p50: s.p50,
            p99: s.p99,
            count: s.count,
            errors: a.errors,
          },
        ];
      }),
    );
  }
  return out;
}

/**
 * Runs the lane and returns its results: `figures[workload][connections][server]` plus the
 * printed section (a markdown table of each figure beside its target, met or not).
 */
export async function a2aLane({ plan, tmp, configPath, log, seconds, rounds }) {
  const servers = {};
  try {
    const ours = await startOurs(plan, { tmp, configPath, db: join(tmp, "a2a-lane.db") });
    servers.ours = ours;
    if (BEFORE_CLI) {
      const db = join(tmp, "a2a-lane-before.db");
      servers.before = await startOurs(plan, { tmp, configPath, db, cli: BEFORE_CLI });
    }
    servers.sdk = await startSdk(plan, tmp, "memory");
    servers.sdkDb = await startSdk(plan, tmp, "sqlite");
    const agents = await (
      await fetch(`${ours.origin}/agents/search`, {
        method: "POST",
        headers: HEADERS,
        body: "{}",
      })
    ).json();
    const echoId = agents.find((a) => (a.metadata?.ref?.name ?? a.name) === "echo")?.agent_id;
    const waitBody = JSON.stringify({
      agent_id: echoId,
      input: { messages: [{ role: "user", content: TEXT }] },
    });
    const figures = {};
    // Every server warmed on every workload first: the first workload measured would otherwise
    // pay for V8 compiling the server's request path (seen as 1.5× the CPU per task at 1
    // connection for whichever binding came first).
    for (const id of Object.keys(PATHS).filter((w) => ONLY.includes(w))) {
      const loop = id === "jsonrpc-stream" ? streamLoop : sendLoop;
      for (const key of BEFORE_CLI ? ["before", ...SERVERS] : SERVERS) {
        const path = key === "ours" || key === "before" ? PATHS[id].ours : PATHS[id].sdk;
        const { origin } = servers[key];
        await loop({ origin, path, body: PATHS[id].body, connections: 10, seconds: WARM_SECONDS });
      }
    }
    for (const id of Object.keys(PATHS).filter((w) => ONLY.includes(w))) {
      const { body } = PATHS[id];
      const keys = BEFORE_CLI ? ["before", ...SERVERS] : SERVERS;
      const targets = keys.map((key) => ({
        key,
        origin: servers[key].origin,
        pid: servers[key].proc.pid,
        path: key === "ours" || key === "before" ? PATHS[id].ours : PATHS[id].sdk,
        body,
      }));
      for (const t of targets) await check(t.origin, t.path, body, id === "jsonrpc-stream");
      figures[id] = await measure({ id, targets, log, seconds, rounds });
    }
    const acp = (BEFORE_CLI ? ["before", "ours"] : ["ours"]).map((key) => ({
      key,
      origin: servers[key].origin,
      pid: servers[key].proc.pid,
      path: "/runs/wait",
      body: waitBody,
    }));
    if (ONLY.includes("acp-wait")) {
      figures["acp-wait"] = await measure({ id: "acp-wait", targets: acp, log, seconds, rounds });
    }
    // The run an A2A message makes: stateful, on a new thread (a new context) each time.
    if (ONLY.includes("acp-thread")) {
      const onNewThread = acp.map((t) => ({
        ...t,
        path: () => `/threads/${crypto.randomUUID()}/runs/wait`,
        body: JSON.stringify({ ...JSON.parse(waitBody), if_not_exists: "create" }),
      }));
      figures["acp-thread"] = await measure({
        id: "acp-thread",
        targets: onNewThread,
        log,
        seconds,
        rounds,
      });
    }
    const heading = `## A2A: ours beside @a2a-js/sdk ${sdkVersion()} (DefaultRequestHandler on Express; InMemoryTaskStore, and DatabaseTaskStore on SQLite), measured in turn in this run`;
    return { figures, lines: [heading, "", ...report(figures)] };
  } finally {
    for (const key of ["sdkDb", "sdk", "before", "ours"]) await servers[key]?.proc.stop();
  }
}

/** The installed SDK's version (its main entry is dist/index.cjs, under the package root). */
function sdkVersion() {
  const main = createRequire(import.meta.url).resolve("@a2a-js/sdk");
  return JSON.parse(readFileSync(join(dirname(main), "..", "package.json"), "utf8")).version;
}

const ratio = (a, b) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : Number.NaN);
const x = (r) => (Number.isFinite(r) ? `${fmtNum(r, 2)}×` : "n/a");
const verdict = (r, ok) => (Number.isFinite(r) ? (ok(r) ? "met" : "NOT met") : "n/a");

function report(figures) {
  const header = [
    "workload",
    "conn",
    "figure",
    "ours",
    "SDK memory",
    "SDK SQLite",
    "ours ÷ SDK",
    "target",
    "met?",
    "ours ÷ SDK SQLite",
    "target",
    "met?",
  ];
  const lines = [];
  const a2a = Object.keys(PATHS).filter((id) => figures[id]);
  for (const id of a2a) {
    for (const c of CONNECTIONS) {
      const f = figures[id][c];
      const add = (figure, key, unit, memTarget, dbTarget) => {
        const rm = ratio(f.ours[key], f.sdk[key]);
        const rd = ratio(f.ours[key], f.sdkDb[key]);
        lines.push([
          LABEL[id],
          c,
          figure,
          fmt(f.ours[key], unit),
          fmt(f.sdk[key], unit),
          fmt(f.sdkDb[key], unit),
          x(rm),
          memTarget?.[0] ?? "",
          memTarget ? verdict(rm, memTarget[1]) : "",
          x(rd),
          dbTarget?.[0] ?? "",
          dbTarget ? verdict(rd, dbTarget[1]) : "",
        ]);
      };
      add("tasks/s", "tasksPerSecond", "/s", ["≥ 1.2×", (r) => r >= 1.2], ["≥ 2×", (r) => r >= 2]);
      add("server CPU per task", "cpuPerTask", "cpu-ms", ["≤ 0.8×", (r) => r <= 0.8]);
      const first = id === "jsonrpc-stream" ? "time to first event p50" : "p50 latency";
      const ttfeTarget = id === "jsonrpc-stream" && c === 1 ? ["≤ 1×", (r) => r <= 1] : undefined;
      add(first, "p50", "ms", ttfeTarget);
      add(id === "jsonrpc-stream" ? "time to first event p99" : "p99 latency", "p99", "ms");
    }
  }
  const out = [table(header, lines), ""];
  // Ours alone: a lone request's cost against a batched one's, and A2A against ACP.
  const own = [];
  for (const id of Object.keys(figures)) {
    const one = figures[id][1].ours;
    const fifty = figures[id][50].ours;
    const r = ratio(one.cpuPerTask, fifty.cpuPerTask);
    own.push([
      LABEL[id],
      "CPU per task, 1 conn ÷ 50 conn",
      `${fmt(one.cpuPerTask, "cpu-ms")} ÷ ${fmt(fifty.cpuPerTask, "cpu-ms")}`,
      x(r),
      "≤ 1.3×",
      verdict(r, (v) => v <= 1.3),
    ]);
    const tail = ratio(one.p99, one.p50);
    own.push([
      LABEL[id],
      "p99 ÷ p50, 1 conn",
      `${fmt(one.p99, "ms")} ÷ ${fmt(one.p50, "ms")}`,
      x(tail),
      "≤ 3×",
      verdict(tail, (v) => v <= 3),
    ]);
  }
  for (const acpId of ["acp-wait", "acp-thread"].filter((w) => figures[w])) {
    for (const id of a2a) {
      const a = figures[id][50].ours.cpuPerTask;
      const b = figures[acpId][50].ours.cpuPerTask;
      const r = ratio(a, b);
      own.push([
        LABEL[id],
        `CPU per task ÷ ${acpId === "acp-wait" ? "ACP runs/wait's" : "ACP thread runs/wait's"}, 50 conn`,
        `${fmt(a, "cpu-ms")} ÷ ${fmt(b, "cpu-ms")}`,
        x(r),
        "≤ 1×",
        verdict(r, (v) => v <= 1),
      ]);
    }
  }
  out.push(table(["workload", "figure", "ours", "ratio", "target", "met?"], own), "");
  if (Object.values(figures)[0]?.[1].before) out.push(beforeAfter(figures), "");
  const counts = [];
  for (const id of Object.keys(figures)) {
    for (const c of CONNECTIONS) {
      const f = figures[id][c];
      const parts = Object.entries(f).map(([k, v]) => `${k} ${v.count} (${v.errors} errors)`);
      counts.push(`${LABEL[id]} ${c} conn: ${parts.join(", ")}`);
    }
  }
  out.push(`Tasks timed (non-2xx or failed requests): ${counts.join("; ")}`);
  return out;
}

/** This build ÷ BENCH_CLI_BEFORE's, measured in the same turns. */
function beforeAfter(figures) {
  const lines = [];
  for (const id of Object.keys(figures)) {
    for (const c of CONNECTIONS) {
      const { ours, before } = figures[id][c];
      const cell = (key, unit) =>
        `${fmt(ours[key], unit)} ÷ ${fmt(before[key], unit)} = ${x(ratio(ours[key], before[key]))}`;
      lines.push([
        LABEL[id],
        c,
        cell("tasksPerSecond", "/s"),
        cell("cpuPerTask", "cpu-ms"),
        cell("p50", "ms"),
        cell("p99", "ms"),
      ]);
    }
  }
  const header = ["workload", "conn", "tasks/s", "server CPU per task", "p50", "p99"];
  return [`This build ÷ BENCH_CLI_BEFORE (${BEFORE_CLI}):`, "", table(header, lines)].join("\n");
}

function table(header, lines) {
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => String(l[i]).length)));
  const pad = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(" | ")} |`;
  return [
    pad(header),
    `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`,
    ...lines.map(pad),
  ].join("\n");
}
