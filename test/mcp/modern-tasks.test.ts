/**
 * The tasks extension of MCP 2026-07-28 (`io.modelcontextprotocol/tasks`) through the official
 * `@modelcontextprotocol/ext-tasks` client on `@modelcontextprotocol/client`: a tools/call
 * answered with a task whose id is the run id, polled with tasks/get to its result,
 * approval-demo's question answered with tasks/update (the same run resumes), and
 * tasks/cancel reaching the agent. The runs are read back over ACP.
 */
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { openSse } from "../helpers/sse.js";
import { textOf } from "./helpers.js";
import { MODERN, modernClient, modernPost, rawDispatchTo } from "./modern-helpers.js";

describe("MCP 2026-07-28 tasks with @modelcontextprotocol/ext-tasks", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({ unchecked: true }));
  });
  afterAll(async () => {
    await t.close();
  });

  const runOf = async (runId: string) =>
    (await t.call("GET", `/runs/${runId}`)).body as { status: string; run_id: string };

  const capabilities = { elicitation: { form: {} } };
  const taskSession = async (onInput?: (params: Record<string, unknown>) => unknown) => {
    const client = await modernClient(`${base}/mcp`, { capabilities });
    return createTaskSessionFromClient(client, {
      endpointId: "acp-agui-tests",
      rawDispatch: rawDispatchTo(`${base}/mcp`),
      v2RequestFraming: {
        protocolVersion: MODERN,
        clientInfo: { name: "acp-agui-tests", version: "1.0.0" },
        clientCapabilities: capabilities,
      },
      ...(onInput
        ? { onInputRequest: async (request) => onInput(request.params as never) as never }
        : {}),
    });
  };

  it("answers a call with a task (its id the run id) polled to the agent's reply", async () => {
    const session = await taskSession();
    expect(session.capabilities.execution).toBe(true);
    const execution = await session.callTool("echo", { message: "as a task" });
    expect(execution.kind).toBe("task");
    const taskId = execution.handle!.taskId;
    const { outcome } = await execution.settle();
    expect(outcome.status).toBe("completed");
    expect(textOf((outcome as { result: object }).result)).toBe("as a task");
    expect(await runOf(taskId)).toMatchObject({ run_id: taskId, status: "success" });
    await session.close();
  });

  it("puts approval-demo's question in the task; tasks/update resumes the same run", async () => {
    const asked: Array<Record<string, unknown>> = [];
    const session = await taskSession((params) => {
      asked.push(params);
      return { action: "accept", content: { approved: true } };
    });
    const execution = await session.callTool("approval-demo", { message: "plan" });
    const taskId = execution.handle!.taskId;
    const { outcome } = await execution.settle();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ mode: "form", message: "approval-demo: Approve the plan?" });
    expect(outcome.status).toBe("completed");
    expect(textOf((outcome as { result: object }).result)).toContain("Approved.");
    expect((await runOf(taskId)).status).toBe("success");
    await session.close();
  });

  it("cancels a task waiting for input: the run is cancelled", async () => {
    const session = await taskSession();
    const execution = await session.callTool("approval-demo", { message: "plan" });
    const taskId = execution.handle!.taskId;
    // Wait until the task asks (the run is interrupted), then cancel it.
    for (;;) {
      const task = await session.task(taskId).snapshot();
      if (task.status === "input_required") break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await session.cancelTask(taskId);
    const snapshot = await session.task(taskId).snapshot();
    expect(snapshot.status).toBe("cancelled");
    expect((await runOf(taskId)).status).not.toBe("interrupted");
    await session.close();
  });

  it("tells a task's changes with notifications/tasks on a subscriptions/listen stream", async () => {
    const asking = { ...capabilities, extensions: { "io.modelcontextprotocol/tasks": {} } };
    const created = await modernPost(
      `${base}/mcp`,
      "tools/call",
      { name: "approval-demo", arguments: { message: "plan" } },
      { capabilities: asking },
    );
    const { taskId } = ((await created.json()) as { result: { taskId: string } }).result;
    const meta = {
      "io.modelcontextprotocol/protocolVersion": MODERN,
      "io.modelcontextprotocol/clientCapabilities": asking,
    };
    const stream = await openSse(base, "/mcp", {
      method: "POST",
      headers: {
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": MODERN,
        "mcp-method": "subscriptions/listen",
      },
      body: {
        jsonrpc: "2.0",
        id: "listen-1",
        method: "subscriptions/listen",
        params: { notifications: { taskIds: [taskId, "nobody's"] }, _meta: meta },
      },
    });
    const subscription = { "io.modelcontextprotocol/subscriptionId": "listen-1" };
    expect((await stream.frame(0)).data).toEqual({
      jsonrpc: "2.0",
      method: "notifications/subscriptions/acknowledged",
      params: { _meta: subscription, notifications: { taskIds: [taskId] } },
    });
    const asked = (await stream.frame(1)).data as {
      params: { status: string; taskId: string; inputRequests: Record<string, unknown> };
    };
    expect(asked.params).toMatchObject({ taskId, status: "input_required", _meta: subscription });
    const [key] = Object.keys(asked.params.inputRequests);
    const updated = await modernPost(
      `${base}/mcp`,
      "tasks/update",
      { taskId, inputResponses: { [key!]: { action: "accept", content: { approved: true } } } },
      { capabilities: asking },
    );
    expect(((await updated.json()) as { result: unknown }).result).toMatchObject({
      resultType: "complete",
    });
    // Answered: the task works again, then completes.
    const working = (await stream.frame(2)).data as { params: { status: string } };
    expect(working.params).toMatchObject({ taskId, status: "working", _meta: subscription });
    const done = (await stream.frame(3)).data as {
      params: { status: string; result: object };
    };
    expect(done.params.status).toBe("completed");
    expect(textOf(done.params.result)).toContain("Approved.");
    // Every task it follows done: the subscription ends with its result.
    expect((await stream.frame(4)).data).toEqual({
      jsonrpc: "2.0",
      id: "listen-1",
      result: { resultType: "complete", _meta: subscription },
    });
    await stream.ended;
  });

  it("answers an unknown task id as not found", async () => {
    const response = await modernPost(`${base}/mcp`, "tasks/get", { taskId: "no-such-run" });
    const body = (await response.json()) as { error: { code: number; message: string } };
    expect(body.error).toEqual({ code: -32602, message: 'task "no-such-run" not found' });
  });
});
