// Workload `mcp-call`: MCP `tools/call` of the echo agent at 50 connections in one session, by
// our server (each call a run: stored, executed, answered) and by the MCP SDK's own server with
// an equivalent echo tool (bench/workloads/mcp-sdk-echo-server.mjs: the same SDK transport and
// server, no runs), interleaved (ours, SDK; again), each pinned to the server CPU. Figures:
// calls per second and server CPU per call; the ratio says what a run costs over the protocol.
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import autocannon from "autocannon";
import { cpuTimeMs, freePort, spawnNode, waitReady } from "../lib/proc.mjs";
import { startOurs } from "../lib/servers.mjs";

const CONNECTIONS = 50;
const SDK_SERVER = fileURLToPath(new URL("./mcp-sdk-echo-server.mjs", import.meta.url));
const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** Opens a session (initialize, initialized): the headers every call of it sends. */
async function openSession(url) {
  const response = await fetch(url, {
    method: "POST",
    headers: HEADERS,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities: {},
        clientInfo: { name: "bench", version: "1" },
      },
    }),
  });
  await response.text();
  const session = response.headers.get("mcp-session-id");
  if (!session) throw new Error(`${url}: initialize answered ${response.status} without a session`);
  const headers = { ...HEADERS, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25" };
  await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  }).then((r) => r.text());
  return headers;
}

/** One call, checked: the echo's text must come back. */
async function sanityCall(url, headers) {
  const response = await fetch(url, {
    method: "POST",
    headers,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: "check",
      method: "tools/call",
      params: { name: "echo", arguments: { message: "bench" } },
    }),
  });
  const text = await response.text();
  if (!text.includes('"text":"bench"'))
    throw new Error(`${url}: tools/call sanity check: ${text.slice(0, 300)}`);
}

let callId = 0;
/** A call with an id of its own: a session answers each id once, so ids must not repeat. */
const nextCall = () =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: ++callId,
    method: "tools/call",
    params: { name: "echo", arguments: { message: "hello" } },
  });

async function calls(url, headers, seconds) {
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    duration: seconds,
    method: "POST",
    headers,
    requests: [{ setupRequest: (request) => ({ ...request, body: nextCall() }) }],
    timeout: 10,
  });
  const ok = result["2xx"] ?? 0;
  return {
    ok,
    bad: (result.non2xx ?? 0) + result.errors + result.timeouts,
    seconds: result.duration,
  };
}

export async function mcpCall(kit) {
  const { ctx, row, log, SECONDS, ROUNDS, WARMUP_SECONDS } = kit;
  const W = `MCP tools/call, echo, ${CONNECTIONS} conn, one session`;
  const ours = await startOurs(ctx.plan, {
    tmp: ctx.tmp,
    configPath: ctx.config.path,
    db: join(ctx.tmp, "mcp-call.db"),
  });
  const port = await freePort();
  const sdkProc = spawnNode(ctx.plan, [SDK_SERVER, "--port", String(port)], {
    logFile: join(ctx.tmp, "mcp-sdk-echo.log"),
  });
  try {
    const sdkOrigin = `http://127.0.0.1:${port}`;
    await waitReady(sdkProc, `${sdkOrigin}/healthz`);
    const sides = {
      ours: { url: `${ours.origin}/mcp`, pid: ours.proc.pid },
      sdk: { url: `${sdkOrigin}/mcp`, pid: sdkProc.pid },
    };
    for (const side of Object.values(sides)) {
      side.headers = await openSession(side.url);
      await sanityCall(side.url, side.headers);
    }
    log(`${W}: warm-up`);
    for (const side of Object.values(sides)) await calls(side.url, side.headers, WARMUP_SECONDS);
    const acc = {
      ours: { ok: 0, bad: 0, seconds: 0, cpu: 0 },
      sdk: { ok: 0, bad: 0, seconds: 0, cpu: 0 },
    };
    const phase = Math.max(1, Math.round(SECONDS / ROUNDS));
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of Object.keys(sides)) {
        log(`${W}: round ${r + 1}/${ROUNDS}, ${name}, ${phase} s`);
        const side = sides[name];
        const cpu0 = cpuTimeMs(side.pid);
        const res = await calls(side.url, side.headers, phase);
        const a = acc[name];
        a.cpu += cpuTimeMs(side.pid) - cpu0;
        a.ok += res.ok;
        a.bad += res.bad;
        a.seconds += res.seconds;
      }
    }
    const rps = (a) => a.ok / a.seconds;
    const cpuPerCall = (a) => (a.ok > 0 ? a.cpu / a.ok : Number.NaN);
    const notes =
      `ours: ${acc.ours.ok} calls in ${acc.ours.seconds.toFixed(1)} s (${acc.ours.bad} non-2xx/errors), each a stored run of the echo agent; ` +
      `SDK server: ${acc.sdk.ok} calls in ${acc.sdk.seconds.toFixed(1)} s (${acc.sdk.bad} non-2xx/errors), an in-memory echo`;
    row({
      id: "mcp-call",
      workload: W,
      figure: "calls/s",
      unit: "/s",
      ours: rps(acc.ours),
      baseline: rps(acc.sdk),
      baselineLabel: "MCP SDK server calls/s",
      target: "report",
      met: null,
      notes,
    });
    row({
      id: "mcp-call-cpu",
      workload: W,
      figure: "server CPU per call",
      unit: "ms",
      ours: cpuPerCall(acc.ours),
      baseline: cpuPerCall(acc.sdk),
      baselineLabel: "MCP SDK server CPU ms/call",
      target: "report",
      met: null,
      notes,
    });
  } finally {
    await sdkProc.stop();
    await ours.proc.stop();
  }
}
