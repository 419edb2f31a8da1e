/**
 * A2A push notifications across a restart: a real server on a SQLite file (or a PostgreSQL
 * schema) relays a slow task's events, closes mid-task, and a new server on the same database
 * carries on from where the first stopped. The receiver gets every event of the task, each once,
 * ending with its final status:
 * for an agent marked `retryOnRestart` the task runs again and completes; otherwise the
 * shutdown fails it, and that final status reaches the receiver once.
 */
import { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { createStorage } from "../../src/storage/index.js";
import { PostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import type { Storage } from "../../src/storage/types.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen, tempDbFile } from "../runs/helpers.js";
import {
  dropSchema,
  newSchemaName,
  requirePostgres,
  TEST_DATABASE_URL,
} from "../storage/pg-helpers.js";
import { a2aClient, asTask, userMessage } from "./helpers.js";
import { expectWholeAnswer, lastAnswer, ofTask, receiver, stateOf, until } from "./push-helpers.js";

const YAML = `
agents:
  - name: sturdy
    version: 1.0.0
    description: A slow echo, safe to run again.
    adapter: { type: echo, delayMs: 150 }
    retryOnRestart: true
  - name: fragile
    version: 1.0.0
    description: A slow echo that a restart fails.
    adapter: { type: echo, delayMs: 150 }
`;

/** Thirty words: a few seconds of echo, so the server closes while the task runs. */
const LONG_TEXT = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");

/** A database the servers of one test share: each `open` is a new server's storage. */
interface Database {
  open(): Storage;
  dispose(): Promise<void>;
}

const BACKENDS: [string, () => Promise<Database>][] = [
  [
    "a SQLite file",
    async () => {
      const file = tempDbFile();
      return { open: () => createStorage(file), dispose: async () => {} };
    },
  ],
  [
    "a PostgreSQL schema",
    async () => {
      // Fails loudly when PostgreSQL is not there: this test never skips.
      await requirePostgres();
      const schema = newSchemaName();
      return {
        open: () => new PostgresStorage({ url: TEST_DATABASE_URL, schema, poolSize: 4 }),
        dispose: () => dropSchema(schema),
      };
    },
  ],
];

const serverOn = (database: Database) =>
  build({
    yaml: YAML,
    unchecked: true,
    storage: database.open(),
    // leaseSeconds 3: the relays left behind are looked for every second.
    settings: {
      webhooks: { ...DEFAULT_SETTINGS.webhooks, allowPrivateTargets: true, maxAttempts: 5 },
      leaseSeconds: 3,
    },
  });

const stop = async (t: TestApp) => {
  await t.close();
  await t.storage.close();
};

describe.each(BACKENDS)("A2A push notifications survive a restart on %s", (_, database) => {
  let hooks: Awaited<ReturnType<typeof receiver>>;
  const databases: Database[] = [];
  beforeAll(async () => {
    hooks = await receiver();
  });
  afterAll(async () => {
    await hooks.close();
    for (const db of databases) await db.dispose();
  });

  /** Starts a slow task with a push config, closes its server once it is working, and
   * starts a second server on the same database; answers the task id and the second server. */
  async function taskAcrossRestart(agent: string): Promise<{ taskId: string; second: TestApp }> {
    const db = await database();
    databases.push(db);
    const first = await serverOn(db);
    let taskId: string;
    try {
      const client = await a2aClient(await listen(first), agent, "JSONRPC");
      const sent = asTask(
        await client.sendMessage({
          message: userMessage(LONG_TEXT),
          configuration: {
            returnImmediately: true,
            taskPushNotificationConfig: TaskPushNotificationConfig.fromJSON({
              url: hooks.url,
              token: `tok-${agent}`,
            }),
          },
        } as never),
      );
      taskId = sent.id;
      await until(
        () => ofTask(hooks.received, taskId).some((r) => stateOf(r) === "TASK_STATE_WORKING"),
        "the working status from the first server",
      );
      const run = await first.storage.getRun(taskId);
      expect(run?.status).toBe("pending");
    } finally {
      await stop(first);
    }
    const second = await serverOn(db);
    await listen(second);
    return { taskId, second };
  }

  const bodies = (taskId: string) =>
    ofTask(hooks.received, taskId).map((r) => JSON.stringify(r.body));

  it("a task run again by the next server completes, and every event reaches the receiver once", async () => {
    const { taskId, second } = await taskAcrossRestart("sturdy");
    try {
      await until(
        () => ofTask(hooks.received, taskId).some((r) => stateOf(r) === "TASK_STATE_COMPLETED"),
        "the completed status from the second server",
      );
      const events = ofTask(hooks.received, taskId);
      // One working status per server that ran the task, then the answer, then the end.
      expect(events.map(stateOf).filter(Boolean)).toEqual([
        "TASK_STATE_WORKING",
        "TASK_STATE_WORKING",
        "TASK_STATE_COMPLETED",
      ]);
      expect(stateOf(events.at(-1)!)).toBe("TASK_STATE_COMPLETED");
      // The answer of the run that completed, streamed whole after its working status.
      expectWholeAnswer(lastAnswer(events), LONG_TEXT);
      expect(new Set(bodies(taskId)).size).toBe(events.length);
      for (const event of events) {
        expect(event.headers["x-a2a-notification-token"]).toBe("tok-sturdy");
      }
      // Every notification queued was delivered, and nothing was queued twice.
      await until(async () => {
        const deliveries = await second.storage.getWebhooksOfRun(taskId);
        return deliveries.every((d) => d.state === "delivered");
      }, "every delivery to be marked delivered");
      expect(await second.storage.getWebhooksOfRun(taskId)).toHaveLength(events.length);
    } finally {
      await stop(second);
    }
  });

  it("a task the shutdown failed has its final status pushed once, not again by the next server", async () => {
    const { taskId, second } = await taskAcrossRestart("fragile");
    try {
      await until(
        () => ofTask(hooks.received, taskId).some((r) => stateOf(r) === "TASK_STATE_FAILED"),
        "the failed status",
      );
      // The relay is done: the second server's sweeps do not take it up again.
      expect(await second.storage.getPushCursor(taskId)).toMatchObject({ closed: true });
      const agents = second.registry.list().map((agent) => agent.agentId);
      const backlog = await second.storage.pushBacklog(second.app.deps.engine.owner, agents, 100);
      expect(backlog.map((entry) => entry.run_id)).not.toContain(taskId);
      await until(async () => {
        const deliveries = await second.storage.getWebhooksOfRun(taskId);
        return deliveries.every((d) => d.state === "delivered");
      }, "every delivery to be sent");
      const events = ofTask(hooks.received, taskId);
      expect(events.map(stateOf).filter(Boolean)).toEqual([
        "TASK_STATE_WORKING",
        "TASK_STATE_FAILED",
      ]);
      expect(new Set(bodies(taskId)).size).toBe(events.length);
    } finally {
      await stop(second);
    }
  });
});
