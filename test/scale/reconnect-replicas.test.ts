/**
 * Reconnect across replicas sharing one PostgreSQL (real CLI processes): a client that
 * connects to the replica that is not executing a run rejoins it — stored frames from the
 * database, live ones over the PostgreSQL bus — and ends with the whole reply exactly once,
 * through CopilotKit's client and through the AG-UI face alike; a stop sent to that replica
 * stops the run where it executes.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ReconnectingAgent } from "../helpers/agui-reconnect.js";
import {
  type CopilotAgent,
  copilotClient,
  dropRunConnections,
  transcript,
  until,
} from "../helpers/copilotkit.js";
import {
  dropSchema,
  PG_URL,
  query,
  type Replica,
  requirePostgres,
  startReplica,
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
const replyOf = (agent: CopilotAgent) =>
  String((agent.messages[1] as { content?: string } | undefined)?.content ?? "");

describe("reconnect across replicas sharing one PostgreSQL", () => {
  const schema = `acp_reconnect_${randomBytes(4).toString("hex")}`;
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

  /** The replica executing the thread's pending run, and the other one. */
  async function executingAndOther(threadId: string): Promise<[Replica, Replica]> {
    let owner: string | null | undefined;
    await until(async () => {
      const rows = await query<{ owner: string | null }>(
        schema,
        "SELECT owner FROM runs WHERE thread_id = $1 AND status = 'pending'",
        [threadId],
      );
      owner = rows[0]?.owner;
      return typeof owner === "string";
    }, "a replica to claim the run");
    const executing = replicas.find((replica) => replica.replicaId === owner)!;
    return [executing, replicas.find((replica) => replica !== executing)!];
  }

  it("a CopilotKit client dropped mid-reply, replaced on the other replica: the full reply once", async () => {
    const threadId = randomUUID();
    const first = await copilotClient(`${replicas[0]!.url}/copilotkit`);
    const agent = first.agent("slow", threadId);
    const text = words(40);
    agent.addMessage({ id: "u", role: "user", content: text });
    const running = first.core.runAgent({ agent });
    await until(() => replyOf(agent) !== "", "the reply to start streaming");
    const [, other] = await executingAndOther(threadId);
    dropRunConnections();
    await running;
    expect(replyOf(agent).length).toBeLessThan(text.length);

    const second = await copilotClient(`${other.url}/copilotkit`);
    const rejoined = second.agent("slow", threadId);
    await second.core.connectAgent({ agent: rejoined });
    expect(transcript(rejoined)).toEqual([
      ["user", text],
      ["assistant", text],
    ]);
    expect(second.errors).toEqual([]);
  });

  it("an AG-UI client connecting on the other replica follows the run live from its start", async () => {
    const threadId = `agui-${randomUUID()}`;
    const runner = new ReconnectingAgent(`${replicas[0]!.url}/ag-ui/slow`, threadId);
    const text = words(30);
    runner.addMessage({ id: "u", role: "user", content: text });
    const running = runner.runAgent();
    await until(() => runner.messages.length === 2, "the reply to start");
    const aclThread = (
      await query<{ thread_id: string }>(
        schema,
        "SELECT thread_id FROM runs WHERE creation->'agui'->>'threadId' = $1",
        [threadId],
      )
    )[0]!.thread_id;
    const [, other] = await executingAndOther(aclThread);

    const watcher = new ReconnectingAgent(`${other.url}/ag-ui/slow`, threadId);
    await watcher.connectAgent();
    await running;
    expect(watcher.messages.map((m) => (m as { content?: unknown }).content)).toEqual([text, text]);
    expect(watcher.messages).toEqual(runner.messages);
  });

  it("a stop sent to the other replica ends the run where it executes, and the next run works", async () => {
    const threadId = randomUUID();
    const client = await copilotClient(`${replicas[0]!.url}/copilotkit`);
    const agent = client.agent("slow", threadId);
    const text = words(300);
    agent.addMessage({ id: "s", role: "user", content: text });
    const running = client.core.runAgent({ agent });
    await until(() => replyOf(agent) !== "", "the reply to start streaming");
    const [, other] = await executingAndOther(threadId);
    const stop = await fetch(`${other.url}/copilotkit/agent/slow/stop/${threadId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    expect(await stop.json()).toMatchObject({ stopped: true });
    await running;
    expect(replyOf(agent).length).toBeLessThan(text.length);

    agent.addMessage({ id: "s-2", role: "user", content: "next" });
    await client.core.runAgent({ agent });
    expect(transcript(agent).at(-1)).toEqual(["assistant", "next"]);
    expect(client.errors).toEqual([]);
  });
});
