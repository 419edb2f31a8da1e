#!/usr/bin/env node
// `npm run bench:peer`: ours beside a peer server on the workloads both can do, printing
// ours ÷ peer for each. The peer is the LangGraph JS API server (`@langchain/langgraph-api`,
// installed in bench/peer/ by `npm install --prefix bench/peer`) serving one-node graphs
// (echo-graphs.mjs); ours is the built dist/cli.js on SQLite with the bench's echo and
// 10,000-event scripted agents. Both run at the same time, pinned to the server CPU, and are
// measured alternately (ours, peer, ours, peer…). See bench/README.md, "Peer lane".
//
// With BENCH_PEER_ONLY=a2a, the A2A lane alone (a2a-lane.mjs: the official @a2a-js/sdk server,
// a root dependency, so nothing to install in bench/peer). The LangGraph lane runs twice: ours
// through ACP's paths, then through our LangGraph face (`/langgraph`, the very bodies the peer
// gets), the rows of the second marked "LangGraph face".
//
// Environment: BENCH_SECONDS (10; per connection count and server in the A2A lane), BENCH_ROUNDS
// (2), BENCH_PEER_WORKERS (10: runs the peer executes at once), BENCH_NO_PIN, BENCH_SKIP_BUILD,
// BENCH_KEEP_TMP, BENCH_STREAM_EVENTS, BENCH_PEER_FACES (acp,langgraph: which of our faces the
// LangGraph lane measures).
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import {
  cannon,
  jsonRequest,
  latencyLoop,
  Pool,
  readSse,
  summarize,
  ttfeLoop,
} from "../lib/http.mjs";
import {
  cpuTimeMs,
  foreignLoad,
  freePort,
  installCleanupHooks,
  machineFacts,
  pinningPlan,
  pinSelf,
  spawnNode,
  waitReady,
} from "../lib/proc.mjs";
import {
  BENCH_DIR,
  ensureBuilt,
  makeTempDir,
  RESULTS_DIR,
  STREAM_EVENTS,
  startOurs,
  writeBenchConfig,
} from "../lib/servers.mjs";
import { a2aLane } from "./a2a-lane.mjs";
import { COPILOTKIT_VERSION_FILE, copilotkitConversations } from "./copilotkit-conversations.mjs";
import { printPeerReport } from "./report.mjs";

const env = process.env;
const SECONDS = Math.max(2, Number(env.BENCH_SECONDS ?? 10));
const ROUNDS = Math.max(1, Math.round(Number(env.BENCH_ROUNDS ?? 2)));
const PEER_WORKERS = Math.max(1, Number(env.BENCH_PEER_WORKERS ?? 10));
const PEER_DIR = join(BENCH_DIR, "peer");
const PEER_VERSION_FILE = join(
  PEER_DIR,
  "node_modules",
  "@langchain",
  "langgraph-api",
  "package.json",
);
const MAX_REQUESTS = 200_000;
/** Which peers (BENCH_PEER_ONLY=langgraph, copilotkit or a2a, comma-separated); all by default. */
const ONLY = (env.BENCH_PEER_ONLY ?? "langgraph,copilotkit,a2a").split(",").map((s) => s.trim());
const FACES = (env.BENCH_PEER_FACES ?? "acp,langgraph").split(",").map((s) => s.trim());
/** The A2A lane's printed section (its own tables) and figures. */
let a2aSection = null;
let a2aFigures = null;

const log = (msg) =>
  process.stderr.write(`[bench:peer ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

const rows = [];
const workloadRuns = [];
const SIDES = ["ours", "peer"];

/** The face ours is measured through in the current lane, named in its rows (none: ACP). */
let lane = "";

/** `better`: which way is better for this figure, so the ratio can be read either way. */
function row(r) {
  const ratio =
    Number.isFinite(r.ours) && Number.isFinite(r.peer) && r.peer !== 0 ? r.ours / r.peer : null;
  const workload = lane ? `${r.workload} (${lane})` : r.workload;
  rows.push({ notes: "", ...r, workload, ratio });
}

const userMessage = { role: "user", content: "hello from the benchmark" };

async function startPeer(plan, tmp) {
  const port = await freePort();
  const storage = join(tmp, "langgraph-storage");
  mkdirSync(storage, { recursive: true });
  const proc = spawnNode(
    plan,
    [
      join(PEER_DIR, "langgraph-server.mjs"),
      "--port",
      String(port),
      "--storage",
      storage,
      "--workers",
      String(PEER_WORKERS),
    ],
    {
      logFile: join(tmp, "langgraph.log"),
      cwd: PEER_DIR,
      // Its default log level is debug (a line per request); ours runs at warn.
      env: {
        LOG_LEVEL: "warn",
        LANGSMITH_TRACING: "false",
        BENCH_PEER_SCRIPT: join(tmp, "stream-10k.json"),
      },
    },
  );
  const origin = `http://127.0.0.1:${port}`;
  await waitReady(proc, `${origin}/ok`, 60_000);
  return { proc, origin };
}

// ---------------------------------------------------------------------------------------------
// Workloads. `s` holds both servers and how each is asked for the same thing.

async function waitThroughput(s) {
  const W = "stateless run-and-wait, echo, 50 conn";
  const acc = Object.fromEntries(SIDES.map((k) => [k, { ok: 0, bad: 0, seconds: 0, cpu: 0 }]));
  log(`${W}: warm-up`);
  for (const k of SIDES)
    await cannon({ url: s[k].waitUrl, connections: 50, seconds: 1, body: s[k].waitBody });
  const phase = Math.max(1, Math.round(SECONDS / ROUNDS));
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of SIDES) {
      log(`${W}: round ${r + 1}/${ROUNDS}, ${k}, ${phase} s`);
      const cpu0 = cpuTimeMs(s[k].pid);
      const res = await cannon({
        url: s[k].waitUrl,
        connections: 50,
        seconds: phase,
        body: s[k].waitBody,
      });
      acc[k].cpu += cpuTimeMs(s[k].pid) - cpu0;
      acc[k].ok += res.ok;
      acc[k].bad += res.non2xx + res.errors + res.timeouts;
      acc[k].seconds += res.seconds;
    }
  }
  const rps = (a) => a.ok / a.seconds;
  row({
    workload: W,
    figure: "runs/s",
    unit: "/s",
    better: "higher",
    ours: rps(acc.ours),
    peer: rps(acc.peer),
    notes: `ours ${acc.ours.ok} runs (${acc.ours.bad} non-2xx/errors), peer ${acc.peer.ok} (${acc.peer.bad} non-2xx/errors); only 2xx count`,
  });
  row({
    workload: W,
    figure: "server CPU per run",
    unit: "cpu-ms",
    better: "lower",
    ours: acc.ours.cpu / acc.ours.ok,
    peer: acc.peer.cpu / acc.peer.ok,
    notes: "user+system CPU of the server process (/proc/<pid>/stat) ÷ completed runs",
  });
}

async function waitLatency(s) {
  const W = "stateless run-and-wait, echo, 1 conn";
  const samples = { ours: [], peer: [] };
  const errors = { ours: 0, peer: 0 };
  log(`${W}: warm-up`);
  for (const k of SIDES) {
    await latencyLoop({
      origin: s[k].origin,
      path: s[k].waitPath,
      body: s[k].waitBody,
      seconds: 1,
      maxRequests: 5000,
    });
  }
  // The peer answers in hundreds of ms at one connection: each phase gets at least 5 s, so its
  // p50 rests on a few dozen samples rather than a handful.
  const phase = Math.max(5, SECONDS / 2 / ROUNDS);
  for (let r = 0; r < ROUNDS; r++) {
    for (const k of SIDES) {
      log(`${W}: round ${r + 1}/${ROUNDS}, ${k}, ${phase} s`);
      const res = await latencyLoop({
        origin: s[k].origin,
        path: s[k].waitPath,
        body: s[k].waitBody,
        seconds: phase,
        maxRequests: MAX_REQUESTS,
      });
      samples[k].push(...res.samples);
      errors[k] += res.errors;
    }
  }
  const o = summarize(samples.ours);
  const p = summarize(samples.peer);
  row({
    workload: W,
    figure: "p50 latency",
    unit: "ms",
    better: "lower",
    ours: o.p50,
    peer: p.p50,
    notes: `one request at a time on one keep-alive connection; ours ${o.count} runs (${errors.ours} errors), p99 ${o.p99.toFixed(2)} ms; peer ${p.count} runs (${errors.peer} errors), p99 ${p.p99.toFixed(1)} ms`,
  });
}

async function timeToFirstEvent(s) {
  const W = "streamed run, echo";
  for (const connections of [1, 50]) {
    const samples = { ours: [], peer: [] };
    const data = { ours: [], peer: [] };
    const errors = { ours: 0, peer: 0 };
    log(`${W}: ${connections} client(s), warm-up`);
    const loop = (k, seconds, maxRequests) =>
      ttfeLoop({
        origin: s[k].origin,
        request: { path: s[k].streamPath, method: "POST", body: s[k].streamBody },
        match: s[k].eventNeedle,
        connections,
        seconds,
        maxRequests,
      });
    for (const k of SIDES) await loop(k, 1, 5000);
    const phase = Math.max(3, SECONDS / 4 / ROUNDS);
    for (let r = 0; r < ROUNDS; r++) {
      for (const k of SIDES) {
        log(`${W}: ${connections} client(s), round ${r + 1}/${ROUNDS}, ${k}, ${phase} s`);
        const res = await loop(k, phase, MAX_REQUESTS);
        samples[k].push(...res.samples);
        data[k].push(...res.dataSamples);
        errors[k] += res.errors;
      }
    }
    const o = summarize(samples.ours);
    const p = summarize(samples.peer);
    const od = summarize(data.ours);
    const pd = summarize(data.peer);
    row({
      workload: W,
      figure: `time to first agent event p50, ${connections} client${connections > 1 ? "s" : ""}`,
      unit: "ms",
      better: "lower",
      ours: o.p50,
      peer: p.p50,
      notes:
        `POST ${s.ours.streamPath}, timed from sending the request to the first frame the agent produced (ours: ${s.ours.firstEvent}; peer: the first \`event: custom\`, written by the graph's node); ` +
        `the first data line of any kind (the peer sends \`metadata\` first) came at p50 ${od.p50.toFixed(2)} ms (ours) / ${pd.p50.toFixed(2)} ms (peer); ` +
        `ours ${o.count} streams (${errors.ours} errors), peer ${p.count} (${errors.peer} errors)`,
    });
  }
}

async function customStream(s) {
  const W = `custom stream, ${STREAM_EVENTS.toLocaleString("en-US")}-event run, 1 client`;
  const one = async (k) => {
    const pool = new Pool(s[k].origin, { connections: 1, pipelining: 1 });
    try {
      const t0 = performance.now();
      const r = await readSse(
        pool,
        { path: s[k].streamPath, method: "POST", body: s[k].longBody },
        t0,
        {
          match: s[k].eventNeedle,
        },
      );
      if (r.customFrames !== STREAM_EVENTS) {
        throw new Error(`${k}: got ${r.customFrames} custom frames, expected ${STREAM_EVENTS}`);
      }
      return { eps: r.customFrames / (r.totalMs / 1000), ms: r.totalMs };
    } finally {
      await pool.close();
    }
  };
  // Warmed alternately for at least 2 s and 5 runs each, as bench/run.mjs's custom-stream row:
  // a fresh process's first runs are several times slower while V8 compiles the frame path.
  log(`${W}: warm-up`);
  const warmUntil = performance.now() + 2000;
  for (let n = 0; n < 5 || performance.now() < warmUntil; n++) {
    for (const k of SIDES) await one(k);
  }
  const rounds = Math.max(5, ROUNDS);
  const got = { ours: [], peer: [] };
  for (let r = 0; r < rounds; r++) {
    for (const k of SIDES) {
      log(`${W}: round ${r + 1}/${rounds}, ${k}`);
      got[k].push(await one(k));
    }
  }
  const median = (list) => [...list].sort((a, b) => a.eps - b.eps)[Math.floor(list.length / 2)];
  const o = median(got.ours);
  const p = median(got.peer);
  row({
    workload: W,
    figure: "events/s",
    unit: "/s",
    better: "higher",
    ours: o.eps,
    peer: p.eps,
    notes: `the same ${STREAM_EVENTS} AG-UI events (bench/lib/servers.mjs scriptEvents): ours replays them with the scripted adapter, the peer's one node writes each to the custom stream; POST /runs/stream, stream_mode custom, from request to last byte, median of ${rounds}: ${o.ms.toFixed(0)} ms (ours) / ${p.ms.toFixed(0)} ms (peer)`,
  });
}

const WORKLOADS = [
  { id: "wait-50", run: waitThroughput },
  { id: "wait-1", run: waitLatency },
  { id: "ttfe", run: timeToFirstEvent },
  // Through ACP only: the LangGraph face streams an agent's text as messages, not as custom
  // events, so the 10,000-event run has no equal on the peer there.
  { id: "custom-stream", run: customStream, faces: ["acp"] },
];

// ---------------------------------------------------------------------------------------------

async function main() {
  const installed = existsSync(PEER_VERSION_FILE) && existsSync(COPILOTKIT_VERSION_FILE);
  if (!installed && (ONLY.includes("langgraph") || ONLY.includes("copilotkit"))) {
    throw new Error(
      "the peers are not installed: run `npm install --prefix bench/peer` first (it installs @langchain/langgraph-api, @copilotkit/runtime and their packages into bench/peer/node_modules)",
    );
  }
  installCleanupHooks();
  const plan = pinningPlan();
  pinSelf(plan);
  const facts = machineFacts(plan);
  const versionOf = (file) =>
    existsSync(file) ? JSON.parse(readFileSync(file, "utf8")).version : "not installed";
  facts.peerVersion = versionOf(PEER_VERSION_FILE);
  facts.copilotkitVersion = versionOf(COPILOTKIT_VERSION_FILE);
  facts.build = ensureBuilt(log);
  process.stdout.write(`# acp-agui beside its peers: ${ONLY.join(", ")}\n`);
  const tmp = makeTempDir();
  const config = writeBenchConfig(tmp);
  const started = Date.now();
  if (ONLY.includes("langgraph")) await langgraphLane({ plan, tmp, config });
  if (ONLY.includes("copilotkit")) {
    const t0 = Date.now();
    const foreign = foreignLoad();
    log("== copilotkit conversations");
    await copilotkitConversations({ plan, tmp, row, log });
    workloadRuns.push({
      id: "copilotkit-conversations",
      seconds: (Date.now() - t0) / 1000,
      foreignLoad: foreign(),
    });
  }
  if (ONLY.includes("a2a")) {
    const t0 = Date.now();
    const foreign = foreignLoad();
    log("== a2a");
    const settings = { plan, tmp, log, seconds: SECONDS, rounds: ROUNDS };
    const lane = await a2aLane({ ...settings, configPath: config.path });
    a2aSection = lane.lines;
    a2aFigures = lane.figures;
    workloadRuns.push({ id: "a2a", seconds: (Date.now() - t0) / 1000, foreignLoad: foreign() });
  }
  printPeerReport({
    facts,
    rows,
    workloadRuns,
    settings: { seconds: SECONDS, rounds: ROUNDS, peerWorkers: PEER_WORKERS, only: ONLY },
    a2aSection,
  });
  process.stdout.write(`\ntotal time ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
  mkdirSync(RESULTS_DIR, { recursive: true });
  const out = join(RESULTS_DIR, "peer.json");
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), machine: facts, settings: { seconds: SECONDS, rounds: ROUNDS, peerWorkers: PEER_WORKERS, streamEvents: STREAM_EVENTS, only: ONLY }, rows, a2a: a2aFigures, workloads: workloadRuns }, null, 2)}\n`,
  );
  process.stdout.write(`results: ${out}\n`);
}

/** The LangGraph API server's workloads, both servers up at once. */
async function langgraphLane({ plan, tmp, config }) {
  const servers = [];
  try {
    const ours = await startOurs(plan, {
      tmp,
      configPath: config.path,
      db: join(tmp, "peer-lane.db"),
    });
    servers.push(ours);
    const peer = await startPeer(plan, tmp);
    servers.push(peer);
    const listPool = new Pool(ours.origin, { connections: 1 });
    const list = await jsonRequest(listPool, "POST", "/agents/search", {});
    await listPool.close();
    const agents = Object.fromEntries(
      list.map((a) => [a.metadata?.ref?.name ?? a.name, a.agent_id]),
    );
    const input = { messages: [userMessage] };
    /** What the peer gets, and our LangGraph face the same (a LangChain human message). */
    const lgInput = { messages: [{ type: "human", content: userMessage.content }] };
    const s = {
      ours: {
        origin: ours.origin,
        pid: ours.proc.pid,
        waitPath: "/runs/wait",
        waitUrl: `${ours.origin}/runs/wait`,
        streamPath: "/runs/stream",
        firstEvent: "the first custom frame of stream_mode custom",
        waitBody: JSON.stringify({ agent_id: agents.echo, input }),
        streamBody: JSON.stringify({ agent_id: agents.echo, input, stream_mode: ["custom"] }),
        longBody: JSON.stringify({
          agent_id: agents["stream-10k"],
          input: {},
          stream_mode: ["custom"],
        }),
        eventNeedle: Buffer.from('data: {"type":"custom"'),
      },
      peer: {
        origin: peer.origin,
        pid: peer.proc.pid,
        waitPath: "/runs/wait",
        waitUrl: `${peer.origin}/runs/wait`,
        waitBody: JSON.stringify({ assistant_id: "echo", input }),
        streamPath: "/runs/stream",
        streamBody: JSON.stringify({ assistant_id: "echo", input, stream_mode: ["custom"] }),
        longBody: JSON.stringify({ assistant_id: "stream", input: {}, stream_mode: ["custom"] }),
        eventNeedle: Buffer.from("event: custom\n"),
      },
    };
    // Both must answer what they are asked before anything is timed.
    const check = new Pool(ours.origin, { connections: 1 });
    const o = await jsonRequest(check, "POST", "/runs/wait", JSON.parse(s.ours.waitBody));
    await check.close();
    if (o?.run?.status !== "success")
      throw new Error(`ours: runs/wait answered ${JSON.stringify(o).slice(0, 300)}`);
    const checkPeer = new Pool(peer.origin, { connections: 1 });
    const p = await jsonRequest(checkPeer, "POST", "/runs/wait", JSON.parse(s.peer.waitBody));
    await checkPeer.close();
    if (p?.messages?.at(-1)?.content !== userMessage.content) {
      throw new Error(`peer: runs/wait answered ${JSON.stringify(p).slice(0, 300)}`);
    }
    // Ours through the LangGraph face: the peer's own requests, under /langgraph.
    const face = {
      ...s.ours,
      waitPath: "/langgraph/runs/wait",
      waitUrl: `${ours.origin}/langgraph/runs/wait`,
      waitBody: JSON.stringify({ assistant_id: "echo", input: lgInput }),
      streamPath: "/langgraph/runs/stream",
      streamBody: JSON.stringify({
        assistant_id: "echo",
        input: lgInput,
        stream_mode: ["messages-tuple"],
      }),
      firstEvent: "the first `event: messages` chunk of stream_mode messages-tuple",
      eventNeedle: Buffer.from("event: messages\n"),
    };
    const checkFace = new Pool(ours.origin, { connections: 1 });
    const f = await jsonRequest(checkFace, "POST", face.waitPath, JSON.parse(face.waitBody));
    await checkFace.close();
    if (f?.messages?.at(-1)?.content !== userMessage.content) {
      throw new Error(
        `ours (LangGraph face): runs/wait answered ${JSON.stringify(f).slice(0, 300)}`,
      );
    }
    const lanes = [
      { face: "acp", label: "", s },
      { face: "langgraph", label: "LangGraph face", s: { ...s, ours: face } },
    ].filter((l) => FACES.includes(l.face));
    for (const l of lanes) {
      lane = l.label;
      for (const w of WORKLOADS) {
        if (w.faces && !w.faces.includes(l.face)) continue;
        const id = l.label ? `${w.id} (${l.face})` : w.id;
        const t0 = Date.now();
        const foreign = foreignLoad();
        log(`== ${id}`);
        await w.run(l.s);
        const load = foreign();
        workloadRuns.push({ id, seconds: (Date.now() - t0) / 1000, foreignLoad: load });
        log(
          `== ${id} done in ${((Date.now() - t0) / 1000).toFixed(1)} s (other processes: ${Math.round(load * 100)} % of a core)`,
        );
        await sleep(200);
      }
    }
    lane = "";
  } finally {
    for (const srv of servers.reverse()) await srv.proc.stop();
  }
}

main().catch((err) => {
  process.stderr.write(`bench:peer: ${err?.stack ?? err}\n`);
  process.exit(1);
});
