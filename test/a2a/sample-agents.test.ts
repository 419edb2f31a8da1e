/**
 * Every demo agent of config/sample.yaml as an A2A agent, with the official client over both
 * bindings: what each says becomes the task's artifacts and status, the approval agent's
 * interrupt is an input-required task that a follow-up message resumes, and the same tasks
 * read back through ACP as runs. One server, as `npm start` runs it (the remote AG-UI agent is
 * this same server's AG-UI face).
 */
import { randomUUID } from "node:crypto";
import { TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { a2aClient, asTask, BINDINGS, collect, responseText, userMessage } from "./helpers.js";

const dataOf = (
  task: { artifacts: { artifactId: string; parts: { content?: unknown }[] }[] },
  id: string,
) => {
  const part = task.artifacts.find((artifact) => artifact.artifactId === id)?.parts[0];
  const content = part?.content as { $case: string; value: unknown } | undefined;
  return content?.$case === "data" ? content.value : undefined;
};

describe.each(BINDINGS)("the sample config's agents over A2A %s", (binding) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({ unchecked: true }));
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ["echo", "hi echo", "hi echo"],
    ["remote-echo", "over the wire", "over the wire"],
    ["word-count", "one two three", "3 words (3 so far)."],
  ])("%s completes a task with its answer", async (name, said, answer) => {
    const client = await a2aClient(base, name, binding);
    const task = asTask(await client.sendMessage({ message: userMessage(said) } as never));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(task)).toBe(answer);
    const status = task.status?.message?.parts[0]?.content;
    expect(status).toEqual({ $case: "text", value: answer });
  });

  it("scripted-demo's text, tool result and final state are the task's artifacts", async () => {
    const client = await a2aClient(base, "scripted-demo", binding);
    const task = asTask(await client.sendMessage({ message: userMessage("weather?") } as never));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(task)).toBe("Let me check the weather in Lisbon.");
    expect(dataOf(task, "tool-call-1")).toEqual({
      toolCallId: "call-1",
      name: "get_weather",
      args: { city: "Lisbon" },
      result: { temperature: 21, sky: "clear" },
    });
    expect(dataOf(task, "state")).toEqual({
      city: "Lisbon",
      forecast: { temperature: 21, sky: "clear" },
    });
    // The history: the user's message, then the agent's.
    expect(task.history.map((message) => message.role)).toEqual([1, 2]);
  });

  it("approval-demo asks for input, refuses a wrong answer, and finishes on a right one", async () => {
    const client = await a2aClient(base, "approval-demo", binding);
    const contextId = randomUUID();
    const asked = asTask(
      await client.sendMessage({ message: userMessage("migrate", { contextId }) } as never),
    );
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    expect(asked.contextId).toBe(contextId);
    const [text, data] = asked.status?.message?.parts ?? [];
    expect(text?.content).toEqual({ $case: "text", value: "Approve the plan?" });
    expect(data?.content).toMatchObject({
      $case: "data",
      value: { interrupts: [{ id: "approve-1", reason: "approval" }] },
    });

    // The descriptor's resume_payload wants {approved: boolean}.
    await expect(
      client.sendMessage({
        message: userMessage("ok", { taskId: asked.id, contextId, data: { approved: "yes" } }),
      } as never),
    ).rejects.toThrow(/approved/);

    const events = await collect(
      client.sendMessageStream({
        message: userMessage("go", { taskId: asked.id, contextId, data: { approved: true } }),
      } as never),
    );
    const first = events[0]?.payload;
    expect(first?.$case === "task" && first.value.id).toBe(asked.id);
    const last = events.at(-1)?.payload;
    expect(last?.$case === "statusUpdate" && last.value.status?.state).toBe(
      TaskState.TASK_STATE_COMPLETED,
    );
    const done = await client.getTask({ id: asked.id } as never);
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(done)).toBe(
      "Plan: 1) back up the database, 2) migrate it.Approved. Backed up and migrated.",
    );
    expect(dataOf(done, "state")).toEqual({ plan: ["back up", "migrate"], status: "done" });

    // One task, one ACP run: it reads back through ACP on the context's thread.
    const run = await t.call("GET", `/threads/${contextId}/runs/${asked.id}`);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ run_id: asked.id, status: "success" });

    // A finished task takes no more messages.
    await expect(
      client.sendMessage({ message: userMessage("again", { taskId: asked.id }) } as never),
    ).rejects.toMatchObject({ name: "UnsupportedOperationError" });
  });
});
