/**
 * A blocking SendMessage on a new context (the server makes the context): its thread and run
 * are written once, in one commit, at the run's end (`Storage.insertRunOnNewThreadHeld`), and
 * every reader then sees the task as an ordinary one: A2A GetTask, the ACP thread and run.
 */
import { TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { sleep } from "../storage/contract/helpers.js";
import { a2aClient, asTask, BINDINGS, collect, responseText, userMessage } from "./helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
  - name: slow-echo
    version: 1.0.0
    description: Echoes the last user message a word every 30 ms, past the insert's hold.
    adapter: { type: echo, delayMs: 30 }
`;

/** SQLite's commits as /metrics counts them, once no write is under way. */
async function commits(t: TestApp): Promise<number> {
  const read = async () => {
    const res = await t.app.inject({ method: "GET", url: "/metrics" });
    const line = res.body
      .split("\n")
      .find((l) => l.startsWith('acp_storage_commits_total{backend="sqlite"} '));
    expect(line, res.body.slice(0, 500)).toBeDefined();
    return Number(line!.slice(line!.lastIndexOf(" ") + 1));
  };
  let last = await read();
  for (let quiet = 0; quiet < 3; ) {
    await sleep(100);
    const now = await read();
    quiet = now === last ? quiet + 1 : 0;
    last = now;
  }
  return last;
}

describe.each(BINDINGS)("a blocking SendMessage on a new context over %s", (binding) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML, unchecked: true });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("is written in one commit, and read back by every face as it was answered", async () => {
    const client = await a2aClient(base, "echo", binding);
    // Warm-up: prepared statements, the first task of the face.
    await client.sendMessage({ message: userMessage("warm up") } as never);
    let task = asTask(await client.sendMessage({ message: userMessage("once") } as never));
    // A machine that stalls past the hold (20 ms) writes the task in two commits: one more try.
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = await commits(t);
      task = asTask(await client.sendMessage({ message: userMessage("once") } as never));
      if ((await commits(t)) - before === 1) break;
      if (attempt === 2) expect((await commits(t)) - before).toBe(1);
    }
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(task)).toBe("once");

    const got = asTask(await client.getTask({ id: task.id } as never));
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(got.contextId).toBe(task.contextId);
    expect(got.artifacts).toEqual(task.artifacts);

    const thread = await t.call("GET", `/threads/${task.contextId}`);
    expect(thread.status).toBe(200);
    expect(thread.body).toMatchObject({ status: "idle", thread_id: task.contextId });
    // Its state, from the run's checkpoint.
    expect(JSON.stringify(thread.body)).toContain("once");
    const run = await t.call("GET", `/threads/${task.contextId}/runs/${task.id}`);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ status: "success", run_id: task.id });

    // The context goes on: a second message on it is a task on the same thread.
    const next = asTask(
      await client.sendMessage({
        message: userMessage("again", { contextId: task.contextId }),
      } as never),
    );
    expect(next.contextId).toBe(task.contextId);
    expect(next.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(next)).toBe("again");
  });

  it("answers the task's artifacts and history as GetTask reads them back", async () => {
    const client = await a2aClient(base, "echo", binding);
    // Answered from the frames its end wrote (none read back): the same task as stored.
    for (const text of ["first", "second"]) {
      const task = asTask(
        await client.sendMessage({
          message: userMessage(text),
          configuration: { historyLength: 10 },
        } as never),
      );
      expect(responseText(task)).toBe(text);
      const got = asTask(await client.getTask({ id: task.id, historyLength: 10 } as never));
      expect(got.status?.state).toBe(task.status?.state);
      expect(got.artifacts).toEqual(task.artifacts);
      expect(got.history).toEqual(task.history);
      expect(got.history?.length).toBeGreaterThan(0);
    }
  });
});

/** A stream's events with what differs from task to task (ids, times) left out. */
function shapes(events: unknown[]): unknown[] {
  return JSON.parse(
    JSON.stringify(events, (key, value) =>
      ["taskId", "contextId", "id", "artifactId", "messageId", "timestamp"].includes(key)
        ? "*"
        : value,
    ),
  );
}

describe.each(BINDINGS)("a SendStreamingMessage on a new context over %s", (binding) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML, unchecked: true });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("is written in one commit when its run ends with its insert, and streams the same events", async () => {
    const client = await a2aClient(base, "echo", binding);
    const slow = await a2aClient(base, "slow-echo", binding);
    const stream = () =>
      collect(client.sendMessageStream({ message: userMessage("one two") } as never));
    await stream();
    let events = await stream();
    // A machine that stalls past the hold (20 ms) writes the task in two commits: one more try.
    for (let attempt = 0; attempt < 3; attempt++) {
      const before = await commits(t);
      events = await stream();
      if ((await commits(t)) - before === 1) break;
      if (attempt === 2) expect((await commits(t)) - before).toBe(1);
    }
    // The same events as a run that outlasts the hold, streamed as it goes.
    const followed = await collect(
      slow.sendMessageStream({ message: userMessage("one two") } as never),
    );
    expect(shapes(events)).toEqual(shapes(followed));
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
    // Found by every face once streamed.
    const first = events[0]?.payload;
    if (first?.$case !== "task") throw new Error(`the stream opened with ${first?.$case}`);
    const got = asTask(await client.getTask({ id: first.value.id } as never));
    expect(got.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(got)).toBe("one two");
    const { id, contextId } = first.value;
    const run = await t.call("GET", `/threads/${contextId}/runs/${id}`);
    expect(run.body).toMatchObject({ status: "success", run_id: id });
  });
});
