import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { agentId, buildWith, type Json, post, slowScript, tempDbFile } from "./helpers.js";

// Lease renewals write only for runs that have held their lease a while. A 6 s lease is renewed
// every 2 s (a third of it), and a run is due once it has held its lease longer than half the
// lease less an interval (1 s): short runs never are, so they cost no renewal write.

const LEASE_SECONDS = 6;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let t: TestApp;
let renewals = 0;

beforeAll(async () => {
  t = await buildWith(
    [
      // 5 events 40 ms apart: about 0.2 s, well inside the 1 s.
      { name: "quick", script: slowScript(1), delayMs: 40 },
      // 43 events 100 ms apart: about 4.3 s, past the 1 s and two renewal ticks.
      { name: "slow", script: slowScript(20), delayMs: 100 },
    ],
    { settings: { leaseSeconds: LEASE_SECONDS, database: tempDbFile() } },
  );
  const renew = t.storage.renewLeases.bind(t.storage);
  t.storage.renewLeases = (...args) => {
    renewals++;
    return renew(...args);
  };
});
afterAll(() => t?.close());

describe("lease renewals", () => {
  it("write nothing while every run executing is younger than its renewal", async () => {
    renewals = 0;
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
    expect(renewals).toBe(0);
  });

  it("keep renewing a long run's lease, which never lapses", async () => {
    renewals = 0;
    const run = await post(t, "/runs", { agent_id: agentId("slow"), input: {} });
    const runId = run.run_id as string;
    const leaseEnds = new Set<string>();
    const started = Date.now();
    while (Date.now() - started < 3_500) {
      const stored = await t.storage.getRun(runId);
      expect(stored?.status).toBe("pending");
      expect(stored?.lease_expires_at).not.toBeNull();
      expect(Date.parse(stored?.lease_expires_at as string)).toBeGreaterThan(Date.now());
      leaseEnds.add(stored?.lease_expires_at as string);
      await sleep(100);
    }
    expect(renewals).toBeGreaterThan(0);
    expect(leaseEnds.size).toBeGreaterThan(1);
    const wait = await t.call("GET", `/runs/${runId}/wait`);
    expect((wait.body as { run: Json }).run.status).toBe("success");
  });
});
