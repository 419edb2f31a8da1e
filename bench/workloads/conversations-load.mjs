// The `conversations` workload's load generator, in a process of its own (pinned to the load
// CPU): N conversations, each a loop of streaming runs, the next opened as soon as the last
// ends, so N runs are open at any time. Conversations start spread evenly over `rampMs`;
// none starts a run after `seconds`, and the process waits for the runs in flight to end.
//
// Per run it times, from sending the request: the first token (time to first token) and every
// gap between consecutive tokens. A token is a TEXT_MESSAGE_CONTENT event, found by its type
// name in the bytes (the ACP custom frame, the AG-UI SSE event and the relay's frame all
// carry it once per token), so the client parses no JSON and stays cheap. Tokens that arrive in
// one read count as arriving together (gap 0). A run is an error when its status is not 200,
// the request fails, or it ends with another number of tokens than the agent sends.
//
// Input: one JSON argument {origin, path, body | copilotkit, n, seconds, rampMs, tokens}.
// `copilotkit: true` sends a fresh RunAgentInput (threadId, runId) per run instead of `body`.
// Output (stdout): `open K` lines (see below), then one JSON line of results.

import { Agent, request } from "undici";
import { newThreadRunBody } from "../lib/copilotkit-input.mjs";

const opts = JSON.parse(process.argv[2]);
const MARKER = Buffer.from("TEXT_MESSAGE_CONTENT");

function countMarker(buf, tail) {
  // `tail` is the end of the previous chunk (marker length − 1 bytes), so a marker split
  // across two reads is counted once.
  const hay = tail.length > 0 ? Buffer.concat([tail, buf]) : buf;
  let n = 0;
  let at = hay.indexOf(MARKER);
  while (at !== -1) {
    n += 1;
    at = hay.indexOf(MARKER, at + MARKER.length);
  }
  return { n, tail: hay.subarray(Math.max(0, hay.length - (MARKER.length - 1))) };
}

const dispatcher = new Agent({
  connections: null,
  pipelining: 1,
  headersTimeout: 60_000,
  bodyTimeout: 60_000,
  connectTimeout: 30_000,
});
const headers = { "content-type": "application/json", accept: "text/event-stream" };

function bodyFor() {
  return opts.copilotkit ? newThreadRunBody() : opts.body;
}

const ttft = [];
const gaps = [];
const errors = {};
let runs = 0;
let tokens = 0;
let open = 0;
let maxOpen = 0;
/** Runs whose response has started and not ended. */
let streaming = 0;
const fail = (kind) => {
  errors[kind] = (errors[kind] ?? 0) + 1;
};

async function oneRun() {
  const t0 = performance.now();
  open += 1;
  maxOpen = Math.max(maxOpen, open);
  let got = 0;
  let counted = false;
  try {
    const res = await request(`${opts.origin}${opts.path}`, {
      method: "POST",
      dispatcher,
      headers,
      body: bodyFor(),
    });
    if (res.statusCode !== 200) {
      fail(`HTTP ${res.statusCode}`);
      await res.body.dump();
      return;
    }
    streaming += 1;
    counted = true;
    let last = 0;
    let tail = Buffer.alloc(0);
    /** The start of a stream that has sent no token yet, to name the error if none comes. */
    let head = "";
    for await (const chunk of res.body) {
      const now = performance.now();
      if (got === 0 && head.length < 4096) head += chunk.toString("utf8");
      const found = countMarker(chunk, tail);
      tail = found.tail;
      if (found.n === 0) continue;
      if (got === 0) ttft.push(now - t0);
      else gaps.push(now - last);
      for (let k = 1; k < found.n; k++) gaps.push(0);
      got += found.n;
      last = now;
    }
    if (got !== opts.tokens) {
      // A run that failed says why in a RUN_ERROR event or an ACP error frame.
      const why = head.match(/"(?:message|error|description)":"([^"]{0,120})/)?.[1];
      fail(
        `${got} tokens instead of ${opts.tokens}${why ? ` (${why.replace(/[0-9a-f-]{36}/g, "…")})` : ""}`,
      );
    } else runs += 1;
  } catch (err) {
    fail(err?.code ?? err?.name ?? "error");
  } finally {
    tokens += got;
    open -= 1;
    if (counted) streaming -= 1;
  }
}

const started = performance.now();
const deadline = started + opts.seconds * 1000;

async function conversation(i) {
  await new Promise((r) => setTimeout(r, (opts.rampMs * i) / opts.n));
  while (performance.now() < deadline) await oneRun();
}

const all = Array.from({ length: opts.n }, (_, i) => conversation(i));
// From the end of the ramp (all N conversations started) to the end, an `open K` line every
// 250 ms: K runs are streaming (headers in, not ended). The bench reads the server's RSS as
// each arrives.
let reporter;
const ramped = setTimeout(() => {
  reporter = setInterval(() => process.stdout.write(`open ${streaming}\n`), 250);
}, opts.rampMs);
await Promise.all(all);
clearTimeout(ramped);
clearInterval(reporter);
const elapsed = (performance.now() - started) / 1000;

function summary(samples) {
  const sorted = Float64Array.from(samples).sort();
  const at = (p) =>
    sorted.length === 0
      ? null
      : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
  return { count: sorted.length, p50: at(50), p90: at(90), p99: at(99), max: at(100) };
}

const cpu = process.cpuUsage();
process.stdout.write(
  `${JSON.stringify({
    runs,
    tokens,
    errors,
    elapsed,
    maxOpen,
    ttft: summary(ttft),
    gap: summary(gaps),
    cpuMs: (cpu.user + cpu.system) / 1000,
  })}\n`,
);
await dispatcher.close();
