/**
 * MCP tasks across replicas sharing one PostgreSQL (real CLI processes), with the official SDK
 * client: a task made on one replica is read, answered (its interrupt asked by elicitation on
 * tasks/result) and cancelled from the other, each client in a session of its own replica. A
 * task is its run, so no replica needs the session that made it.
 */
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { mcpClient, textOf } from "../mcp/helpers.js";
import { MCP_REPLICA_CONFIG as CONFIG } from "./mcp-agents.js";
import { replicasOfSuite, until } from "./replicas.js";

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

describe("MCP tasks across replicas sharing one PostgreSQL", () => {
  const replicas = replicasOfSuite("acp_mcp", CONFIG);

  const startTask = async (name: string, message: string) => {
    const client = await mcpClient(`${replicas[0]!.url}/mcp`);
    const created = await client.request(
      { method: "tools/call", params: { name, arguments: { message }, task: {} } },
      CreateTaskResultSchema,
    );
    await client.close();
    return created.task.taskId;
  };

  it("a task made on one replica is read and its result fetched on the other", async () => {
    const text = words(20);
    const taskId = await startTask("slow", text);
    const other = await mcpClient(`${replicas[1]!.url}/mcp`);
    expect((await other.experimental.tasks.getTask(taskId)).taskId).toBe(taskId);
    const result = await other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(textOf(result)).toBe(text);
    expect((await other.experimental.tasks.getTask(taskId)).status).toBe("completed");
    expect((await other.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toContain(
      taskId,
    );
    await other.close();
  }, 60_000);

  it("an input_required task made on one replica is answered on the other", async () => {
    const taskId = await startTask("approval", "plan");
    const other = await mcpClient(`${replicas[1]!.url}/mcp`, {
      capabilities: { elicitation: { form: {} } },
    });
    const asked: string[] = [];
    other.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: "accept", content: { approved: true } };
    });
    await until(
      async () => (await other.experimental.tasks.getTask(taskId)).status === "input_required",
      20_000,
      "the task to ask",
    );
    const result = await other.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(asked).toEqual(["approval: Go ahead?"]);
    expect(textOf(result)).toBe("Done.");
    await other.close();
  }, 60_000);

  it("a task made on one replica is cancelled from the other", async () => {
    const taskId = await startTask("slow", words(200));
    const other = await mcpClient(`${replicas[1]!.url}/mcp`);
    const cancelled = await other.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe("cancelled");
    const first = await mcpClient(`${replicas[0]!.url}/mcp`);
    expect((await first.experimental.tasks.getTask(taskId)).status).toBe("cancelled");
    await first.close();
    await other.close();
  }, 60_000);
});
