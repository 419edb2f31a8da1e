// Load-generating clients. Throughput runs use autocannon; latency, time-to-first-event and
// SSE delivery use small undici loops that time each request with performance.now() (autocannon's
// latency histogram has 1 ms resolution, too coarse for sub-millisecond figures).
// Every loop is bounded both in time and in request count.
import autocannon from "autocannon";
import { Client, Pool } from "undici";

const JSON_HEADERS = { "content-type": "application/json" };

export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export function summarize(samples) {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const s of sorted) sum += s;
  return {
    count: sorted.length,
    mean: sorted.length ? sum / sorted.length : Number.NaN,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length ? sorted[sorted.length - 1] : Number.NaN,
  };
}

/** autocannon for `seconds` with `connections` keep-alive connections; counts only 2xx as done. */
export async function cannon({ url, connections, seconds, method = "POST", body }) {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    method,
    headers: body === undefined ? {} : JSON_HEADERS,
    body,
    timeout: 10,
  });
  const ok = result["2xx"] ?? 0;
  return {
    ok,
    non2xx: result.non2xx ?? 0,
    errors: result.errors ?? 0,
    timeouts: result.timeouts ?? 0,
    seconds: result.duration,
    rps: ok / result.duration,
    latencyP50: result.latency?.p50,
    latencyP99: result.latency?.p99,
  };
}

/**
 * One keep-alive connection, one request at a time, for `seconds` or `maxRequests`, whichever
 * comes first. Returns per-request latencies in ms.
 */
export async function latencyLoop({ origin, path, method = "POST", body, seconds, maxRequests }) {
  const client = new Client(origin, { pipelining: 1 });
  const samples = [];
  let errors = 0;
  const deadline = performance.now() + seconds * 1000;
  try {
    while (samples.length + errors < maxRequests && performance.now() < deadline) {
      const t0 = performance.now();
      try {
        const res = await client.request({
          path,
          method,
          headers: body === undefined ? {} : JSON_HEADERS,
          body,
        });
        await res.body.arrayBuffer();
        if (res.statusCode >= 200 && res.statusCode < 300) samples.push(performance.now() - t0);
        else errors += 1;
      } catch {
        errors += 1;
      }
    }
  } finally {
    await client.close().catch(() => {});
  }
  return { samples, errors };
}

const DATA = Buffer.from("\ndata: ");
const CUSTOM = Buffer.from('data: {"type":"custom"');

/** Counts `needle` in a stream of chunks without missing matches that straddle two chunks. */
class Counter {
  constructor(needle) {
    this.needle = needle;
    this.carry = null;
    this.count = 0;
  }
  /** Returns true when this chunk completed at least one match. */
  feed(chunk) {
    const buf = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    let found = false;
    let i = buf.indexOf(this.needle);
    while (i !== -1) {
      this.count += 1;
      found = true;
      i = buf.indexOf(this.needle, i + this.needle.length);
    }
    const keep = this.needle.length - 1;
    this.carry = buf.length > keep ? buf.subarray(buf.length - keep) : buf;
    return found;
  }
}

/**
 * Reads one SSE response to its end. `t0` is when the request was sent. Returns the status, the
 * time to the first `data:` line (ms), the time to the end, and frame counts (all frames /
 * `custom` frames, i.e. AG-UI events). `match` names the frames counted as `customFrames` (ours:
 * `data: {"type":"custom"`; another server's framing can be given) and `matchMs` is the time to
 * the first of them.
 */
export async function readSse(
  dispatcher,
  { path, method = "GET", body, headers = {} },
  t0,
  { match = CUSTOM } = {},
) {
  const res = await dispatcher.request({
    path,
    method,
    headers: body === undefined ? headers : { ...JSON_HEADERS, ...headers },
    body,
  });
  if (res.statusCode !== 200) {
    const text = await res.body.text();
    throw new Error(`${method} ${path}: HTTP ${res.statusCode} ${text.slice(0, 300)}`);
  }
  const frames = new Counter(DATA);
  const custom = new Counter(match);
  let firstData = null;
  let firstMatch = null;
  let bytes = 0;
  for await (const chunk of res.body) {
    bytes += chunk.length;
    const hit = frames.feed(chunk);
    const matched = custom.feed(chunk);
    if (firstData === null && hit) firstData = performance.now();
    if (firstMatch === null && matched) firstMatch = performance.now();
  }
  const end = performance.now();
  return {
    ttfeMs: firstData === null ? Number.NaN : firstData - t0,
    matchMs: firstMatch === null ? Number.NaN : firstMatch - t0,
    firstDataAt: firstData,
    endAt: end,
    totalMs: end - t0,
    frames: frames.count,
    customFrames: custom.count,
    bytes,
    headers: res.headers,
  };
}

/**
 * `connections` clients, each opening SSE streams one after the other for `seconds` (at most
 * `maxRequests` in all), timing the first `data:` byte of each, or with `match` the first frame
 * that matches (see readSse); `dataSamples` always holds the first `data:` byte's times.
 */
export async function ttfeLoop({ origin, request, connections, seconds, maxRequests, match }) {
  const pool = new Pool(origin, { connections, pipelining: 1 });
  const samples = [];
  const dataSamples = [];
  let errors = 0;
  let started = 0;
  const deadline = performance.now() + seconds * 1000;
  const worker = async () => {
    while (started < maxRequests && performance.now() < deadline) {
      started += 1;
      const t0 = performance.now();
      try {
        const r = await readSse(pool, request, t0, match ? { match } : {});
        const ms = match ? r.matchMs : r.ttfeMs;
        if (Number.isFinite(ms)) {
          samples.push(ms);
          dataSamples.push(r.ttfeMs);
        } else errors += 1;
      } catch {
        errors += 1;
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: connections }, worker));
  } finally {
    await pool.close().catch(() => {});
  }
  return { samples, dataSamples, errors };
}

/**
 * Opens `paths.length` SSE streams concurrently (at most `parallel` connection attempts at a
 * time) and keeps them open. Resolves once every stream has its response headers.
 */
export async function openIdleStreams(origin, paths, { parallel = 100, timeoutMs = 60_000 } = {}) {
  const pool = new Pool(origin, {
    connections: paths.length + 10,
    pipelining: 1,
    bodyTimeout: 0,
    headersTimeout: timeoutMs,
  });
  const bodies = [];
  let failures = 0;
  let next = 0;
  const opener = async () => {
    while (next < paths.length) {
      const path = paths[next++];
      try {
        const res = await pool.request({ path, method: "GET" });
        if (res.statusCode !== 200) {
          failures += 1;
          await res.body.dump();
          continue;
        }
        res.body.on("error", () => {});
        res.body.resume();
        bodies.push(res.body);
      } catch {
        failures += 1;
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, opener));
  return {
    open: bodies.length,
    failures,
    async close() {
      for (const b of bodies) b.destroy();
      await pool.destroy().catch(() => {});
    },
  };
}

/** A JSON request; throws on a non-2xx answer. */
export async function jsonRequest(dispatcher, method, path, body) {
  const res = await dispatcher.request({
    path,
    method,
    headers: body === undefined ? {} : JSON_HEADERS,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.body.text();
  if (res.statusCode < 200 || res.statusCode >= 300) {
    throw new Error(`${method} ${path}: HTTP ${res.statusCode} ${text.slice(0, 300)}`);
  }
  return text === "" ? null : JSON.parse(text);
}

export { Client, Pool };
