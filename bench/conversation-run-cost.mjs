#!/usr/bin/env node
// Server CPU per run of the `conversations` workload's two routes to the remote agent, at low
// load: the ACP stream (`POST /runs/stream`, stateless) and the CopilotKit route (`POST
// /copilotkit/agent/remote/run`, a new thread per run). The agent answers `tokens` tokens
// `delay` ms apart (default 1 token, no delay: the cost of a run around its tokens), `conc`
// runs in flight, `runs` timed runs after 100 warm-up ones, a fresh server per build, route and
// round. With other builds' CLIs, they alternate with this checkout's, round by round.
//
// Usage: node bench/conversation-run-cost.mjs [--other OTHER/dist/cli.js]... [--rounds 3]
//          [--runs 1000] [--conc 10] [--tokens 1] [--delay 0] [--routes acp,copilotkit]
//          [--prof DIR] (a --cpu-prof profile of each timed server, in DIR)
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { Pool } from "undici";
import { newThreadRunBody } from "./lib/copilotkit-input.mjs";
import { cpuTimeMs, installCleanupHooks, pinningPlan, pinSelf } from "./lib/proc.mjs";
import { makeTempDir, ROOT, startOurs } from "./lib/servers.mjs";
import { startHelper, writeConfig } from "./workloads/conversations.mjs";

const { values: args } = parseArgs({
  options: {
    other: { type: "string", multiple: true, default: [] },
    rounds: { type: "string", default: "3" },
    runs: { type: "string", default: "1000" },
    conc: { type: "string", default: "10" },
    tokens: { type: "string", default: "1" },
    delay: { type: "string", default: "0" },
    routes: { type: "string", default: "acp,copilotkit" },
    prof: { type: "string" },
  },
});
const ROUNDS = Number(args.rounds);
const RUNS = Number(args.runs);
const CONC = Number(args.conc);
const TOKENS = Number(args.tokens);
const routes = args.routes.split(",");
const builds = [
  ["this", join(ROOT, "dist", "cli.js")],
  ...args.other.map((cli, i) => [`other${i + 1}`, resolve(cli)]),
];

installCleanupHooks();
const plan = pinningPlan();
pinSelf(plan);
const tmp = makeTempDir();
const upstream = await startHelper(plan, tmp, "token-upstream.mjs", [], {
  onLoadCpu: true,
  ready: "/",
});
const configPath = writeConfig(
  tmp,
  `${upstream.origin}/agent?tokens=${TOKENS}&delay=${args.delay}`,
);
const headers = { "content-type": "application/json", accept: "text/event-stream" };
const acpBody = (agentId) =>
  JSON.stringify({
    agent_id: agentId,
    input: { messages: [{ role: "user", content: "hello from the benchmark" }] },
    stream_mode: ["custom"],
  });

async function remoteAgentId(pool) {
  const res = await pool.request({
    path: "/agents/search",
    method: "POST",
    headers: { "content-type": "application/json" },
    body: "{}",
  });
  const list = await res.body.json();
  return list.find((a) => (a.metadata?.ref?.name ?? a.name) === "remote").agent_id;
}

/** `count` runs, `CONC` at a time; throws on a run that is not 200 or lacks its tokens. */
async function load(pool, request, count) {
  let next = 0;
  const worker = async () => {
    while (next < count) {
      next += 1;
      const { path, body } = request();
      const res = await pool.request({ path, method: "POST", headers, body });
      const text = await res.body.text();
      const got = text.split("TEXT_MESSAGE_CONTENT").length - 1;
      if (res.statusCode !== 200 || got !== TOKENS)
        throw new Error(`HTTP ${res.statusCode}, ${got} tokens: ${text.slice(0, 300)}`);
    }
  };
  await Promise.all(Array.from({ length: CONC }, worker));
}

const results = {};
let fresh = 0;
for (let round = 0; round < ROUNDS; round++) {
  for (const route of routes) {
    for (const [name, cli] of builds) {
      const server = await startOurs(plan, {
        tmp,
        configPath,
        db: join(tmp, `cost-${++fresh}.db`),
        cli,
        nodeFlags: args.prof
          ? [
              "--cpu-prof",
              `--cpu-prof-dir=${args.prof}`,
              `--cpu-prof-name=${name}-${route}-${round + 1}.cpuprofile`,
            ]
          : [],
      });
      const pool = new Pool(server.origin, { connections: CONC });
      try {
        const agentId = await remoteAgentId(pool);
        const request =
          route === "acp"
            ? () => ({ path: "/runs/stream", body: acpBody(agentId) })
            : () => ({ path: "/copilotkit/agent/remote/run", body: newThreadRunBody() });
        await load(pool, request, 100);
        const cpu0 = cpuTimeMs(server.proc.pid);
        const t0 = performance.now();
        await load(pool, request, RUNS);
        const cpuPerRun = (cpuTimeMs(server.proc.pid) - cpu0) / RUNS;
        const wall = performance.now() - t0;
        const key = `${name} ${route}`;
        results[key] = [...(results[key] ?? []), cpuPerRun];
        process.stdout.write(
          `round ${round + 1} ${name} ${route}: ${cpuPerRun.toFixed(3)} cpu-ms/run, ${((RUNS / wall) * 1000).toFixed(0)} runs/s\n`,
        );
      } finally {
        await pool.close();
        await server.proc.stop();
      }
    }
  }
}
const median = (l) => [...l].sort((a, b) => a - b)[l.length >> 1];
for (const [key, list] of Object.entries(results))
  process.stdout.write(
    `${key}: median ${median(list).toFixed(3)} cpu-ms/run (${list.map((x) => x.toFixed(3)).join(", ")})\n`,
  );
await upstream.proc.stop();
