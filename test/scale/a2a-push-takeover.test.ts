/**
 * A2A push notifications when a replica dies (real CLI processes on one PostgreSQL): a task
 * with a push config is sent to replica A, which relays its events; A is killed (SIGKILL) while
 * the task runs. B carries on — it executes the task (taking the run over once A's lease ran
 * out, running it again) or was executing it all along — and relays the rest from where A's
 * relay stopped: the receiver gets the answer whole and the completed status once, last. A
 * notification A was sending when it died is sent again by B (at least once, with the same
 * `x-acp-delivery-id`): the receiver keeps deliveries by that id, and no event is queued twice.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { a2aClient, asTask, userMessage } from "../a2a/helpers.js";
import {
  expectWholeAnswer,
  lastAnswer,
  ofTask,
  type Received,
  receiver,
  stateOf,
} from "../a2a/push-helpers.js";
import {
  dropSchema,
  PG_URL,
  query,
  type Replica,
  requirePostgres,
  startReplica,
  until,
  writeConfig,
} from "./replicas.js";

const CONFIG = `
server:
  keepAliveSeconds: 0
  leaseSeconds: 1
  webhooks: { allowPrivateTargets: true }
agents:
  - name: slow
    version: 1.0.0
    description: Echo that takes its time, safe to run again.
    retryOnRestart: true
    adapter: { type: echo, delayMs: 100 }
`;

const TEXT = Array.from({ length: 30 }, (_, i) => `w${i}`).join(" ");

describe("A2A push notifications when the relaying replica dies", () => {
  const schema = `acp_push_${randomBytes(4).toString("hex")}`;
  let replicas: Replica[] = [];
  let hooks: Awaited<ReturnType<typeof receiver>>;

  beforeAll(async () => {
    await requirePostgres();
    hooks = await receiver();
    const config = writeConfig(CONFIG);
    const databaseUrl = `${PG_URL}?schema=${schema}`;
    replicas = await Promise.all(["A", "B"].map((name) => startReplica(name, config, databaseUrl)));
  }, 60_000);

  afterAll(async () => {
    for (const replica of replicas) replica.child.kill("SIGKILL");
    await Promise.all(replicas.map((replica) => replica.exited));
    await hooks?.close();
    await dropSchema(schema);
  });

  it("the other replica relays the rest of the task, nothing lost or repeated", async () => {
    const [a, b] = replicas as [Replica, Replica];
    const client = await a2aClient(a.url, "slow", "JSONRPC");
    const sent = asTask(
      await client.sendMessage({
        message: userMessage(TEXT, { contextId: randomUUID() }),
        configuration: {
          returnImmediately: true,
          taskPushNotificationConfig: TaskPushNotificationConfig.fromJSON({
            url: hooks.url,
            token: "tok-takeover",
          }),
        },
      } as never),
    );
    // Each delivery once, as a receiver keeps them (by `x-acp-delivery-id`).
    const events = () => {
      const byId = new Map<string, Received>();
      for (const r of ofTask(hooks.received, sent.id)) {
        const id = String(r.headers["x-acp-delivery-id"]);
        if (!byId.has(id)) byId.set(id, r);
      }
      return [...byId.values()];
    };
    await until(
      async () => events().some((r) => stateOf(r) === "TASK_STATE_WORKING"),
      20_000,
      "A to relay the working status",
    );
    a.child.kill("SIGKILL");
    await a.exited;

    await until(
      async () => events().some((r) => stateOf(r) === "TASK_STATE_COMPLETED"),
      30_000,
      "the completed status, relayed by B",
    );
    const row = await query<{ status: string; owner: string | null }>(
      schema,
      "SELECT status, owner FROM runs WHERE run_id = $1",
      [sent.id],
    );
    expect(row[0]?.status).toBe("success");
    const received = events();
    expect(stateOf(received[0]!)).toBe("TASK_STATE_WORKING");
    expect(stateOf(received.at(-1)!)).toBe("TASK_STATE_COMPLETED");
    expect(received.filter((r) => stateOf(r) === "TASK_STATE_COMPLETED")).toHaveLength(1);
    // The answer of the run that completed, whole after its working status.
    expectWholeAnswer(lastAnswer(received), TEXT);
    expect(new Set(received.map((r) => JSON.stringify(r.body))).size).toBe(received.length);
    // Nothing was queued twice, and everything queued reached the receiver.
    const queued = await query<{ body: string }>(
      schema,
      "SELECT body FROM webhook_deliveries WHERE run_id = $1",
      [sent.id],
    );
    expect(new Set(queued.map((d) => d.body)).size).toBe(queued.length);
    expect(queued).toHaveLength(received.length);
    for (const r of received) expect(r.headers["x-a2a-notification-token"]).toBe("tok-takeover");
    // B is still up and logged no crash.
    expect(b.child.exitCode).toBeNull();
    expect(b.output()).not.toMatch(/unhandled|uncaught|relay sweep failed/i);
  }, 90_000);
});
