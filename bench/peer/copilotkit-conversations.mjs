// The peer lane's `conversations` row: our CopilotKit route beside CopilotKit's own runtime
// (copilotkit-server.mjs: `CopilotRuntime` with its in-memory runner), the same remote agent
// behind both (the token upstream of bench/workloads/token-upstream.mjs: ours reads it with
// `agui-http`, CopilotKit's with `HttpAgent`), the same load (bench/workloads/conversations-load.mjs:
// N conversations, each a loop of runs of TOKENS tokens DELAY ms apart, a new thread per run)
// on `POST /copilotkit/agent/remote/run` of each. Alternately per level (ours, peer, ours…),
// each phase on a fresh server, warmed up; figures as the main bench's conversations rows.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { BENCH_DIR, startOurs } from "../lib/servers.mjs";
import {
  CONV,
  combine,
  describe,
  phase,
  startHelper,
  writeConfig,
} from "../workloads/conversations.mjs";

const PEER_SERVER = join(BENCH_DIR, "peer", "copilotkit-server.mjs");
export const COPILOTKIT_VERSION_FILE = join(
  BENCH_DIR,
  "peer",
  "node_modules",
  "@copilotkit",
  "runtime",
  "package.json",
);
const LEVELS = (process.env.BENCH_PEER_CONV_LEVELS ?? "100,1000")
  .split(",")
  .map((s) => Number(s.trim()))
  .filter((n) => n > 0);

export async function copilotkitConversations({ plan, tmp, row, log }) {
  if (!existsSync(COPILOTKIT_VERSION_FILE)) {
    throw new Error("CopilotKit's runtime is not installed: npm install --prefix bench/peer");
  }
  const ctx = { plan, tmp };
  const query = `tokens=${CONV.TOKENS}&delay=${CONV.DELAY_MS}`;
  const upstream = await startHelper(plan, tmp, "token-upstream.mjs", [], {
    onLoadCpu: true,
    ready: "/",
  });
  let fresh = 0;
  try {
    const upstreamUrl = `${upstream.origin}/agent?${query}`;
    const configPath = writeConfig(tmp, upstreamUrl);
    const start = {
      ours: () =>
        startOurs(plan, { tmp, configPath, db: join(tmp, `copilotkit-peer-${++fresh}.db`) }),
      peer: () =>
        startHelper(plan, tmp, PEER_SERVER, ["--upstream", upstreamUrl], {
          onLoadCpu: false,
          ready: "/healthz",
          env: { COPILOTKIT_TELEMETRY_DISABLED: "true" },
        }),
    };
    const measure = async (side, n, round) => {
      const server = await start[side]();
      try {
        const target = {
          server: { pid: server.proc.pid, origin: server.origin },
          upstream: upstream.proc,
          path: "/copilotkit/agent/remote/run",
          copilotkit: true,
        };
        const w = await phase(ctx, { ...target, ...CONV.WARMUP });
        if (w.errorCount > 0) throw new Error(`warm-up of ${side}: ${JSON.stringify(w.errors)}`);
        log(`copilotkit conversations: ${n}, ${side}, round ${round + 1}/${CONV.ROUNDS}`);
        return await phase(ctx, { ...target, n, seconds: CONV.PHASE_SECONDS });
      } finally {
        await server.proc.stop();
      }
    };
    for (const n of LEVELS) {
      const got = { ours: [], peer: [] };
      for (let i = 0; i < CONV.ROUNDS; i++) {
        for (const side of ["ours", "peer"]) got[side].push(await measure(side, n, i));
      }
      const o = combine(got.ours);
      const p = combine(got.peer);
      const W = `${n.toLocaleString("en-US")} conversations, CopilotKit route, remote agent`;
      const figures = [
        ["tokens/s", "/s", (x) => x.tokensPerSecond, "higher"],
        ["time to first token p50", "ms", (x) => x.ttft.p50, "lower"],
        ["time to first token p99", "ms", (x) => x.ttft.p99, "lower"],
        ["server CPU per 1,000 tokens", "cpu-ms", (x) => x.cpuPer1k, "lower"],
        ["RSS per open conversation", "bytes", (x) => x.rssPerConversation, "lower"],
        ["errors", "count", (x) => x.errorCount, "lower"],
      ];
      for (const [figure, unit, pick, better] of figures) {
        row({
          workload: W,
          figure,
          unit,
          ours: pick(o),
          peer: pick(p),
          better,
          notes:
            figure === "tokens/s"
              ? `peer: CopilotKit runtime ${JSON.parse(readFileSync(COPILOTKIT_VERSION_FILE, "utf8")).version}, InMemoryAgentRunner, HttpAgent. Ours: ${describe(o)}. Peer: ${describe(p)}`
              : "",
        });
      }
    }
  } finally {
    await upstream.proc.stop();
  }
}
