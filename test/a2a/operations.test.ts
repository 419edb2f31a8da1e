/**
 * Every A2A task operation with the official client over both bindings: non-blocking send,
 * get with historyLength, list with pages and filters, cancel, subscribe, a client that goes
 * away without cancelling its task, and the errors each refusal carries.
 */
import { randomUUID } from "node:crypto";
import { ListTasksRequest, TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { a2aClient, asTask, BINDINGS, collect, responseText, userMessage } from "./helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
  - name: slow
    version: 2.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 60 }
`;

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

describe.each(BINDINGS)("A2A operations over %s", (binding) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML, unchecked: true });
    base = await listen(t);
  });
  afterAll(() => t.close());

  const until = async (check: () => Promise<boolean>, what: string) => {
    const deadline = Date.now() + 20_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  it("returns at once with returnImmediately, and GetTask follows the task to its end", async () => {
    const client = await a2aClient(base, "slow", binding);
    const sent = asTask(
      await client.sendMessage({
        message: userMessage(words(8)),
        configuration: { returnImmediately: true },
      } as never),
    );
    expect([TaskState.TASK_STATE_SUBMITTED, TaskState.TASK_STATE_WORKING]).toContain(
      sent.status?.state,
    );
    await until(
      async () =>
        (await client.getTask({ id: sent.id } as never)).status?.state ===
        TaskState.TASK_STATE_COMPLETED,
      "the task to complete",
    );
    const done = await client.getTask({ id: sent.id, historyLength: 1 } as never);
    expect(responseText(done)).toBe(words(8));
    expect(done.history).toHaveLength(1);
    expect(done.history[0]?.role).toBe(2);
    const none = await client.getTask({ id: sent.id, historyLength: 0 } as never);
    expect(none.history).toEqual([]);
  });

  it("is reachable by name@version too", async () => {
    const client = await a2aClient(base, "slow@2.0.0", binding);
    const task = asTask(await client.sendMessage({ message: userMessage("hi") } as never));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("lists a context's tasks newest first, in pages, filtered by state", async () => {
    const client = await a2aClient(base, "echo", binding);
    const contextId = `ctx-${randomUUID()}`;
    const ids: string[] = [];
    for (const text of ["one", "two", "three"]) {
      const task = asTask(
        await client.sendMessage({ message: userMessage(text, { contextId }) } as never),
      );
      expect(task.contextId).toBe(contextId);
      ids.push(task.id);
    }
    const first = await client.listTasks(ListTasksRequest.fromJSON({ contextId, pageSize: 2 }));
    expect(first.tasks.map((task) => task.id)).toEqual([ids[2], ids[1]]);
    expect(first.nextPageToken).not.toBe("");
    const second = await client.listTasks(
      ListTasksRequest.fromJSON({ contextId, pageSize: 2, pageToken: first.nextPageToken }),
    );
    expect(second.tasks.map((task) => task.id)).toEqual([ids[0]]);
    expect(second.nextPageToken).toBe("");
    const completed = await client.listTasks(
      ListTasksRequest.fromJSON({ contextId, status: "TASK_STATE_COMPLETED" }),
    );
    expect(completed.tasks).toHaveLength(3);
    const waiting = await client.listTasks(
      ListTasksRequest.fromJSON({ contextId, status: "TASK_STATE_INPUT_REQUIRED" }),
    );
    expect(waiting.tasks).toHaveLength(0);
  });

  it("cancels a running task: the agent stops and the task is canceled", async () => {
    const client = await a2aClient(base, "slow", binding);
    const sent = asTask(
      await client.sendMessage({
        message: userMessage(words(200)),
        configuration: { returnImmediately: true },
      } as never),
    );
    const canceled = await client.cancelTask({ id: sent.id } as never);
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
    await expect(client.cancelTask({ id: sent.id } as never)).rejects.toMatchObject({
      name: "TaskNotCancelableError",
    });
    // ACP sees the same cancelled run.
    const run = await t.call("GET", `/threads/${sent.contextId}/runs/${sent.id}`);
    expect(run.body).toMatchObject({ status: "error" });
  });

  it("subscribes to a running task: the task as it is, then its events to the end", async () => {
    const client = await a2aClient(base, "slow", binding);
    const sent = asTask(
      await client.sendMessage({
        message: userMessage(words(10)),
        configuration: { returnImmediately: true },
      } as never),
    );
    // Subscribed mid-answer: the agent has said something, not everything.
    await until(
      async () => (await client.getTask({ id: sent.id } as never)).artifacts.length > 0,
      "the first words",
    );
    const events = await collect(client.resubscribeTask({ id: sent.id } as never));
    const first = events[0]?.payload;
    expect(first?.$case).toBe("task");
    expect(first?.$case === "task" && first.value.artifacts.length).toBeGreaterThan(0);
    // The task as it was (its artifacts so far), then the chunks after it.
    const artifacts = events.flatMap((event) =>
      event.payload?.$case === "artifactUpdate"
        ? [event.payload.value.artifact]
        : event.payload?.$case === "task"
          ? event.payload.value.artifacts
          : [],
    );
    const text = artifacts
      .filter((artifact) => artifact?.name === "response")
      .flatMap((artifact) => artifact?.parts ?? []);
    expect(text.map((part) => (part.content as { value: string }).value).join("")).toBe(words(10));
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
    // A finished task has nothing to subscribe to.
    await expect(collect(client.resubscribeTask({ id: sent.id } as never))).rejects.toThrow(
      /finished task/,
    );
  });

  it("keeps a task going when its streaming client goes away", async () => {
    const client = await a2aClient(base, "slow", binding);
    const controller = new AbortController();
    let taskId = "";
    try {
      for await (const event of client.sendMessageStream(
        { message: userMessage(words(12)) } as never,
        { signal: controller.signal },
      )) {
        if (event.payload?.$case === "task") {
          taskId = event.payload.value.id;
          controller.abort();
        }
      }
    } catch {
      // The abort ends the stream with an error on the client's side.
    }
    expect(taskId).not.toBe("");
    await until(
      async () =>
        (await client.getTask({ id: taskId } as never)).status?.state ===
        TaskState.TASK_STATE_COMPLETED,
      "the abandoned task to complete",
    );
    expect(responseText(await client.getTask({ id: taskId } as never))).toBe(words(12));
  });

  it("refuses unknown tasks, restarts and a task in another context", async () => {
    const client = await a2aClient(base, "echo", binding);
    await expect(client.getTask({ id: randomUUID() } as never)).rejects.toMatchObject({
      name: "TaskNotFoundError",
    });
    await expect(client.cancelTask({ id: "no such task" } as never)).rejects.toMatchObject({
      name: "TaskNotFoundError",
    });
    const task = asTask(await client.sendMessage({ message: userMessage("hi") } as never));
    await expect(
      client.sendMessage({
        message: userMessage("more", { taskId: task.id, contextId: "another" }),
      } as never),
    ).rejects.toThrow(/not the context/);
    // A task of another agent is not this agent's.
    const slow = await a2aClient(base, "slow", binding);
    await expect(slow.getTask({ id: task.id } as never)).rejects.toMatchObject({
      name: "TaskNotFoundError",
    });
  });
});
