/**
 * A2A push notifications with the official client over both bindings: configs are set, read,
 * listed and deleted on a task; every stream event of the task reaches a local receiver through
 * the webhook deliverer, with the config's token and authorization, as `application/a2a+json`
 * (push-refusals.test.ts: the targets and configs refused).
 */
import { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { a2aClient, asTask, BINDINGS, userMessage } from "./helpers.js";
import { ofTask, receiver, stateOf, until } from "./push-helpers.js";

const YAML = `
agents:
  - name: slow
    version: 1.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 30 }
`;

describe.each(BINDINGS)("A2A push notifications over %s", (binding) => {
  let t: TestApp;
  let base: string;
  let hooks: Awaited<ReturnType<typeof receiver>>;
  beforeAll(async () => {
    hooks = await receiver();
    t = await build({
      yaml: YAML,
      unchecked: true,
      settings: {
        webhooks: { ...DEFAULT_SETTINGS.webhooks, allowPrivateTargets: true, maxAttempts: 3 },
      },
    });
    base = await listen(t);
  });
  afterAll(async () => {
    await t.close();
    await hooks.close();
  });

  it("delivers every event of a task to the config sent with its message", async () => {
    const client = await a2aClient(base, "slow", binding);
    const sent = asTask(
      await client.sendMessage({
        message: userMessage("push me"),
        configuration: {
          returnImmediately: true,
          taskPushNotificationConfig: TaskPushNotificationConfig.fromJSON({
            url: hooks.url,
            token: "tok-123",
            authentication: { scheme: "Bearer", credentials: "s3cret" },
          }),
        },
      } as never),
    );
    const mine = () => ofTask(hooks.received, sent.id);
    await until(
      () => mine().some((r) => stateOf(r) === "TASK_STATE_COMPLETED"),
      "the completed status to be pushed",
    );
    const events = mine();
    expect(events.at(-1) && stateOf(events.at(-1)!)).toBe("TASK_STATE_COMPLETED");
    // The answer arrives in chunks (docs/a2a.md), each pushed as it comes.
    type Chunk = { artifact?: { name?: string; parts?: { text?: string }[] }; lastChunk?: boolean };
    const chunks = events
      .map((r) => r.body.artifactUpdate as Chunk | undefined)
      .filter((u) => u?.artifact?.name === "response");
    expect(chunks.flatMap((u) => u!.artifact!.parts!.map((p) => p.text)).join("")).toBe("push me");
    expect(chunks.at(-1)?.lastChunk).toBe(true);
    for (const event of events) {
      expect(event.headers["x-a2a-notification-token"]).toBe("tok-123");
      expect(event.headers.authorization).toBe("Bearer s3cret");
      expect(event.headers["x-acp-event"]).toBe("a2a.stream_response");
      // A2A's media type (specification §4.3.3, §14.1.1).
      expect(event.headers["content-type"]).toBe("application/a2a+json");
    }
  });

  it("sets, reads, lists and deletes a task's configs", async () => {
    const client = await a2aClient(base, "slow", binding);
    const sent = asTask(
      await client.sendMessage({
        message: userMessage("configs"),
        configuration: { returnImmediately: true },
      } as never),
    );
    const created = await client.createTaskPushNotificationConfig(
      TaskPushNotificationConfig.fromJSON({ taskId: sent.id, id: "cfg-1", url: hooks.url }),
    );
    expect(created).toMatchObject({ id: "cfg-1", taskId: sent.id, url: hooks.url });
    const read = await client.getTaskPushNotificationConfig({
      taskId: sent.id,
      id: "cfg-1",
    } as never);
    expect(read.url).toBe(hooks.url);
    const listed = await client.listTaskPushNotificationConfig({ taskId: sent.id } as never);
    expect(listed.configs.map((c) => c.id)).toEqual(["cfg-1"]);
    await client.deleteTaskPushNotificationConfig({ taskId: sent.id, id: "cfg-1" } as never);
    await expect(
      client.getTaskPushNotificationConfig({ taskId: sent.id, id: "cfg-1" } as never),
    ).rejects.toMatchObject({ name: "TaskNotFoundError" });
    await expect(
      client.createTaskPushNotificationConfig(
        TaskPushNotificationConfig.fromJSON({ taskId: "no-such-task", url: hooks.url }),
      ),
    ).rejects.toMatchObject({ name: "TaskNotFoundError" });
  });
});
