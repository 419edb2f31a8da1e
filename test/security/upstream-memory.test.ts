/**
 * Several misbehaving upstreams at once (huge events, trickles, deep patches, floods; AG-UI
 * and A2A agents) against one server running as a real child process: its resident memory
 * stays within what the configured limits allow, /readyz keeps answering, and an unrelated
 * run keeps succeeding.
 *
 * The bound: each misbehaving run holds at most one event in the making and the state it
 * built, so the memory above the idle server's is at most
 *
 *   runs × EXPANSION × (maxEventBytes + maxStateBytes) + SLACK
 *
 * where EXPANSION (4) covers an event's bytes held as bytes, as text and as parsed objects
 * at once, and SLACK (96 MiB) the garbage V8 lets build up between collections, socket
 * buffers and the code the first runs load. Without the bounds one huge event alone (300 MB
 * here) would be read whole.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { api, killAll, startCli, workspace } from "../crash/cli.js";
import { HostileA2a } from "../helpers/hostile-a2a.js";
import { HostileUpstream } from "../helpers/hostile-upstream.js";

const MiB = 1024 * 1024;
const LIMITS = { maxEventBytes: 2 * MiB, maxStateBytes: 4 * MiB, maxEventsPerRun: 2000 };
const BAD = ["huge-event", "huge-line-no-newline", "trickle", "deep-patch", "flood"] as const;
/** The same against A2A agents (test/helpers/hostile-a2a.ts), read by the A2A SDK's client. */
const A2A_BAD = ["huge-event", "deep-data", "flood"] as const;
/** Runs of each misbehaving agent going at once. */
const WIDTH = 2;
const EXPANSION = 4;
const SLACK = 96 * MiB;
const LOAD_MS = 12_000;

function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = /^VmRSS:\s+(\d+) kB/m.exec(status);
  if (!kb) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kb[1]) * 1024;
}

const agentName = (name: string) => `bad-${name}`;
const a2aName = (name: string) => `bad-a2a-${name}`;

describe("memory with several misbehaving upstreams at once", () => {
  let upstream: HostileUpstream;
  let a2a: HostileA2a;
  beforeAll(async () => {
    upstream = await HostileUpstream.start();
    a2a = await HostileA2a.start();
  });
  afterAll(async () => {
    killAll();
    await upstream?.close();
    await a2a?.close();
  });

  it("stays within the limits' bound while /readyz answers and an echo run succeeds", async () => {
    const { configPath, db } = workspace({
      server: { limits: LIMITS, maxConcurrentRuns: 64, keepAliveSeconds: 0 },
      agents: [
        { name: "echo", version: "1.0.0", description: "unrelated", adapter: { type: "echo" } },
        ...BAD.map((name) => ({
          name: agentName(name),
          version: "1.0.0",
          description: `misbehaves: ${name}`,
          adapter: {
            type: "agui-http",
            url: `${upstream.url}/${name}`,
            idleTimeoutMs: name === "trickle" ? 1500 : 10_000,
          },
          limits: { runTimeoutSeconds: 20, maxConcurrentRuns: WIDTH },
        })),
        ...A2A_BAD.map((name) => ({
          name: a2aName(name),
          version: "1.0.0",
          description: `misbehaves over A2A: ${name}`,
          adapter: { type: "a2a", url: a2a.cardUrl(name), cardRefreshSeconds: 0 },
          limits: { runTimeoutSeconds: 20, maxConcurrentRuns: WIDTH },
        })),
      ],
    });
    const cli = startCli(["serve", "--config", configPath, "--port", "0", "--db", db]);
    const base = await cli.listening;
    const pid = cli.child.pid!;

    const run = (agent: string) =>
      api<{ run: { status: string }; output?: { description?: string } }>(
        base,
        "POST",
        "/runs/wait",
        {
          agent_id: agentIdFor(agent, "1.0.0"),
          input: { messages: [{ role: "user", content: "hi" }] },
        },
      );
    // Warm up: the idle server has loaded what a run needs, so the baseline is fair.
    expect((await run("echo")).body.run.status).toBe("success");
    const baseline = rssOf(pid);
    const bound =
      baseline +
      (BAD.length + A2A_BAD.length) *
        WIDTH *
        EXPANSION *
        (LIMITS.maxEventBytes + LIMITS.maxStateBytes) +
      SLACK;

    const until = Date.now() + LOAD_MS;
    const failures = new Map<string, string>();
    let badRuns = 0;
    const keepFailing = async (name: string) => {
      while (Date.now() < until) {
        const { body } = await run(name);
        badRuns++;
        expect(body.run.status, name).toBe("error");
        failures.set(name, body.output?.description ?? "");
      }
    };
    let peak = baseline;
    let probes = 0;
    let echoes = 0;
    const watch = async () => {
      while (Date.now() < until) {
        peak = Math.max(peak, rssOf(pid));
        const ready = await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2000) });
        expect(ready.status).toBe(200);
        probes++;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    };
    const echo = async () => {
      while (Date.now() < until) {
        const { body } = await run("echo");
        expect(body.run.status).toBe("success");
        echoes++;
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    };
    await Promise.all([
      ...[...BAD.map(agentName), ...A2A_BAD.map(a2aName)].flatMap((name) =>
        Array.from({ length: WIDTH }, () => keepFailing(name)),
      ),
      watch(),
      echo(),
    ]);
    peak = Math.max(peak, rssOf(pid));

    expect(failures.get(agentName("huge-event"))).toMatch(/maxEventBytes/);
    expect(failures.get(agentName("huge-line-no-newline"))).toMatch(/maxEventBytes/);
    expect(failures.get(agentName("trickle"))).toMatch(/idleTimeoutMs/);
    expect(failures.get(agentName("deep-patch"))).toMatch(/maxEventDepth/);
    expect(failures.get(agentName("flood"))).toMatch(/maxEventsPerRun/);
    expect(failures.get(a2aName("huge-event"))).toMatch(/maxEventBytes/);
    expect(failures.get(a2aName("deep-data"))).toMatch(/maxEventDepth/);
    expect(failures.get(a2aName("flood"))).toMatch(/maxEventsPerRun/);
    expect(badRuns).toBeGreaterThan((BAD.length + A2A_BAD.length) * WIDTH);
    expect(probes).toBeGreaterThan(0);
    expect(echoes).toBeGreaterThan(0);
    console.log(
      `RSS: baseline ${(baseline / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB, bound ${(bound / MiB).toFixed(0)} MiB; ${badRuns} bad runs, ${echoes} echo runs, ${probes} probes`,
    );
    expect(peak).toBeLessThan(bound);
    cli.child.kill("SIGTERM");
    await cli.exited;
  }, 60_000);
});
