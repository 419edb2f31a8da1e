/**
 * Push notification receivers that hang (accept the request, never answer) hold up nobody
 * else: with four times as many of them as the server's delivery concurrency, each holding an
 * attempt open, a healthy receiver gets every notification of its task, in order, whether it
 * is the task's only config or sits beside a hanging one; and an ACP run's webhook goes out
 * too. The attempts' timeout is a minute: all of it happens while every hanging attempt is
 * still open.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";
import { agentId, listen } from "../runs/helpers.js";
import { startHangingReceivers } from "../webhooks/helpers.js";
import { ofTask, receiver, stateOf, until } from "./push-helpers.js";

const YAML = `
agents:
  - name: slow
    version: 1.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 100 }
`;

const CONCURRENCY = 4;
const HANGING = 4 * CONCURRENCY;

// biome-ignore lint/suspicious/noExplicitAny: the wire's JSON, read freely by the assertions
type Wire = any;

describe("A2A push and ACP webhooks beside receivers that hang", () => {
  let t: TestApp;
  let base: string;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  let hanging: Awaited<ReturnType<typeof startHangingReceivers>>;

  const rpc = async (method: string, params: unknown): Promise<Wire> => {
    const response = await fetch(`${base}/a2a/slow`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    });
    const body = (await response.json()) as Wire;
    if (body.error) throw new Error(JSON.stringify(body.error));
    return body.result;
  };
  const send = async (text: string, url: string): Promise<string> => {
    const result = await rpc("SendMessage", {
      message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }] },
      configuration: { returnImmediately: true, taskPushNotificationConfig: { url } },
    });
    return (result.task ?? result).id as string;
  };
  const hangingTasks: string[] = [];
  /** Every hanging receiver still holds its first attempt: none timed out or was retried. */
  const allStillHanging = async () => {
    expect(hanging.open().every((n) => n >= 1)).toBe(true);
    for (const taskId of hangingTasks) {
      const [first] = await t.storage.getWebhooksOfRun(taskId);
      expect(first).toMatchObject({ state: "pending", attempts: 0 });
    }
  };

  beforeAll(async () => {
    hooks = await receiver();
    hanging = await startHangingReceivers(HANGING);
    t = await build({
      yaml: YAML,
      unchecked: true,
      settings: {
        webhooks: {
          ...DEFAULT_SETTINGS.webhooks,
          allowPrivateTargets: true,
          concurrency: CONCURRENCY,
          timeoutSeconds: 60,
        },
      },
    });
    base = await listen(t);
    for (const [i, url] of hanging.urls.entries()) hangingTasks.push(await send(`hang ${i}`, url));
    await until(() => hanging.open().every((n) => n === 1), "every hanging receiver's attempt");
  });
  afterAll(async () => {
    // First, so that the app's shutdown does not wait for the hanging attempts.
    await hanging.close();
    await t.close();
    await hooks.close();
  });

  it("a task's only config gets every notification, the completed status last", async () => {
    const taskId = await send("alone", hooks.url);
    await until(
      () => ofTask(hooks.received, taskId).some((r) => stateOf(r) === "TASK_STATE_COMPLETED"),
      "the completed status",
    );
    const states = ofTask(hooks.received, taskId).map(stateOf).filter(Boolean);
    expect(states.at(-1)).toBe("TASK_STATE_COMPLETED");
    await allStillHanging();
  });

  it("a config beside a hanging config of the same task gets every notification", async () => {
    const taskId = await send("beside a hanging one", hooks.url);
    await rpc("CreateTaskPushNotificationConfig", { taskId, url: hanging.urls[0] });
    await until(
      () => ofTask(hooks.received, taskId).some((r) => stateOf(r) === "TASK_STATE_COMPLETED"),
      "the completed status",
    );
    expect(ofTask(hooks.received, taskId).map(stateOf).filter(Boolean).at(-1)).toBe(
      "TASK_STATE_COMPLETED",
    );
    await allStillHanging();
  });

  it("an ACP run's webhook goes out", async () => {
    const response = await fetch(`${base}/runs`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        agent_id: agentId("slow"),
        input: { messages: [{ role: "user", content: "hi" }] },
        webhook: hooks.url,
      }),
    });
    expect(response.status).toBe(200);
    const { run_id: runId } = (await response.json()) as Wire;
    await until(
      () => hooks.received.some((r) => r.body.run_id === runId && r.body.status === "success"),
      "the run's success webhook",
    );
    const statuses = hooks.received
      .filter((r) => r.body.run_id === runId)
      .map((r) => r.body.status);
    expect(statuses).toEqual(["pending", "success"]);
    await allStillHanging();
  });
});
