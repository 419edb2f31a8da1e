/**
 * Several replicas of the real server (CLI processes) sharing one PostgreSQL schema: every
 * operation works from any replica, a run executes exactly once, and a replica killed with
 * SIGKILL has its run resolved by a survivor within the lease.
 */
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openSse, readSse } from "../helpers/sse.js";
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

const LEASE_SECONDS = 2;
const CONFIG = `
server:
  keepAliveSeconds: 0
  leaseSeconds: ${LEASE_SECONDS}
agents:
  - name: slow
    version: 1.0.0
    description: Streams slowly.
    adapter: { type: scripted, delayMs: 100, script: ${JSON.stringify(slowEvents(40))} }
  - name: quick
    version: 1.0.0
    description: Streams quickly.
    adapter: { type: scripted, delayMs: 5, script: ${JSON.stringify(slowEvents(10))} }
`;

describe("replicas sharing one PostgreSQL", () => {
  const schema = `acp_scale_${randomBytes(4).toString("hex")}`;
  const databaseUrl = `${PG_URL}?schema=${schema}`;
  let replicas: Replica[] = [];
  let agents: Record<string, string> = {};

  beforeAll(async () => {
    await requirePostgres();
    const config = writeConfig(CONFIG);
    // Started together: migrations race under the advisory lock and are applied once.
    replicas = await Promise.all(
      ["A", "B", "C"].map((name) => startReplica(name, config, databaseUrl)),
    );
    const list = (await json(`${replicas[0]!.url}/agents/search`, "POST", {})).body as Array<{
      agent_id: string;
      metadata: { ref: { name: string } };
    }>;
    agents = Object.fromEntries(list.map((a) => [a.metadata.ref.name, a.agent_id]));
  }, 60_000);

  afterAll(async () => {
    for (const replica of replicas) replica.child.kill("SIGKILL");
    await Promise.all(replicas.map((r) => r.exited));
    await dropSchema(schema);
  });

  const A = () => replicas[0]!;
  const B = () => replicas[1]!;
  const C = () => replicas[2]!;
  const newThread = async (replica: Replica) =>
    ((await json(`${replica.url}/threads`, "POST", {})).body as { thread_id: string }).thread_id;

  it("a run created on A streams from B and is cancelled from C", async () => {
    const threadId = await newThread(A());
    const created = await json(`${A().url}/threads/${threadId}/runs`, "POST", {
      agent_id: agents.slow,
      stream_mode: "custom",
    });
    expect(created.status).toBe(200);
    const runId = (created.body as { run_id: string }).run_id;
    const stream = await openSse(B().url, `/threads/${threadId}/runs/${runId}/stream`, {
      headers: { "last-event-id": "0" },
    });
    await stream.frame(3, 10_000);
    const cancel = await json(
      `${C().url}/threads/${threadId}/runs/${runId}/cancel?wait=true`,
      "POST",
    );
    expect(cancel.status).toBe(204);
    await stream.ended;
    const last = stream.frames.at(-1)!.data as { status: string; output: { description: string } };
    expect(last.status).toBe("error");
    expect(last.output.description).toMatch(/cancelled/);
    const run = (await json(`${B().url}/threads/${threadId}/runs/${runId}`)).body as {
      status: string;
    };
    expect(run.status).toBe("error");
  });

  it("Last-Event-ID replays the same frames from every replica, whichever ran the run", async () => {
    const threadId = await newThread(A());
    const waited = await json(`${A().url}/threads/${threadId}/runs/wait`, "POST", {
      agent_id: agents.quick,
      stream_mode: ["custom", "values"],
    });
    const runId = (waited.body as { run: { run_id: string; status: string } }).run.run_id;
    const replays = await Promise.all(
      replicas.map((r) =>
        readSse(r.url, `/threads/${threadId}/runs/${runId}/stream`, {
          headers: { "last-event-id": "3" },
        }),
      ),
    );
    const ids = replays.map((s) => s.frames.map((f) => Number(f.id)));
    expect(ids[0]![0]).toBe(4);
    for (const list of ids) expect(list).toEqual(ids[0]);
    for (let i = 1; i < ids[0]!.length; i++) expect(ids[0]![i]).toBe(ids[0]![i - 1]! + 1);
  });

  it("two replicas racing to start a run on one thread: exactly one wins, the other gets 409", async () => {
    for (let round = 0; round < 5; round++) {
      const threadId = await newThread(A());
      const results = await Promise.all(
        [A(), B()].map((r) =>
          json(`${r.url}/threads/${threadId}/runs`, "POST", {
            agent_id: agents.quick,
            multitask_strategy: "reject",
          }),
        ),
      );
      expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    }
  });

  it("a burst of runs spread across replicas executes each run exactly once", async () => {
    const created = await Promise.all(
      Array.from({ length: 45 }, (_, i) =>
        json(`${replicas[i % 3]!.url}/runs`, "POST", {
          agent_id: agents.quick,
          on_completion: "keep",
        }),
      ),
    );
    const runIds = created.map((c) => (c.body as { run_id: string }).run_id);
    await until(
      async () => {
        const rows = await query<{ pending: string }>(
          schema,
          "SELECT count(*) AS pending FROM runs WHERE run_id = ANY($1) AND status = 'pending'",
          [runIds],
        );
        return Number(rows[0]!.pending) === 0;
      },
      60_000,
      "the burst to finish",
    );
    const rows = await query<{ status: string; starts: string }>(
      schema,
      `SELECT r.status,
              (SELECT count(*) FROM run_frames f WHERE f.run_id = r.run_id AND f.data LIKE '%"type":"RUN_STARTED"%') AS starts
         FROM runs r WHERE r.run_id = ANY($1)`,
      [runIds],
    );
    expect(rows).toHaveLength(45);
    for (const row of rows) {
      expect(row.status).toBe("success");
      expect(Number(row.starts)).toBe(1);
    }
  }, 90_000);

  it("SIGKILL of the replica running a run: a survivor resolves it within the lease", async () => {
    const threadId = await newThread(A());
    const created = await json(`${A().url}/threads/${threadId}/runs`, "POST", {
      agent_id: agents.slow,
    });
    const runId = (created.body as { run_id: string }).run_id;
    const owner = await until(
      async () =>
        (
          await query<{ owner: string | null }>(
            schema,
            "SELECT owner FROM runs WHERE run_id = $1",
            [runId],
          )
        )[0]?.owner,
      10_000,
      "the run to be claimed",
    );
    const victim = replicas.find((r) => r.replicaId === owner)!;
    expect(victim).toBeDefined();
    const survivor = replicas.find((r) => r !== victim)!;
    // Work the victim accepted but had not started yet must still run on a survivor.
    const scheduled = (
      (
        await json(`${victim.url}/runs`, "POST", {
          agent_id: agents.quick,
          after_seconds: 1,
          on_completion: "keep",
        })
      ).body as { run_id: string }
    ).run_id;
    const killedAt = Date.now();
    victim.child.kill("SIGKILL");
    await victim.exited;

    const run = await until(
      async () => {
        const got = (await json(`${survivor.url}/threads/${threadId}/runs/${runId}/wait`)).body as {
          run: { status: string };
          output: { description?: string };
        };
        return got.run.status !== "pending" && got;
      },
      (LEASE_SECONDS + 8) * 1000,
      "a survivor to resolve the run",
    );
    const takeoverMs = Date.now() - killedAt;
    console.log(`takeover after SIGKILL: ${takeoverMs} ms (lease ${LEASE_SECONDS} s)`);
    expect(run.run.status).toBe("error");
    expect(run.output.description).toMatch(/restarted|executing/);
    const later = await until(
      async () => {
        const got = (await json(`${survivor.url}/runs/${scheduled}`)).body as { status: string };
        return got.status !== "pending" && got;
      },
      15_000,
      "the scheduled run to run on a survivor",
    );
    expect(later.status).toBe("success");
    replicas = replicas.filter((r) => r !== victim);
  }, 30_000);
});
