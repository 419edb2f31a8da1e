#!/usr/bin/env node
// `npm run bench:profile`: CPU profile of the server under the stateless `POST /runs/wait`
// workload (echo agent, 50 connections), taken with `node --cpu-prof` on the built CLI.
// Writes bench/results/runs-wait.cpuprofile (open it in Chrome DevTools → Performance, or
// VS Code) and bench/results/runs-wait.top.txt, and prints the top self-time functions, mapped
// back to src/*.ts through dist's source maps.
// BENCH_PROFILE_WORKLOAD=custom-stream profiles the `custom-1` row's workload instead: one
// client reading `POST /runs/stream` (stream_mode custom) of the 10,000-event run, one run after
// the other (files custom-stream.cpuprofile and custom-stream.top.txt).
// BENCH_PROFILE_WORKLOAD=wait-pg profiles the runs-wait workload on PostgreSQL (a fresh schema,
// dropped at the end; one replica), reached through a counting proxy so the statements and
// commits per run are printed beside the profile (files wait-pg.cpuprofile and wait-pg.top.txt).
//
// Environment: BENCH_PROFILE_SECONDS (default 10), BENCH_PROFILE_TOP (default 15),
// BENCH_PROFILE_WORKLOAD (runs-wait | custom-stream | wait-pg), BENCH_PROFILE_CONNECTIONS (50;
// with another count the runs-wait files are named runs-wait-c<N>), BENCH_NO_PIN, BENCH_SKIP_BUILD,
// BENCH_KEEP_TMP as for bench/run.mjs.
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { SourceMap } from "node:module";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { cannon, jsonRequest, Pool, readSse } from "./lib/http.mjs";
import {
  benchSchema,
  dropBenchSchemas,
  requirePostgres,
  startCountingProxy,
  viaProxy,
} from "./lib/postgres.mjs";
import { installCleanupHooks, pinningPlan, pinSelf } from "./lib/proc.mjs";
import {
  ensureBuilt,
  makeTempDir,
  RESULTS_DIR,
  ROOT,
  STREAM_EVENTS,
  startOurs,
  writeBenchConfig,
} from "./lib/servers.mjs";

const SECONDS = Math.max(2, Number(process.env.BENCH_PROFILE_SECONDS ?? 10));
const TOP = Math.max(5, Number(process.env.BENCH_PROFILE_TOP ?? 15));
const WORKLOAD = process.env.BENCH_PROFILE_WORKLOAD ?? "runs-wait";
/** Connections of the runs-wait workloads: 1 profiles a lone client's request (#44). */
const CONNECTIONS = Math.max(1, Number(process.env.BENCH_PROFILE_CONNECTIONS ?? 50));
const log = (msg) => process.stderr.write(`[profile] ${msg}\n`);

// ---------------------------------------------------------------------------------------------
// Reading a .cpuprofile: self time per function, source-mapped.

const maps = new Map();
function sourceMapFor(path) {
  if (maps.has(path)) return maps.get(path);
  let map = null;
  try {
    const mapPath = `${path}.map`;
    if (existsSync(mapPath)) map = new SourceMap(JSON.parse(readFileSync(mapPath, "utf8")));
  } catch {
    map = null;
  }
  maps.set(path, map);
  return map;
}

function describe(callFrame) {
  const { functionName, url, lineNumber, columnNumber } = callFrame;
  const name = functionName || "(anonymous)";
  if (!url) return { key: name, name, where: "" };
  let where = url;
  if (url.startsWith("file://")) {
    const path = fileURLToPath(url);
    where = relative(ROOT, path);
    const map = path.startsWith(join(ROOT, "dist")) ? sourceMapFor(path) : null;
    const entry =
      map && lineNumber >= 0 ? map.findEntry(lineNumber, Math.max(0, columnNumber)) : null;
    if (entry?.originalSource) {
      const src = entry.originalSource.startsWith("file://")
        ? fileURLToPath(entry.originalSource)
        : join(dirname(path), entry.originalSource);
      where = `${relative(ROOT, src)}:${entry.originalLine + 1}`;
      return { key: `${name}@${where}`, name, where };
    }
  }
  where = `${where}:${lineNumber + 1}`;
  return { key: `${name}@${where}`, name, where };
}

function areaOf(where) {
  if (where === "") return "(V8/native: GC, program, microtasks, writev…)";
  if (where.startsWith("node:")) return "node internals";
  const m =
    where.match(/^(src\/[^/]+(?:\/sqlite)?)\//) ??
    where.match(/^node_modules\/((?:@[^/]+\/)?[^/]+)\//);
  if (m) return where.startsWith("node_modules") ? `node_modules/${m[1]}` : m[1];
  return where.split(":")[0];
}

export function topSelfTime(profile, top) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  const selfUs = new Map();
  const { samples, timeDeltas } = profile;
  for (let i = 0; i < samples.length; i++) {
    // timeDeltas[i] is the time before sample i; attribute the next delta to sample i.
    const dt = timeDeltas[i + 1] ?? 0;
    selfUs.set(samples[i], (selfUs.get(samples[i]) ?? 0) + dt);
  }
  const agg = new Map();
  const areas = new Map();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (!node) continue;
    if (node.callFrame.functionName === "(idle)") {
      idle += us;
      continue;
    }
    total += us;
    const d = describe(node.callFrame);
    const entry = agg.get(d.key) ?? { name: d.name, where: d.where, us: 0, callers: new Map() };
    entry.us += us;
    const parent = byId.get(parentOf.get(id));
    if (parent) {
      const p = describe(parent.callFrame);
      const label = `${p.name}  ${p.where}`;
      entry.callers.set(label, (entry.callers.get(label) ?? 0) + us);
    }
    agg.set(d.key, entry);
    const area = areaOf(d.where);
    areas.set(area, (areas.get(area) ?? 0) + us);
  }
  const list = [...agg.values()].sort((a, b) => b.us - a.us);
  return {
    busyMs: total / 1000,
    idleMs: idle / 1000,
    top: list.slice(0, top).map((e) => ({
      name: e.name,
      where: e.where,
      ms: e.us / 1000,
      pct: (100 * e.us) / total,
      callers: [...e.callers.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([label, us]) => ({ label, pct: (100 * us) / e.us })),
    })),
    areas: [...areas.entries()]
      .sort((a, b) => b[1] - a[1])
      .map(([area, us]) => ({ area, ms: us / 1000, pct: (100 * us) / total })),
  };
}

function report(profile, title) {
  const { busyMs, idleMs, top, areas } = topSelfTime(profile, TOP);
  const lines = [
    title,
    `busy ${Math.round(busyMs)} ms, idle ${Math.round(idleMs)} ms (includes start-up and shutdown)`,
    "",
    `top ${TOP} functions by self time (% of non-idle samples):`,
    ...top.map(
      (e, i) =>
        `${String(i + 1).padStart(2)}. ${e.pct.toFixed(1).padStart(5)} %  ${e.ms.toFixed(0).padStart(6)} ms  ${e.name}  ${e.where}`,
    ),
    "",
    "callers of the top 5 (share of that function's self time):",
    ...top
      .slice(0, 5)
      .flatMap((e, i) => [
        `${String(i + 1).padStart(2)}. ${e.name}  ${e.where}`,
        ...e.callers.map((c) => `      ${c.pct.toFixed(0).padStart(3)} %  ← ${c.label}`),
      ]),
    "",
    "self time by area (top 12):",
    ...areas
      .slice(0, 12)
      .map(
        (a) => `  ${a.pct.toFixed(1).padStart(5)} %  ${a.ms.toFixed(0).padStart(6)} ms  ${a.area}`,
      ),
  ];
  return `${lines.join("\n")}\n`;
}

// ---------------------------------------------------------------------------------------------

async function main() {
  // `node bench/profile.mjs --analyze FILE.cpuprofile`: only print the summary of a profile.
  const analyze = process.argv.indexOf("--analyze");
  if (analyze !== -1) {
    const file = process.argv[analyze + 1];
    process.stdout.write(report(JSON.parse(readFileSync(file, "utf8")), `profile: ${file}`));
    return;
  }
  installCleanupHooks();
  const plan = pinningPlan();
  pinSelf(plan);
  log(`pinning: ${plan.applied ? "applied" : "not applied"} (${plan.reason})`);
  log(`build: ${ensureBuilt(log)}`);
  const tmp = makeTempDir();
  const config = writeBenchConfig(tmp);
  const profDir = join(tmp, "prof");
  mkdirSync(profDir, { recursive: true });
  let db = join(tmp, "profile.db");
  let proxy = null;
  if (WORKLOAD === "wait-pg") {
    await requirePostgres();
    proxy = await startCountingProxy();
    db = viaProxy(benchSchema("profile"), proxy.port);
  }
  const ours = await startOurs(plan, {
    tmp,
    configPath: config.path,
    db,
    nodeFlags: ["--cpu-prof", "--cpu-prof-dir", profDir, "--cpu-prof-name", "server.cpuprofile"],
  });
  let title;
  try {
    const pool = new Pool(ours.origin, { connections: 1 });
    const agents = await jsonRequest(pool, "POST", "/agents/search", {});
    await pool.close();
    const agentId = (name) =>
      agents.find((a) => (a.metadata?.ref?.name ?? a.name) === name).agent_id;
    title =
      WORKLOAD === "custom-stream"
        ? await customStream(ours.origin, agentId("stream-10k"))
        : await runsWait(ours.origin, agentId("echo"), proxy);
  } finally {
    // SIGTERM → the CLI closes and exits, and node writes the profile on exit.
    await ours.proc.stop(20_000);
    await proxy?.close();
    await dropBenchSchemas();
  }
  const file = join(profDir, "server.cpuprofile");
  if (!existsSync(file)) {
    throw new Error(
      `no profile written (${readdirSync(profDir).join(", ") || "empty dir"}):\n${ours.proc.output}`,
    );
  }
  mkdirSync(RESULTS_DIR, { recursive: true });
  const name = CONNECTIONS === 50 ? WORKLOAD : `${WORKLOAD}-c${CONNECTIONS}`;
  const dest = join(RESULTS_DIR, `${name}.cpuprofile`);
  rmSync(dest, { force: true });
  renameSync(file, dest);
  const profile = JSON.parse(readFileSync(dest, "utf8"));
  const text = report(profile, `${title}\nprofile: ${relative(ROOT, dest)}`);
  writeFileSync(join(RESULTS_DIR, `${name}.top.txt`), text);
  process.stdout.write(text);
}

/**
 * 50 connections on stateless `POST /runs/wait` (echo); returns the profile's title. With a
 * counting proxy (PostgreSQL), the statements and commits of the measured seconds per run too.
 */
async function runsWait(origin, echo, proxy = null) {
  const body = JSON.stringify({
    agent_id: echo,
    input: { messages: [{ role: "user", content: "hello from the benchmark" }] },
  });
  log(`POST /runs/wait, ${CONNECTIONS} connections, 1 s warm-up + ${SECONDS} s`);
  await cannon({ url: `${origin}/runs/wait`, connections: CONNECTIONS, seconds: 1, body });
  const before = proxy?.snapshot();
  const result = await cannon({
    url: `${origin}/runs/wait`,
    connections: CONNECTIONS,
    seconds: SECONDS,
    body,
  });
  log(
    `${result.ok} runs, ${Math.round(result.rps)} runs/s (${result.non2xx + result.errors} non-2xx/errors)`,
  );
  let wire = "";
  if (proxy !== null) {
    const after = proxy.snapshot();
    const per = (key) => ((after[key] - before[key]) / Math.max(1, result.ok)).toFixed(2);
    const tags = Object.entries(after.byTag)
      .map(([tag, n]) => [tag, (n - (before.byTag[tag] ?? 0)) / Math.max(1, result.ok)])
      .filter(([, n]) => n > 0)
      .map(([tag, n]) => `${tag} ${n.toFixed(2)}`)
      .join(", ");
    wire = `\nper run on the wire: ${per("statements")} statements (${tags}), ${per("commits")} commits (${per("writeCommits")} that wrote)`;
    log(wire.trim());
  }
  const where = proxy === null ? "" : " on PostgreSQL (1 replica)";
  return `CPU profile of the server${where}, POST /runs/wait (echo, ${CONNECTIONS} connections, ${SECONDS} s + 1 s warm-up): ${result.ok} runs, ${Math.round(result.rps)} runs/s${wire}`;
}

/** One client, `POST /runs/stream` of the scripted run, back to back; returns the title. */
async function customStream(origin, agentId) {
  const pool = new Pool(origin, { connections: 1, pipelining: 1 });
  const request = {
    path: "/runs/stream",
    method: "POST",
    body: JSON.stringify({ agent_id: agentId, input: {}, stream_mode: ["custom"] }),
  };
  log(`POST /runs/stream (${STREAM_EVENTS} events), 1 client, 1 s warm-up + ${SECONDS} s`);
  const loop = async (seconds) => {
    const deadline = performance.now() + seconds * 1000;
    let runs = 0;
    let ms = 0;
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const r = await readSse(pool, request, t0);
      if (r.customFrames !== STREAM_EVENTS) throw new Error(`got ${r.customFrames} custom frames`);
      runs += 1;
      ms += r.totalMs;
    }
    return { runs, eps: (runs * STREAM_EVENTS) / (ms / 1000) };
  };
  try {
    await loop(1);
    const { runs, eps } = await loop(SECONDS);
    log(`${runs} runs, ${Math.round(eps)} events/s`);
    return `CPU profile of the server, POST /runs/stream custom (${STREAM_EVENTS} events, 1 client, ${SECONDS} s + 1 s warm-up): ${runs} runs, ${Math.round(eps)} events/s`;
  } finally {
    await pool.close();
  }
}

main().catch((err) => {
  process.stderr.write(`profile: ${err?.stack ?? err}\n`);
  process.exit(1);
});
