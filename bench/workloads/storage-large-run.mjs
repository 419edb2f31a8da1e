// Workload `storage`: what one large run costs the server, as a ratio to the content its agent
// produced. A scripted agent streams BENCH_STORAGE_MB (default 10) MB of prose-like text as 200-character
// TEXT_MESSAGE_CONTENT events (10 MB = 50,000 events) in one assistant message, on the SQLite
// default, and a fresh server measures each case:
//
// - `wait`: one stateless POST /runs/wait; stored bytes (the database's pages in use after the
//   run, minus before: what the run keeps, not the WAL's transient copies) and peak RSS above
//   idle (VmHWM − VmRSS at rest, the peak reset through clear_refs at rest), and the seconds it took;
//   then the same `wait` again, and its peak above the RSS the first run left (warm: V8's
//   young generation grown, the compilers' code paged in, as on a server that has been busy);
// - `warm`: a fresh server that first answers 300 short runs, so that its idle RSS is that of a
//   server which has been serving (compilers warm, young generation grown), then the `wait`;
// - `stream`: the same run created in the background, with a values+custom stream open on it
//   and a `wait` beside it: peak RSS above idle.
//
// BENCH_STORAGE_BASELINE_CLI=<another checkout>/dist/cli.js measures that build too, in the same
// run, as the baseline column (e.g. the commit before values frames were stored as deltas).
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import Database from "better-sqlite3";
import { freePort, rssBytes, spawnNode, waitReady } from "../lib/proc.mjs";
import { ROOT } from "../lib/servers.mjs";

const MB = 1024 * 1024;
const CONTENT_MB = Math.max(1, Number(process.env.BENCH_STORAGE_MB ?? 10));
const DELTA_CHARS = 200;
/** Short runs that warm a server up before the `warm` case measures its idle RSS. */
const WARM_RUNS = 300;

/**
 * The deltas: words drawn from a fixed list by a seeded generator, 200 characters each. Text
 * that compresses about as prose does (3 to 1 with DEFLATE), where one repeated letter would
 * compress a thousand to one and flatter whatever is stored packed.
 */
function* deltas(count) {
  const words = (
    "the a an agent answer streams long text of and to in is that it for on with as " +
    "model tool call result message thread run value state output server client protocol " +
    "event frame store memory disk bytes page write read each every one two three many"
  ).split(" ");
  let state = 20261201;
  for (let i = 0; i < count; i++) {
    let delta = "";
    while (delta.length < DELTA_CHARS) {
      state = (Math.imul(state, 1103515245) + 12345) >>> 0;
      delta += `${words[(state >>> 8) % words.length]} `;
    }
    yield delta.slice(0, DELTA_CHARS);
  }
}

function writeScript(dir) {
  const count = Math.round((CONTENT_MB * 1_000_000) / DELTA_CHARS);
  const events = [
    { type: "RUN_STARTED", threadId: "t", runId: "r" },
    { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
  ];
  for (const delta of deltas(count)) {
    events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta });
  }
  events.push({ type: "TEXT_MESSAGE_END", messageId: "m1" });
  events.push({ type: "RUN_FINISHED", threadId: "t", runId: "r" });
  writeFileSync(join(dir, "storage-large.json"), JSON.stringify(events));
  const config = `agents:
  - name: large
    version: 1.0.0
    description: Streams ${CONTENT_MB} MB of text in one message.
    adapter: { type: scripted, script: ./storage-large.json }
    limits: { runTimeoutSeconds: 600 }
  - name: small
    version: 1.0.0
    description: A short answer, to warm the server up.
    adapter: { type: scripted, script: ./storage-small.json }
`;
  // The same run cut short: its start, 20 events, its end.
  const small = [...events.slice(0, 22), ...events.slice(-2)];
  writeFileSync(join(dir, "storage-small.json"), JSON.stringify(small));
  const path = join(dir, "storage-large.yaml");
  writeFileSync(path, config);
  return { path, content: count * DELTA_CHARS };
}

function hwmBytes(pid) {
  const m = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmHWM:\s*(\d+) kB/m);
  return m ? Number(m[1]) * 1024 : Number.NaN;
}

/** Bytes of the database's pages in use (page_count − freelist_count, the WAL included). */
function dbBytes(dir, name) {
  const db = new Database(join(dir, name), { readonly: true, fileMustExist: true });
  try {
    const pages = db.pragma("page_count", { simple: true });
    const free = db.pragma("freelist_count", { simple: true });
    return (pages - free) * db.pragma("page_size", { simple: true });
  } finally {
    db.close();
  }
}

async function json(origin, method, path, body) {
  const res = await fetch(`${origin}${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${await res.text()}`);
  return res.json();
}

/**
 * Reads an SSE response to its end, counting bytes in all and by kind of frame (custom, values,
 * the final values frame: the last), without keeping the frames.
 */
async function drain(res) {
  const kinds = { custom: 0, values: 0, final: 0, frames: { custom: 0, values: 0 } };
  let bytes = 0;
  /** Bytes of the frame being read, and its first bytes (enough to tell its type). */
  let frameBytes = 0;
  let head = "";
  let last = null;
  const close = () => {
    const kind = head.includes('data: {"type":"values"') ? "values" : "custom";
    kinds[kind] += frameBytes;
    kinds.frames[kind] += 1;
    last = { kind, bytes: frameBytes };
    frameBytes = 0;
    head = "";
  };
  /** The previous chunk ended with a line break: a frame may end at this chunk's first byte. */
  let lineBreak = false;
  for await (const chunk of res.body) {
    bytes += chunk.length;
    // Searched as bytes (a view, no copy), so that the client reads about as fast as one that
    // only counts: a slower reader makes the server hold more.
    const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length);
    let from = 0;
    if (lineBreak && buf[0] === 10) {
      frameBytes += 1;
      close();
      from = 1;
    }
    for (;;) {
      const at = buf.indexOf("\n\n", from, "latin1");
      if (at < 0) break;
      if (head.length < 64) head += buf.toString("latin1", from, Math.min(at, from + 64));
      frameBytes += at + 2 - from;
      close();
      from = at + 2;
    }
    if (head.length < 64) head += buf.toString("latin1", from, Math.min(buf.length, from + 64));
    frameBytes += buf.length - from;
    lineBreak = buf.length > 0 && buf[buf.length - 1] === 10;
  }
  if (last?.kind === "values") {
    kinds.values -= last.bytes;
    kinds.frames.values -= 1;
    kinds.final = last.bytes;
  }
  return { bytes, kinds };
}

function checkOutput(output, config, what) {
  if (output.run.status !== "success") throw new Error(`${what}: ${output.run.status}`);
  const last = output.output?.messages?.at(-1)?.content;
  const text = typeof last === "string" ? last : last?.[0]?.text;
  if (text?.length !== config.content) throw new Error(`${what}: output incomplete`);
}

async function measure(ctx, cli, label, mode, config) {
  const name = `storage-${label}-${mode}.db`;
  const port = await freePort();
  const proc = spawnNode(
    ctx.plan,
    [
      cli,
      "serve",
      "--config",
      config.path,
      "--db",
      join(ctx.tmp, name),
      "--port",
      String(port),
    ].concat(["--host", "127.0.0.1", "--log-level", "warn", "--grace", "0"]),
    { logFile: join(ctx.tmp, `storage-${label}-${mode}.log`), cwd: ctx.tmp },
  );
  const origin = `http://127.0.0.1:${port}`;
  try {
    await waitReady(proc, `${origin}/readyz`);
    const [agent] = await json(origin, "POST", "/agents/search", { name: "large" });
    let warmUp = Number.NaN;
    if (mode === "warm") {
      // A server that has been serving: short runs first, then at rest. What the short runs
      // alone raised the fresh server's peak by is reported beside it.
      await sleep(500);
      const fresh = rssBytes(proc.pid);
      const [small] = await json(origin, "POST", "/agents/search", { name: "small" });
      const input = { messages: [{ role: "user", content: "go" }] };
      for (let i = 0; i < WARM_RUNS; i++) {
        await json(origin, "POST", "/runs/wait", { agent_id: small.agent_id, input });
      }
      warmUp = hwmBytes(proc.pid) - fresh;
    }
    await sleep(500);
    const idle = rssBytes(proc.pid);
    // The peak from here on: start-up's (and the warm-up's) own peak is not the run's.
    writeFileSync(`/proc/${proc.pid}/clear_refs`, "5");
    const before = dbBytes(ctx.tmp, name);
    const body = {
      agent_id: agent.agent_id,
      input: { messages: [{ role: "user", content: "go" }] },
    };
    const t0 = performance.now();
    let output;
    let streamed = 0;
    let streamedKinds = null;
    if (mode !== "stream") {
      output = await json(origin, "POST", "/runs/wait", body);
    } else {
      const run = await json(origin, "POST", "/runs", {
        ...body,
        stream_mode: ["values", "custom"],
      });
      const stream = fetch(`${origin}/runs/${run.run_id}/stream`).then(drain);
      output = await json(origin, "GET", `/runs/${run.run_id}/wait`);
      ({ bytes: streamed, kinds: streamedKinds } = await stream);
    }
    const seconds = (performance.now() - t0) / 1000;
    checkOutput(output, config, `${label} ${mode}`);
    await sleep(500);
    const measured = {
      seconds,
      peakAboveIdle: hwmBytes(proc.pid) - idle,
      stored: dbBytes(ctx.tmp, name) - before,
      streamed,
      streamedKinds,
      warmPeak: Number.NaN,
      warmUp,
    };
    if (mode === "wait") {
      // The same run again on the now warm process: its peak above the RSS it rests at after
      // the first (the peak is reset through clear_refs), what each further large run costs.
      const rest = rssBytes(proc.pid);
      writeFileSync(`/proc/${proc.pid}/clear_refs`, "5");
      checkOutput(await json(origin, "POST", "/runs/wait", body), config, `${label} second wait`);
      measured.warmPeak = hwmBytes(proc.pid) - rest;
    }
    return measured;
  } finally {
    await proc.stop();
  }
}

const CASES = {
  wait: "wait",
  warm: `wait, idle measured after ${WARM_RUNS} short runs`,
  stream: "wait + values stream",
};

export async function storageLargeRun({ ctx, row, log }) {
  const config = writeScript(ctx.tmp);
  const content = config.content;
  const baselineCli = process.env.BENCH_STORAGE_BASELINE_CLI;
  // The server under test is the one every workload measures: BENCH_CLI's build, when given.
  const ours = process.env.BENCH_CLI
    ? resolve(process.env.BENCH_CLI)
    : join(ROOT, "dist", "cli.js");
  const sides = [["ours", ours]];
  if (baselineCli) sides.push(["baseline", baselineCli]);
  const results = {};
  for (const mode of ["wait", "warm", "stream"]) {
    for (const [label, cli] of sides) {
      log(`storage: ${label}, ${mode}`);
      results[`${label}-${mode}`] = await measure(ctx, cli, label, mode, config);
    }
  }
  const mb = (bytes) => `${(bytes / MB).toFixed(1)} MB`;
  const ratio = (bytes) => bytes / content;
  for (const mode of ["wait", "warm", "stream"]) {
    const ours = results[`ours-${mode}`];
    const base = results[`baseline-${mode}`];
    const facts = (r) =>
      `${mb(r.stored)} stored, peak ${mb(r.peakAboveIdle)} above idle, ${r.seconds.toFixed(1)} s` +
      (r.streamed
        ? `, ${mb(r.streamed)} streamed (${r.streamedKinds.frames.custom} custom frames ${mb(r.streamedKinds.custom)}, ` +
          `${r.streamedKinds.frames.values} values frames ${mb(r.streamedKinds.values)}, the final frame ${mb(r.streamedKinds.final)})`
        : "") +
      (Number.isNaN(r.warmPeak)
        ? ""
        : `; the same run again peaks ${mb(r.warmPeak)} above the RSS the first left`) +
      (Number.isNaN(r.warmUp)
        ? ""
        : `; the ${WARM_RUNS} short runs alone peaked ${mb(r.warmUp)} above the fresh idle`);
    const notes =
      `${CONTENT_MB} MB of text content (${content / 200} × 200-char TEXT_MESSAGE_CONTENT), SQLite; ours: ${facts(ours)}` +
      (base ? `; baseline (${baselineCli}): ${facts(base)}` : "");
    /** A row of ours beside the baseline build's, both as ratios to the content. */
    const ratioRow = (id, figure, key, target, met) =>
      row({
        id,
        workload: "storage",
        figure,
        unit: "×",
        ours: ratio(ours[key]),
        baseline: base ? ratio(base[key]) : Number.NaN,
        baselineLabel: base ? "baseline build" : null,
        ratio: base ? ours[key] / base[key] : null,
        target,
        met: met === null ? null : met(ratio(ours[key])),
        notes,
      });
    if (mode === "wait") {
      ratioRow(
        "storage-bytes",
        "stored bytes per run ÷ content",
        "stored",
        "≤ 2× (+ per frame)",
        (r) => r <= 2.5,
      );
      ratioRow(
        "storage-rss-again",
        "peak RSS above rest ÷ content (the same wait again)",
        "warmPeak",
        "—",
        null,
      );
    }
    if (mode === "stream") {
      ratioRow(
        "storage-streamed",
        "values stream bytes ÷ content (values + custom)",
        "streamed",
        "≤ 3×",
        (r) => r <= 3,
      );
    }
    ratioRow(
      `storage-rss-${mode}`,
      `peak RSS above idle ÷ content (${CASES[mode]})`,
      "peakAboveIdle",
      "≤ 3×",
      (r) => r <= 3,
    );
  }
}
