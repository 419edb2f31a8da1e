// Starting the server under test (the built CLI, as a user runs it) and the ceiling server,
// plus the bench's temporary directory, config and scripted 10k-event run.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort, spawnNode, waitReady } from "./proc.mjs";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");
export const BENCH_DIR = join(ROOT, "bench");
export const RESULTS_DIR = join(BENCH_DIR, "results");
/** The server under test: this checkout's build, or another's (BENCH_CLI) to compare two
 * builds with the same bench code, one run after the other. */
const CLI = process.env.BENCH_CLI ? resolve(process.env.BENCH_CLI) : join(ROOT, "dist", "cli.js");

function newestMtime(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(path));
    else newest = Math.max(newest, statSync(path).mtimeMs);
  }
  return newest;
}

/**
 * Builds the server (`npm run build`) when dist/cli.js is missing or older than a file under
 * src/. Returns a note for the results. When the build fails but tsc still emitted dist/ (a
 * type error somewhere in work in progress), the bench goes on with the emitted JavaScript and
 * says so, unless BENCH_STRICT_BUILD=1.
 */
export function ensureBuilt(log) {
  if (process.env.BENCH_CLI) {
    if (!existsSync(CLI)) throw new Error(`BENCH_CLI=${CLI} does not exist (build that checkout)`);
    return `BENCH_CLI=${CLI} (not rebuilt)`;
  }
  if (process.env.BENCH_SKIP_BUILD === "1") {
    if (!existsSync(CLI)) throw new Error("BENCH_SKIP_BUILD=1 but dist/cli.js does not exist");
    return "skipped (BENCH_SKIP_BUILD=1)";
  }
  const srcNewest = newestMtime(join(ROOT, "src"));
  if (existsSync(CLI) && statSync(CLI).mtimeMs >= srcNewest) return "dist/ up to date";
  log("building: dist/ is missing or older than src/ → npm run build");
  const build = spawnSync("npm", ["run", "build"], {
    cwd: ROOT,
    stdio: ["ignore", "inherit", "inherit"],
  });
  if (build.status === 0) return "rebuilt (npm run build)";
  if (process.env.BENCH_STRICT_BUILD === "1" || !existsSync(CLI)) {
    throw new Error(`npm run build failed (exit ${build.status})`);
  }
  // tsc emits despite type errors; the copy step after it did not run.
  execFileSync(process.execPath, [join(ROOT, "scripts", "copy-assets.mjs")], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "inherit"],
  });
  log("WARNING: npm run build failed; benchmarking the JavaScript tsc emitted anyway");
  return `npm run build FAILED (exit ${build.status}, e.g. a type error in work in progress); benchmarked the JavaScript tsc emitted anyway`;
}

/** The temporary directory for databases, config, scripts and logs; removed at exit. */
export function makeTempDir() {
  const dir = mkdtempSync(join(tmpdir(), "acp-bench-"));
  process.on("exit", () => {
    if (process.env.BENCH_KEEP_TMP === "1") return;
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // best effort
    }
  });
  return dir;
}

export const STREAM_EVENTS = Number(process.env.BENCH_STREAM_EVENTS ?? 10_000);

/**
 * A scripted AG-UI run of exactly `total` events: RUN_STARTED, a STATE_SNAPSHOT, then text
 * messages (start, 8 content deltas, end) each followed by a STATE_DELTA, padded with content
 * of one last message, then RUN_FINISHED.
 */
export function scriptEvents(total) {
  const events = [{ type: "RUN_STARTED", threadId: "thread", runId: "run" }];
  events.push({ type: "STATE_SNAPSHOT", snapshot: { count: 0, phase: "streaming" } });
  let i = 0;
  // Each group is 11 events; stop while a whole group and the RUN_FINISHED still fit.
  while (events.length + 11 + 1 <= total) {
    const id = `msg-${i}`;
    events.push({ type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" });
    for (let k = 0; k < 8; k++) {
      events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: id, delta: `token ${k} of ${i} ` });
    }
    events.push({ type: "TEXT_MESSAGE_END", messageId: id });
    events.push({ type: "STATE_DELTA", delta: [{ op: "replace", path: "/count", value: i }] });
    i += 1;
  }
  // Fill up to total - 1 with one more message (start, contents, end): needs at least 3.
  const left = total - 1 - events.length;
  if (left >= 3) {
    const id = `msg-${i}`;
    events.push({ type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" });
    for (let k = 0; k < left - 2; k++) {
      events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: id, delta: `tail ${k} ` });
    }
    events.push({ type: "TEXT_MESSAGE_END", messageId: id });
  } else {
    for (let k = 0; k < left; k++) {
      events.push({ type: "CUSTOM", name: "pad", value: k });
    }
  }
  events.push({ type: "RUN_FINISHED", threadId: "thread", runId: "run" });
  return events;
}

/** Writes the bench config (echo, scripted demo, the 10k-event scripted run) into `dir`. */
export function writeBenchConfig(dir) {
  const script = scriptEvents(STREAM_EVENTS);
  writeFileSync(join(dir, "stream-10k.json"), JSON.stringify(script));
  const config = `# Generated by bench/run.mjs
server:
  keepAliveSeconds: 15
  maxConcurrentRuns: 64
  webhooks: { allowPrivateTargets: false }
agents:
  - name: echo
    version: 1.0.0
    description: Streams back the last user message (no delay).
    adapter: { type: echo, delayMs: 0 }
    limits: { runTimeoutSeconds: 600, maxConcurrentRuns: 64, maxQueuedRuns: 5000 }
  - name: scripted-demo
    version: 1.0.0
    description: The sample config's recorded run, without delays.
    adapter:
      type: scripted
      delayMs: 0
      script:
        - { type: RUN_STARTED, threadId: thread, runId: run }
        - { type: STATE_SNAPSHOT, snapshot: { city: Lisbon, forecast: null } }
        - { type: TEXT_MESSAGE_START, messageId: msg-1, role: assistant }
        - { type: TEXT_MESSAGE_CONTENT, messageId: msg-1, delta: "Let me check the weather " }
        - { type: TEXT_MESSAGE_CONTENT, messageId: msg-1, delta: "in Lisbon." }
        - { type: TEXT_MESSAGE_END, messageId: msg-1 }
        - { type: TOOL_CALL_START, toolCallId: call-1, toolCallName: get_weather, parentMessageId: msg-1 }
        - { type: TOOL_CALL_ARGS, toolCallId: call-1, delta: '{"city":"Lisbon"}' }
        - { type: TOOL_CALL_END, toolCallId: call-1 }
        - { type: TOOL_CALL_RESULT, messageId: msg-2, toolCallId: call-1, content: '{"temperature":21}' }
        - { type: RUN_FINISHED, threadId: thread, runId: run }
    limits: { runTimeoutSeconds: 600, maxConcurrentRuns: 64, maxQueuedRuns: 5000 }
  - name: stream-10k
    version: 1.0.0
    description: Replays a scripted run of ${script.length} AG-UI events (text messages and state deltas).
    adapter: { type: scripted, script: ./stream-10k.json, delayMs: 0 }
    limits: { runTimeoutSeconds: 600, maxConcurrentRuns: 64, maxQueuedRuns: 1000 }
`;
  const path = join(dir, "bench.yaml");
  writeFileSync(path, config);
  return { path, scriptEvents: script.length };
}

let instance = 0;

/**
 * Starts `node dist/cli.js serve` on a fresh port with the given SQLite file, pinned to the
 * server CPU, `--log-level warn`, `--grace 0`. `nodeFlags` go before the script (--cpu-prof…).
 */
export async function startOurs(plan, { tmp, configPath, db, nodeFlags = [], env, cli = CLI }) {
  const port = await freePort();
  const name = `acp-${++instance}`;
  const proc = spawnNode(
    plan,
    [
      ...nodeFlags,
      cli,
      "serve",
      "--config",
      configPath,
      "--db",
      db,
      "--host",
      "127.0.0.1",
      "--port",
      String(port),
      "--log-level",
      "warn",
      "--grace",
      "0",
    ],
    { logFile: join(tmp, `${name}.log`), cwd: tmp, env },
  );
  const origin = `http://127.0.0.1:${port}`;
  await waitReady(proc, `${origin}/readyz`);
  return { proc, origin, port, name };
}

/** Starts the bare-Fastify ceiling server, pinned like ours. */
export async function startCeiling(plan, { tmp }) {
  const port = await freePort();
  const name = `ceiling-${++instance}`;
  const proc = spawnNode(plan, [join(BENCH_DIR, "ceiling-server.mjs"), "--port", String(port)], {
    logFile: join(tmp, `${name}.log`),
    cwd: ROOT,
  });
  const origin = `http://127.0.0.1:${port}`;
  await waitReady(proc, `${origin}/healthz`);
  return { proc, origin, port, name };
}
