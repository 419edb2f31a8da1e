/**
 * Answering an `input-required` task, with the official client over both bindings: a plain text
 * answer resumes the task of an agent that declares no answer schema (the answer reaches it in
 * the default shape, `{"text": …}`, as an ACP or AG-UI resume with that payload does); where a
 * schema is declared the answer is checked, and a refused one says what the task waits for; a
 * stream that follows the resumed task ends with its final state.
 */
import { randomUUID } from "node:crypto";
import { Message, type Task, TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { a2aClient, asTask, BINDINGS, collect, responseText, userMessage } from "./helpers.js";

const dataAnswer = (taskId: string, data: unknown) =>
  Message.fromJSON({ messageId: randomUUID(), role: "ROLE_USER", taskId, parts: [{ data }] });

describe.each(BINDINGS)("answering an input-required task over %s", (binding) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({
      unchecked: true,
      baseDir: `${process.cwd()}/test/fixtures/modules`,
      yaml: `
agents:
  - name: asker
    version: 1.0.0
    description: Asks a question with no answer schema.
    adapter: { type: module, path: ./media-agent.mjs }
  - name: approver
    version: 1.0.0
    description: Asks for {approved} and answers slowly.
    adapter: { type: echo, delayMs: 60 }
`,
    });
    base = await listen(t);
  });
  afterAll(() => t.close());

  const ask = async (agent = "asker", text = "ask"): Promise<Task> => {
    const client = await a2aClient(base, agent, binding);
    const task = asTask(await client.sendMessage({ message: userMessage(text) } as never));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    return task;
  };

  it("resumes with a plain text answer, which the agent gets as {text}", async () => {
    const client = await a2aClient(base, "asker", binding);
    const task = await ask();
    const done = asTask(
      await client.sendMessage({ message: userMessage("Ada", { taskId: task.id }) } as never),
    );
    expect(done.id).toBe(task.id);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(done)).toBe('answer: {"text":"Ada"}');
  });

  it("resumes with a data answer: an object as it is, anything else as {data}", async () => {
    const client = await a2aClient(base, "asker", binding);
    for (const [data, seen] of [
      [{ name: "Ada" }, '{"name":"Ada"}'],
      ["Ada", '{"data":"Ada"}'],
    ] as const) {
      const task = await ask();
      const done = asTask(
        await client.sendMessage({ message: dataAnswer(task.id, data) } as never),
      );
      expect(responseText(done)).toBe(`answer: ${seen}`);
    }
  });

  it("checks the answer where a schema is declared, and says what the task waits for", async () => {
    const client = await a2aClient(base, "approver", binding);
    const task = await ask("approver", "/approve ship it");
    await expect(
      client.sendMessage({ message: userMessage("yes", { taskId: task.id }) } as never),
    ).rejects.toThrow(
      /waits for a data part matching the schema \{"type":"object","properties":\{"approved":\{"type":"boolean"\}\}\}: .*must be object/,
    );
    expect((await client.getTask({ id: task.id } as never)).status?.state).toBe(
      TaskState.TASK_STATE_INPUT_REQUIRED,
    );
    const events = await collect(
      client.sendMessageStream({ message: dataAnswer(task.id, { approved: true }) } as never),
    );
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
  });

  it("a subscription opened after the answer ends with the task's final state", async () => {
    const client = await a2aClient(base, "approver", binding);
    const task = await ask("approver", "/approve one two three four five six seven eight");
    await client.sendMessage({
      message: dataAnswer(task.id, { approved: true }),
      configuration: { returnImmediately: true },
    } as never);
    const events = await collect(client.resubscribeTask({ id: task.id } as never));
    expect(events[0]?.payload?.$case).toBe("task");
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
  });
});

describe("the default answer shape through ACP and AG-UI", () => {
  it("is what an A2A text answer gives: {text} reaches the agent alike", async () => {
    const t = await build({
      unchecked: true,
      baseDir: `${process.cwd()}/test/fixtures/modules`,
      yaml: `
agents:
  - name: asker
    version: 1.0.0
    description: Asks a question with no answer schema.
    adapter: { type: module, path: ./media-agent.mjs }
`,
    });
    try {
      const base = await listen(t);
      // ACP: a stateful run that asks, resumed with {text} for its interrupt type.
      const thread = (await t.call("POST", "/threads", {})).body as { thread_id: string };
      const asked = await t.call("POST", `/threads/${thread.thread_id}/runs/wait`, {
        input: { messages: [{ role: "user", content: "ask" }] },
      });
      const run = (asked.body as { run: { run_id: string; status: string } }).run;
      expect(run.status).toBe("interrupted");
      const resumed = await t.call("POST", `/threads/${thread.thread_id}/runs/${run.run_id}`, {
        question: { text: "Ada" },
      });
      expect(resumed.status).toBe(200);
      await t.call("GET", `/threads/${thread.thread_id}/runs/${run.run_id}/wait`);
      const after = await t.call("GET", `/threads/${thread.thread_id}`);
      const { messages } = after.body as { messages: { content: string }[] };
      expect(messages.at(-1)?.content).toBe('answer: {"text":"Ada"}');
      // AG-UI: the resume entry with that payload.
      const threadId = `t-${randomUUID()}`;
      const first = await fetch(`${base}/ag-ui/asker`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          threadId,
          runId: "r1",
          messages: [{ id: "m1", role: "user", content: "ask" }],
        }),
      });
      const interruptId = /"id":"([^"]*-question)"/.exec(await first.text())?.[1];
      const second = await fetch(`${base}/ag-ui/asker`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          threadId,
          runId: "r2",
          messages: [],
          resume: [{ interruptId, status: "resolved", payload: { text: "Ada" } }],
        }),
      });
      expect(await second.text()).toContain('answer: {\\"text\\":\\"Ada\\"}');
    } finally {
      await t.close();
    }
  });
});
