/**
 * Task status notifications across replicas sharing one PostgreSQL (real CLI processes): a
 * task waiting for input on one replica is answered on the other, and the replica the client
 * listens on tells each change as the run makes it there (input_required, working, completed):
 * on 2025-11-25 as `notifications/tasks/status` on the session's stream (the official SDK
 * client), on 2026-07-28 as `notifications/tasks` on a subscriptions/listen stream.
 */
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  TaskStatusNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { openSse } from "../helpers/sse.js";
import { mcpClient, textOf } from "../mcp/helpers.js";
import { MODERN, modernPost } from "../mcp/modern-helpers.js";
import { MCP_REPLICA_CONFIG as CONFIG } from "./mcp-agents.js";
import { replicasOfSuite, until } from "./replicas.js";

describe("MCP task status notifications across replicas", () => {
  const replicas = replicasOfSuite("acp_mcpst", CONFIG);

  it("2025-11-25: the session on one replica is told of an answer given on the other", async () => {
    const watcher = await mcpClient(`${replicas[0]!.url}/mcp`);
    const told: string[] = [];
    watcher.setNotificationHandler(TaskStatusNotificationSchema, (note) => {
      told.push(note.params.status);
    });
    const created = await watcher.request(
      {
        method: "tools/call",
        params: { name: "approval", arguments: { message: "plan" }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    await until(async () => told.includes("input_required"), 20_000, "input_required told");

    const answerer = await mcpClient(`${replicas[1]!.url}/mcp`, {
      capabilities: { elicitation: { form: {} } },
    });
    answerer.setRequestHandler(ElicitRequestSchema, async () => ({
      action: "accept",
      content: { approved: true },
    }));
    const result = await answerer.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(textOf(result)).toBe("Done.");
    await until(async () => told.includes("completed"), 20_000, "completed told");
    expect(told).toEqual(["input_required", "working", "completed"]);
    await answerer.close();
    await watcher.close();
  }, 60_000);

  it("2026-07-28: a listen stream on one replica follows a task answered on the other", async () => {
    const asking = {
      elicitation: { form: {} },
      extensions: { "io.modelcontextprotocol/tasks": {} },
    };
    const [a, b] = [replicas[0]!.url, replicas[1]!.url];
    const created = await modernPost(
      `${a}/mcp`,
      "tools/call",
      { name: "approval", arguments: { message: "plan" } },
      { capabilities: asking },
    );
    const { taskId } = ((await created.json()) as { result: { taskId: string } }).result;
    const stream = await openSse(a, "/mcp", {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "subscriptions/listen",
      },
      body: {
        jsonrpc: "2.0",
        id: "across",
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
      params: { notifications: { taskIds: [taskId] } },
    });
    const asked = (await stream.frame(1)).data as {
      params: { status: string; inputRequests: Record<string, unknown> };
    };
    expect(asked.params.status).toBe("input_required");
    const [key] = Object.keys(asked.params.inputRequests);
    const updated = await modernPost(
      `${b}/mcp`,
      "tasks/update",
      { taskId, inputResponses: { [key!]: { action: "accept", content: { approved: true } } } },
      { capabilities: asking },
    );
    expect(((await updated.json()) as { result: unknown }).result).toMatchObject({
      resultType: "complete",
    });
    const statuses: string[] = [];
    for (let i = 2; i <= 3; i++) {
      statuses.push(((await stream.frame(i)).data as { params: { status: string } }).params.status);
    }
    expect(statuses).toEqual(["working", "completed"]);
    const done = (await stream.frame(3)).data as { params: { result: object } };
    expect(textOf(done.params.result)).toBe("Done.");
    expect((await stream.frame(4)).data).toMatchObject({ id: "across", result: {} });
    await stream.ended;
  }, 60_000);
});
