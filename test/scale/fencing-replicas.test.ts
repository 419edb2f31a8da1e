/**
 * Fenced writes with real replicas (CLI processes) on one PostgreSQL schema: the replica
 * executing a run is stopped (SIGSTOP) past its lease, the other takes the run over and
 * finishes it, and then the stalled one resumes (SIGCONT). Its late writes are refused: the
 * run's outcome and frames stay the survivor's, and the stalled replica says it lost the claim
 * and stays up.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  dropSchema,
  json,
  PG_URL,
  query,
  type Replica,
  requirePostgres,
  slowEvents,
  startReplica,
  until,
  writeConfig,
} from "./replicas.js";

const LEASE_SECONDS = 1;
const STEPS = 30;
const events = slowEvents(STEPS);
// retryOnRestart: the replica taking the run over runs it again from the start.
const CONFIG = `
server:
  keepAliveSeconds: 0
  leaseSeconds: ${LEASE_SECONDS}
agents:
  - name: slow
    version: 1.0.0
    description: Streams slowly, safe to run again.
    retryOnRestart: true
    adapter: { type: scripted, delayMs: 100, script: ${JSON.stringify(events)} }
`;

interface RunRow {
  status: string;
  owner: string | null;
  output: unknown;
  last_seq: number;
  lease_epoch: number;
  updated_at: Date;
}

describe("a replica stalled past its lease", () => {
  const schema = `acp_fence_${randomBytes(4).toString("hex")}`;
  const databaseUrl = `${PG_URL}?schema=${schema}`;
  let replicas: Replica[] = [];
  let agentId = "";

  beforeAll(async () => {
    await requirePostgres();
    const config = writeConfig(CONFIG);
    replicas = await Promise.all(["A", "B"].map((name) => startReplica(name, config, databaseUrl)));
    const list = (await json(`${replicas[0]!.url}/agents/search`, "POST", {})).body as Array<{
      agent_id: string;
    }>;
    agentId = list[0]!.agent_id;
  }, 60_000);

  afterAll(async () => {
    for (const replica of replicas) {
      replica.child.kill("SIGCONT");
      replica.child.kill("SIGKILL");
    }
    await Promise.all(replicas.map((r) => r.exited));
    await dropSchema(schema);
  });

  const runRow = async (runId: string) =>
    (
      await query<RunRow>(
        schema,
        "SELECT status, owner, output, last_seq, lease_epoch, updated_at FROM runs WHERE run_id = $1",
        [runId],
      )
    )[0];
  const frames = (runId: string) =>
    query<{ seq: number; mode: string; data: string }>(
      schema,
      "SELECT seq, mode, data FROM run_frames WHERE run_id = $1 ORDER BY seq",
      [runId],
    );

  it("cannot overwrite the survivor's outcome or append frames after its final frame", async () => {
    const thread = (await json(`${replicas[0]!.url}/threads`, "POST", {})).body as {
      thread_id: string;
    };
    const created = await json(`${replicas[0]!.url}/threads/${thread.thread_id}/runs`, "POST", {
      agent_id: agentId,
    });
    expect(created.status).toBe(200);
    const runId = (created.body as { run_id: string }).run_id;
    // Stopped once it is executing and has stored some frames of its own.
    const owner = await until(
      async () => {
        const row = await runRow(runId);
        return row?.owner && row.last_seq >= 3 && row.owner;
      },
      10_000,
      "the run to be executing",
    );
    const stalled = replicas.find((r) => r.replicaId === owner)!;
    expect(stalled).toBeDefined();
    const survivor = replicas.find((r) => r !== stalled)!;
    stalled.child.kill("SIGSTOP");

    // The survivor takes the run over once the lease ran out, runs it again and finishes it.
    const finished = await until(
      async () => {
        const row = await runRow(runId);
        return row?.status !== "pending" && row;
      },
      (LEASE_SECONDS + 15) * 1000,
      "the survivor to finish the run",
    );
    expect(finished.status).toBe("success");
    const survivorFrames = await until(
      async () => {
        const stored = await frames(runId);
        return stored.at(-1)?.mode === "final" && stored;
      },
      5_000,
      "the survivor's final frame",
    );
    const final = survivorFrames.at(-1)!;
    expect(final.seq).toBe((await runRow(runId))!.last_seq);
    const before = (await runRow(runId))!;

    // The stalled replica wakes up with its execution in the middle of the run.
    stalled.child.kill("SIGCONT");
    await until(
      async () => stalled.output().includes("lost the claim on"),
      10_000,
      "the resumed replica to notice it lost the claim",
    );
    // Whatever it still had in hand has been tried by now (its agent steps every 100 ms).
    await new Promise((r) => setTimeout(r, 1500));

    expect(await runRow(runId)).toEqual(before);
    expect(await frames(runId)).toEqual(survivorFrames);
    const run = (await json(`${survivor.url}/threads/${thread.thread_id}/runs/${runId}`)).body as {
      status: string;
    };
    expect(run.status).toBe("success");
    // It stays up and serves requests; it logged no crash.
    const alive = await json(`${stalled.url}/agents/search`, "POST", {});
    expect(alive.status).toBe(200);
    expect(stalled.child.exitCode).toBeNull();
    expect(stalled.output()).not.toMatch(/unhandled|uncaught/i);
    expect(stalled.output()).not.toContain('"run execution failed"');
  }, 60_000);
});
