/**
 * Task status notifications as the run changes, with the official clients: on 2025-11-25
 * `notifications/tasks/status` on the session's stream for each status a task takes
 * (input_required, working again once answered, its end); on 2026-07-28 `notifications/tasks`
 * on a subscriptions/listen stream, a cancelled task told as cancelled.
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
import { openSse } from "../helpers/sse.js";
import { mcpClient, textOf } from "./helpers.js";
import { MODERN, modernPost } from "./modern-helpers.js";

describe("task status notifications as the run changes", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({ unchecked: true }));
  });
  afterAll(async () => {
    await t.close();
  });

  /** Waits (a bounded number of turns) until `check` holds; notifications come on their own stream. */
  const until = async (check: () => boolean) => {
    for (let i = 0; i < 500 && !check(); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it("2025-11-25: input_required, working once answered, then completed", async () => {
    const client = await mcpClient(`${base}/mcp`, { capabilities: { elicitation: { form: {} } } });
    const told: Array<{ taskId: string; status: string }> = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (note) => {
      told.push({ taskId: note.params.taskId, status: note.params.status });
    });
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: "accept",
      content: { approved: true },
    }));
    let taskId = "";
    let result: unknown;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "approval-demo", arguments: { message: "plan" } },
      CallToolResultSchema,
      { task: {} },
    )) {
      if (message.type === "taskCreated") taskId = message.task.taskId;
      if (message.type === "result") result = message.result;
    }
    expect(textOf(result as object)).toContain("Approved. Backed up and migrated.");
    await until(() => told.some((note) => note.status === "completed"));
    expect(told).toEqual([
      { taskId, status: "input_required" },
      { taskId, status: "working" },
      { taskId, status: "completed" },
    ]);
    await client.close();
  });

  it("2025-11-25: a task cancelled while it waits for input is told as cancelled", async () => {
    const client = await mcpClient(`${base}/mcp`);
    const told: string[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (note) => {
      told.push(note.params.status);
    });
    const created = await client.request(
      {
        method: "tools/call",
        params: { name: "approval-demo", arguments: { message: "plan" }, task: {} },
      },
      CreateTaskResultSchema,
    );
    await until(() => told.includes("input_required"));
    await client.experimental.tasks.cancelTask(created.task.taskId);
    await until(() => told.includes("cancelled"));
    expect(told).toEqual(["input_required", "cancelled"]);
    await client.close();
  });

  it("2026-07-28: a listened task cancelled while it waits for input is told as cancelled", async () => {
    const asking = { extensions: { "io.modelcontextprotocol/tasks": {} } };
    const created = await modernPost(
      `${base}/mcp`,
      "tools/call",
      { name: "approval-demo", arguments: { message: "plan" } },
      { capabilities: asking },
    );
    const { taskId } = ((await created.json()) as { result: { taskId: string } }).result;
    const stream = await openSse(base, "/mcp", {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "subscriptions/listen",
      },
      body: {
        jsonrpc: "2.0",
        id: "listen-cancel",
        method: "subscriptions/listen",
        params: {
          notifications: { taskIds: [taskId] },
          _meta: {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": asking,
          },
        },
      },
    });
    expect((await stream.frame(0)).data).toMatchObject({
      method: "notifications/subscriptions/acknowledged",
    });
    const asked = (await stream.frame(1)).data as { params: { status: string } };
    expect(asked.params.status).toBe("input_required");
    await modernPost(`${base}/mcp`, "tasks/cancel", { taskId }, { capabilities: asking });
    const cancelled = (await stream.frame(2)).data as {
      method: string;
      params: { taskId: string; status: string };
    };
    expect(cancelled.method).toBe("notifications/tasks");
    expect(cancelled.params).toMatchObject({ taskId, status: "cancelled" });
    expect((await stream.frame(3)).data).toMatchObject({ id: "listen-cancel", result: {} });
    await stream.ended;
  });
});
