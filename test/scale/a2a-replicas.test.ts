/**
 * A2A tasks across replicas sharing one PostgreSQL (real CLI processes): a task started on one
 * replica is subscribed to on the replica that is not executing it, which sends the task, then
 * every event of its run (stored ones from the database, live ones over the PostgreSQL bus)
 * with nothing missed or repeated, to the final status; a cancel sent there stops it where it
 * executes.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { a2aClient, asTask, BINDINGS, collect, userMessage } from "../a2a/helpers.js";
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
  leaseSeconds: 5
agents:
  - name: slow
    version: 1.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 60 }
`;

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

describe("A2A tasks across replicas sharing one PostgreSQL", () => {
  const schema = `acp_a2a_${randomBytes(4).toString("hex")}`;
  let replicas: Replica[] = [];

  beforeAll(async () => {
    await requirePostgres();
    const config = writeConfig(CONFIG);
    const databaseUrl = `${PG_URL}?schema=${schema}`;
    replicas = await Promise.all(["A", "B"].map((name) => startReplica(name, config, databaseUrl)));
  }, 60_000);

  afterAll(async () => {
    for (const replica of replicas) replica.child.kill("SIGKILL");
    await Promise.all(replicas.map((replica) => replica.exited));
    await dropSchema(schema);
  });

  /** The replica not executing the task's run, once one claimed it. */
  async function otherThanExecuting(taskId: string): Promise<Replica> {
    const owner = await until(
      async () => {
        const rows = await query<{ owner: string | null }>(
          schema,
          "SELECT owner FROM runs WHERE run_id = $1",
          [taskId],
        );
        return rows[0]?.owner ?? undefined;
      },
      20_000,
      "a replica to claim the run",
    );
    return replicas.find((replica) => replica.replicaId !== owner)!;
  }

  it.each(BINDINGS)(
    "subscribes from the other replica and misses nothing (%s)",
    async (binding) => {
      const text = words(30);
      const starter = await a2aClient(replicas[0]!.url, "slow", binding);
      const sent = asTask(
        await starter.sendMessage({
          message: userMessage(text, { contextId: randomUUID() }),
          configuration: { returnImmediately: true },
        } as never),
      );
      const other = await otherThanExecuting(sent.id);
      const subscriber = await a2aClient(other.url, "slow", binding);
      const events = await collect(subscriber.resubscribeTask({ id: sent.id } as never));
      expect(events[0]?.payload?.$case).toBe("task");
      // The task as it was (its artifacts so far), then the chunks after it.
      const artifacts = events.flatMap((event) =>
        event.payload?.$case === "artifactUpdate"
          ? [event.payload.value.artifact]
          : event.payload?.$case === "task"
            ? event.payload.value.artifacts
            : [],
      );
      const said = artifacts
        .filter((artifact) => artifact?.name === "response")
        .flatMap((artifact) =>
          artifact!.parts.map((part) => (part.content as { value: string }).value),
        );
      // The text comes in chunks (docs/a2a.md): all of them, in order, none twice.
      expect(said.join("")).toBe(text);
      const last = events.at(-1)?.payload;
      expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(
        TaskState.TASK_STATE_COMPLETED,
      );
      const read = await subscriber.getTask({ id: sent.id } as never);
      expect(read.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    },
  );

  it("cancels from the other replica: the run stops where it executes", async () => {
    const starter = await a2aClient(replicas[0]!.url, "slow", "JSONRPC");
    const sent = asTask(
      await starter.sendMessage({
        message: userMessage(words(300)),
        configuration: { returnImmediately: true },
      } as never),
    );
    const other = await otherThanExecuting(sent.id);
    const canceler = await a2aClient(other.url, "slow", "HTTP+JSON");
    const canceled = await canceler.cancelTask({ id: sent.id } as never);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    const rows = await query<{ status: string }>(
      schema,
      "SELECT status FROM runs WHERE run_id = $1",
      [sent.id],
    );
    expect(rows[0]?.status).toBe("error");
  }, 60_000);
});
