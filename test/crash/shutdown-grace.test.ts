import { randomBytes } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { openSse } from "../helpers/sse.js";
import { progressScript } from "../runs/helpers.js";
import { dropSchema, PG_URL, requirePostgres } from "../scale/replicas.js";
import { api, eventually, killAll, startCli, workspace } from "./cli.js";

afterEach(killAll);

// ~20 s of events: every run outlasts the default grace period (10 s).
const config = {
  server: { keepAliveSeconds: 0 },
  agents: [
    {
      name: "slow",
      version: "1.0.0",
      description: "outlasts the grace period",
      adapter: { type: "scripted", script: progressScript(80), delayMs: 250 },
      limits: { runTimeoutSeconds: 0 },
    },
  ],
};
const agentId = agentIdFor("slow", "1.0.0");
const SHUT_DOWN = "the server shut down while the run was executing";
type RunOutput = { run: { status: string }; output?: { errcode?: number; description?: string } };

/**
 * SIGTERM with runs that outlast the default grace period, on `db`: one streamed, one created
 * and left (`POST /runs`), one whose creator waits (`/runs/wait`). The process exits 0, the
 * streams end with the shutdown's final frame, and the next start reads every run as ended.
 */
async function stopsWell(db: string, signal: "SIGTERM" | "SIGINT") {
  const { configPath } = workspace(config);
  const args = ["serve", "--config", configPath, "--port", "0", "--db", db];
  const cli = startCli(args);
  const base = await cli.listening;

  const streamed = await openSse(base, "/runs/stream", {
    body: { agent_id: agentId, input: {}, on_completion: "keep" },
  });
  await streamed.frame(1);
  const left = (
    await api<{ run_id: string }>(base, "POST", "/runs", {
      agent_id: agentId,
      input: {},
      on_completion: "keep",
    })
  ).body;
  const waited = fetch(`${base}/runs/wait`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ agent_id: agentId, input: {}, on_completion: "keep" }),
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as RunOutput }));
  await eventually(
    async () => (await api<unknown[]>(base, "POST", "/runs/search", { status: "pending" })).body,
    (pending) => pending.length === 3,
    10_000,
    "three runs executing",
  );

  cli.child.kill(signal);
  await streamed.ended;
  expect(streamed.frames.at(-1)!.data).toMatchObject({
    status: "error",
    output: { errcode: 503, description: SHUT_DOWN },
  });
  const answered = await waited;
  expect(answered.status).toBe(200);
  expect(answered.body).toMatchObject({
    run: { status: "error" },
    output: { description: SHUT_DOWN },
  });
  expect(await cli.exited).toBe(0);
  expect(cli.logs().filter((l) => l.level === 50)).toEqual([]);

  // Stored as ended: the next start does not find them interrupted by a restart.
  const next = startCli(args);
  const base2 = await next.listening;
  const streamedId = (streamed.frames[0]!.data as { run_id: string }).run_id;
  for (const runId of [streamedId, left.run_id]) {
    const run = await api<RunOutput>(base2, "GET", `/runs/${runId}/wait`);
    expect(run.body, runId).toMatchObject({
      run: { status: "error" },
      output: { description: SHUT_DOWN },
    });
  }
  next.child.kill("SIGTERM");
  expect(await next.exited).toBe(0);
}

describe("a stop that cuts runs short", () => {
  it("SIGTERM on SQLite: exit 0, every run stored as ended by the shutdown", async () => {
    await stopsWell(workspace({}).db, "SIGTERM");
  }, 60_000);

  it("SIGINT (Ctrl-C) on SQLite: the same", async () => {
    await stopsWell(workspace({}).db, "SIGINT");
  }, 60_000);

  describe("on PostgreSQL", () => {
    beforeAll(requirePostgres);
    it("SIGTERM: exit 0, every run stored as ended by the shutdown", async () => {
      const schema = `acp_test_${randomBytes(6).toString("hex")}`;
      try {
        await stopsWell(`${PG_URL}?schema=${schema}`, "SIGTERM");
      } finally {
        await dropSchema(schema);
      }
    }, 60_000);
  });

  it("a second signal stops at once, saying so", async () => {
    const { configPath, db } = workspace(config);
    const cli = startCli(["serve", "--config", configPath, "--port", "0", "--db", db]);
    const base = await cli.listening;
    const streamed = await openSse(base, "/runs/stream", {
      body: { agent_id: agentId, input: {}, on_completion: "keep" },
    });
    await streamed.frame(1);
    const signalled = Date.now();
    cli.child.kill("SIGTERM");
    await eventually(
      async () => cli.logs().some((l) => l.msg === "shutting down"),
      (seen) => seen,
      5_000,
      "the shutdown to begin",
    );
    cli.child.kill("SIGINT");
    expect(await cli.exited).toBe(1);
    // Well before the grace period's end.
    expect(Date.now() - signalled).toBeLessThan(8_000);
    expect(cli.logs().some((l) => String(l.msg).includes("second signal"))).toBe(true);
  }, 30_000);
});
