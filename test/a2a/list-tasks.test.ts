/**
 * ListTasks with the official client over both bindings, as the specification says: the most
 * recently updated task first (a task resumed later comes before tasks created after it), page
 * tokens that go through the list once, `totalSize` counting every match, the filters
 * (`contextId`, `status`, `statusTimestampAfter`) and `historyLength` / `includeArtifacts`.
 */
import { randomUUID } from "node:crypto";
import { ListTasksRequest, type Task, TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { a2aClient, asTask, BINDINGS, responseText, userMessage } from "./helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message; "/approve …" asks for approval first.
    adapter: { type: echo }
  - name: slow
    version: 1.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 60 }
`;

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");
const ids = (tasks: Task[]) => tasks.map((task) => task.id);

describe.each(BINDINGS)("A2A ListTasks over %s", (binding) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML, unchecked: true });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("lists the most recently updated first, in pages that go through every task once", async () => {
    const client = await a2aClient(base, "echo", binding);
    const contextId = `ctx-${randomUUID()}`;
    const send = async (text: string, extra: { taskId?: string; data?: unknown } = {}) =>
      asTask(
        await client.sendMessage({ message: userMessage(text, { contextId, ...extra }) } as never),
      );
    const asked = await send("/approve the first");
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const second = await send("the second");
    const third = await send("the third");
    // The first task is answered last: it is the most recently updated.
    const resumed = await send("yes", { taskId: asked.id, data: { approved: true } });
    expect(resumed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    const order = [asked.id, third.id, second.id];

    const all = await client.listTasks(ListTasksRequest.fromJSON({ contextId }));
    expect(ids(all.tasks)).toEqual(order);
    expect(all).toMatchObject({ nextPageToken: "", pageSize: 50, totalSize: 3 });
    const times = all.tasks.map((task) => Date.parse(String(task.status?.timestamp)));
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const paged: string[] = [];
    let pageToken = "";
    for (let page = 0; page < 5; page++) {
      const listed = await client.listTasks(
        ListTasksRequest.fromJSON({ contextId, pageSize: 1, pageToken }),
      );
      expect(listed).toMatchObject({ pageSize: 1, totalSize: 3 });
      paged.push(...ids(listed.tasks));
      pageToken = listed.nextPageToken;
      if (pageToken === "") break;
    }
    expect(paged).toEqual(order);

    // Tasks whose status changed at or after the third's.
    const since = String(all.tasks.find((task) => task.id === third.id)?.status?.timestamp);
    const recent = await client.listTasks(
      ListTasksRequest.fromJSON({ contextId, statusTimestampAfter: since }),
    );
    expect(ids(recent.tasks)).toEqual([asked.id, third.id]);
    expect(recent.totalSize).toBe(2);

    await expect(
      client.listTasks(ListTasksRequest.fromJSON({ contextId, pageToken: "not-a-token" })),
    ).rejects.toThrow(/pageToken/);
  });

  it("shows as much history as asked, and artifacts only with includeArtifacts", async () => {
    const client = await a2aClient(base, "echo", binding);
    const contextId = `ctx-${randomUUID()}`;
    asTask(
      await client.sendMessage({ message: userMessage("hello there", { contextId }) } as never),
    );
    const [full] = (await client.listTasks(ListTasksRequest.fromJSON({ contextId }))).tasks;
    // The user's message, then the agent's answer; no artifacts unless asked.
    expect(full?.history.map((message) => message.role)).toEqual([1, 2]);
    expect(full?.artifacts).toEqual([]);
    const [last] = (
      await client.listTasks(ListTasksRequest.fromJSON({ contextId, historyLength: 1 }))
    ).tasks;
    expect(last?.history.map((message) => message.role)).toEqual([2]);
    const [none] = (
      await client.listTasks(
        ListTasksRequest.fromJSON({ contextId, historyLength: 0, includeArtifacts: true }),
      )
    ).tasks;
    expect(none?.history).toEqual([]);
    expect(responseText(none!)).toBe("hello there");
  });

  it("filters by state in the query: working, submitted, canceled, and counts what matches", async () => {
    const client = await a2aClient(base, "slow", binding);
    const contextId = `ctx-${randomUUID()}`;
    const start = async (text: string) =>
      asTask(
        await client.sendMessage({
          message: userMessage(text, { contextId }),
          configuration: { returnImmediately: true },
        } as never),
      );
    const running = await start(words(300));
    // A second message on the context waits for the first: submitted, not started.
    const queued = await start("after it");
    const deadline = Date.now() + 20_000;
    while (
      (await client.getTask({ id: running.id } as never)).status?.state !==
      TaskState.TASK_STATE_WORKING
    ) {
      if (Date.now() > deadline) throw new Error("the first task never started");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const inState = async (status: string) => {
      const listed = await client.listTasks(ListTasksRequest.fromJSON({ contextId, status }));
      expect(listed.totalSize).toBe(listed.tasks.length);
      return ids(listed.tasks);
    };
    expect(await inState("TASK_STATE_WORKING")).toEqual([running.id]);
    expect(await inState("TASK_STATE_SUBMITTED")).toEqual([queued.id]);
    await client.cancelTask({ id: queued.id } as never);
    await client.cancelTask({ id: running.id } as never);
    expect(await inState("TASK_STATE_CANCELED")).toEqual([running.id, queued.id]);
    expect(await inState("TASK_STATE_FAILED")).toEqual([]);
    expect(await inState("TASK_STATE_WORKING")).toEqual([]);
    expect(await inState("TASK_STATE_REJECTED")).toEqual([]);
  });
});
