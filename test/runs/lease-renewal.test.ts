import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { agentId, buildWith, type Json, post, slowScript, tempDbFile } from "./helpers.js";

// Lease renewals write only once a run has held its lease a while: past half the lease less one
// renewal interval (a third of the lease, a second at the least). Short runs never get there, so
// they cost no renewal write; a long run is renewed before half its lease has gone.

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A server whose storage counts the renewal calls the engine makes. */
async function countingRenewals(leaseSeconds: number, agents: Parameters<typeof buildWith>[0]) {
  const t = await buildWith(agents, { settings: { leaseSeconds, database: tempDbFile() } });
  const counter = { renewals: 0 };
  const renew = t.storage.renewLeases.bind(t.storage);
  t.storage.renewLeases = (...args) => {
    counter.renewals++;
    return renew(...args);
  };
  return { t, counter };
}

describe("lease renewals, 6 s lease (renewed every 2 s once held for 1 s)", () => {
  let t: TestApp;
  let counter: { renewals: number };
  beforeAll(async () => {
    // 5 events 40 ms apart: about 0.2 s, well inside the 1 s.
    ({ t, counter } = await countingRenewals(6, [
      { name: "quick", script: slowScript(1), delayMs: 40 },
    ]));
  });
  afterAll(() => t?.close());

  it("write nothing while every run executing is younger than its renewal", async () => {
    // Two clients one after the other's start: a run is executing at every tick.
    const until = Date.now() + 4_500; // two renewal ticks at least
    let runs = 0;
    const client = async () => {
      while (Date.now() < until) {
        const wait = await post(t, "/runs/wait", { agent_id: agentId("quick"), input: {} });
        expect((wait.run as Json).status).toBe("success");
        runs++;
      }
    };
    await Promise.all([client(), sleep(100).then(client)]);
    expect(runs).toBeGreaterThan(10);
    expect(counter.renewals).toBe(0);
  });
});

describe("lease renewals, 3 s lease (renewed every second once held for 0.5 s)", () => {
  const LEASE_MS = 3_000;
  let t: TestApp;
  let counter: { renewals: number };
  beforeAll(async () => {
    // 43 events 100 ms apart: about 4.3 s, past the lease.
    ({ t, counter } = await countingRenewals(LEASE_MS / 1000, [
      { name: "slow", script: slowScript(20), delayMs: 100 },
    ]));
  });
  afterAll(() => t?.close());

  it("keep a run that outlives its lease held, with half its lease left at the least", async () => {
    const run = await post(t, "/runs", { agent_id: agentId("slow"), input: {} });
    const runId = run.run_id as string;
    const leaseEnds = new Set<string>();
    let leastLeft = Number.POSITIVE_INFINITY;
    const started = Date.now();
    // Longer than the lease: without renewals it would lapse in here.
    while (Date.now() - started < LEASE_MS + 700) {
      const stored = await t.storage.getRun(runId);
      expect(stored?.status).toBe("pending");
      expect(stored?.lease_expires_at).not.toBeNull();
      leastLeft = Math.min(leastLeft, Date.parse(stored?.lease_expires_at as string) - Date.now());
      leaseEnds.add(stored?.lease_expires_at as string);
      await sleep(50);
    }
    expect(counter.renewals).toBeGreaterThan(0);
    expect(leaseEnds.size).toBeGreaterThan(1);
    // Half the lease (1.5 s), less slack for timers on a busy machine.
    expect(leastLeft).toBeGreaterThan(LEASE_MS / 2 - 500);
    const wait = await t.call("GET", `/runs/${runId}/wait`);
    expect((wait.body as { run: Json }).run.status).toBe("success");
  });
});
