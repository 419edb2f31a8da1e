/**
 * Experimental tasks (2025-11-25) with the official SDK client: a tool call made as a task
 * answers its task at once and is polled to its result; the task id is the run's, read back
 * through ACP; an interrupted run is `input_required` and tasks/result asks the question as an
 * elicitation, resuming the same run; tasks/list and tasks/cancel act on the runs.
 */
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { mcpClient, textOf } from "./helpers.js";

type Message = { type: string; task?: { taskId: string; status: string }; result?: unknown };

describe("MCP tasks on the sample agents", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({ unchecked: true }));
  });
  afterAll(async () => {
    await t.close();
  });

  const collect = async (stream: AsyncGenerator<unknown>) => {
    const messages: Message[] = [];
    for await (const message of stream) messages.push(message as Message);
    return messages;
  };

  it("declares tasks and lets every tool run as one", async () => {
    const client = await mcpClient(`${base}/mcp`);
    expect(client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await client.listTools();
    expect(tools.every((tool) => tool.execution?.taskSupport === "optional")).toBe(true);
    await client.close();
  });

  it("a call as a task is polled to its result; its id is the run's", async () => {
    const client = await mcpClient(`${base}/mcp`);
    const messages = await collect(
      client.experimental.tasks.callToolStream(
        { name: "word-count", arguments: { message: "a b c" } },
        CallToolResultSchema,
        { task: { ttl: 60_000 } },
      ),
    );
    expect(messages[0]).toMatchObject({ type: "taskCreated", task: { status: "working" } });
    const taskId = messages[0]!.task!.taskId;
    const last = messages.at(-1)!;
    expect(last.type).toBe("result");
    expect(textOf(last.result as object)).toBe("3 words (3 so far).");
    expect((last.result as { _meta: Record<string, unknown> })._meta).toMatchObject({
      "io.modelcontextprotocol/related-task": { taskId },
    });
    const run = await t.call("GET", `/runs/${taskId}`);
    expect(run.body).toMatchObject({ run_id: taskId, status: "success" });
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({
      taskId,
      status: "completed",
    });
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map((task) => task.taskId)).toContain(taskId);
    await client.close();
  });

  it("an interrupted run is input_required; tasks/result asks and resumes the same run", async () => {
    const client = await mcpClient(`${base}/mcp`, { capabilities: { elicitation: { form: {} } } });
    const asked: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params);
      return { action: "accept", content: { approved: true } };
    });
    const messages = await collect(
      client.experimental.tasks.callToolStream(
        { name: "approval-demo", arguments: { message: "plan" } },
        CallToolResultSchema,
        { task: {} },
      ),
    );
    const statuses = messages.filter((m) => m.type === "taskStatus").map((m) => m.task!.status);
    expect(statuses).toContain("input_required");
    expect(asked).toHaveLength(1);
    const last = messages.at(-1)!;
    expect(textOf(last.result as object)).toContain("Approved. Backed up and migrated.");
    const taskId = messages[0]!.task!.taskId;
    expect((await t.call("GET", `/runs/${taskId}`)).body).toMatchObject({ status: "success" });
    await client.close();
  });

  it("tasks/cancel cancels the run; a finished task cannot be cancelled", async () => {
    const client = await mcpClient(`${base}/mcp`);
    const statuses: string[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (note) => {
      statuses.push(note.params.status);
    });
    const created = await client.request(
      {
        method: "tools/call",
        params: { name: "approval-demo", arguments: { message: "plan" }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    let task = await client.experimental.tasks.getTask(taskId);
    while (task.status === "working") {
      await new Promise((resolve) => setTimeout(resolve, 50));
      task = await client.experimental.tasks.getTask(taskId);
    }
    expect(task.status).toBe("input_required");
    expect(task.statusMessage).toBe("The agent asks: Approve the plan?");
    // The session's stream was told when the run stopped to ask.
    for (let i = 0; i < 100 && statuses.length === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(statuses).toEqual(["input_required"]);
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe("cancelled");
    expect((await t.call("GET", `/runs/${taskId}`)).body).toMatchObject({ status: "error" });
    await expect(client.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({
      code: -32602,
    });
    await expect(client.experimental.tasks.getTask("no-such-task")).rejects.toMatchObject({
      code: -32602,
    });
    await client.close();
  });
});
