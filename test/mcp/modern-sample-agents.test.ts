/**
 * Every demo agent of config/sample.yaml through the official 2026-07-28 client
 * (`@modelcontextprotocol/client`, with `@modelcontextprotocol/ext-tasks` for tasks): discovered,
 * listed, called blocking (with progress for a progress token) and as a task of the
 * extension, each answered with what the agent said and each an ACP run made by the MCP face.
 * The agent that interrupts (approval-demo) asks its question as an InputRequiredResult on a
 * call and as `inputRequests` on a task, and the same run resumes with the answer.
 */
import type { Client } from "@modelcontextprotocol/client";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { runIdOf, textOf } from "./helpers.js";
import { MODERN, modernClient, rawDispatchTo } from "./modern-helpers.js";

/** Each agent of the sample, what it is told and what it answers. */
const AGENTS = [
  ["echo", "hi echo", "hi echo"],
  ["remote-echo", "over the wire", "over the wire"],
  ["word-count", "one two three", "3 words (3 so far)."],
  ["scripted-demo", "weather?", "Let me check the weather in Lisbon."],
] as const;

describe("the sample config's agents with the 2026-07-28 client", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({ unchecked: true }));
  });
  afterAll(async () => {
    await t.close();
  });

  const capabilities = { elicitation: { form: {} } };
  const approve = { action: "accept" as const, content: { approved: true, comment: "go" } };

  /** The run as ACP reads it, and the face the inspector says started it. */
  const runOf = async (runId: string) => {
    const run = (await t.call("GET", `/runs/${runId}`)).body as { status: string };
    const listed = await t.app.inject({ method: "GET", url: "/ui/api/runs?limit=100" });
    const entry = (listed.json() as Array<{ run_id: string; face: string }>).find(
      (r) => r.run_id === runId,
    );
    return { status: run.status, face: entry?.face };
  };

  const taskSession = async (
    client: Client,
    onInput?: (params: Record<string, unknown>) => unknown,
  ) =>
    createTaskSessionFromClient(client, {
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

  it("discovers the server and lists every agent as a tool", async () => {
    const client = await modernClient(`${base}/mcp`);
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "approval-demo",
      "echo",
      "remote-echo",
      "scripted-demo",
      "word-count",
    ]);
    for (const tool of tools) {
      expect(tool.inputSchema).toMatchObject({ type: "object", required: ["message"] });
    }
    await client.close();
  });

  it.each(AGENTS)(
    "calls %s blocking: the agent's answer, an ACP run by mcp",
    async (name, said, answer) => {
      const client = await modernClient(`${base}/mcp`);
      const result = await client.callTool({ name, arguments: { message: said } });
      expect(result.isError).toBeFalsy();
      expect(textOf(result)).toBe(answer);
      expect(await runOf(runIdOf(result))).toEqual({ status: "success", face: "mcp" });
      await client.close();
    },
  );

  it.each(AGENTS)(
    "calls %s with a progress token: told progress on the call's stream",
    async (name, said, answer) => {
      const client = await modernClient(`${base}/mcp`);
      const progress: number[] = [];
      const result = await client.callTool(
        { name, arguments: { message: said } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(textOf(result)).toBe(answer);
      expect(progress.length).toBeGreaterThan(0);
      expect(progress).toEqual([...progress].sort((a, b) => a - b));
      expect(new Set(progress).size).toBe(progress.length);
      await client.close();
    },
  );

  it.each(AGENTS)(
    "runs %s as a task of the extension, polled to its result",
    async (name, said, answer) => {
      const client = await modernClient(`${base}/mcp`, { capabilities });
      const session = await taskSession(client);
      const execution = await session.callTool(name, { message: said });
      expect(execution.kind).toBe("task");
      const taskId = execution.handle!.taskId;
      const { outcome } = await execution.settle();
      expect(outcome.status).toBe("completed");
      expect(textOf((outcome as { result: object }).result)).toBe(answer);
      expect(await runOf(taskId)).toEqual({ status: "success", face: "mcp" });
      await session.close();
    },
  );

  it("answers scripted-demo's state and word-count's result as structuredContent", async () => {
    const client = await modernClient(`${base}/mcp`);
    const scripted = await client.callTool({ name: "scripted-demo", arguments: { message: "go" } });
    expect(scripted.structuredContent).toEqual({
      city: "Lisbon",
      forecast: { temperature: 21, sky: "clear" },
    });
    const counted = await client.callTool({ name: "word-count", arguments: { message: "a b" } });
    expect(counted.structuredContent).toEqual({ words: 2 });
    await client.close();
  });

  it("keeps word-count's conversation on one thread with context", async () => {
    const client = await modernClient(`${base}/mcp`);
    const call = async (message: string, context?: string) =>
      textOf(
        await client.callTool({
          name: "word-count",
          arguments: context ? { message, context } : { message },
        }),
      );
    expect(await call("one two", "modern-talk")).toBe("2 words (2 so far).");
    expect(await call("three four five", "modern-talk")).toBe("3 words (5 so far).");
    expect(await call("six")).toBe("1 words (1 so far).");
    await client.close();
  });

  it("approval-demo asks as input_required; the retry resumes the same run", async () => {
    const client = await modernClient(`${base}/mcp`, { capabilities });
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push((request.params as { message: string }).message);
      return approve;
    });
    const result = await client.callTool({ name: "approval-demo", arguments: { message: "plan" } });
    expect(asked).toEqual(["approval-demo: Approve the plan?"]);
    expect(textOf(result)).toBe(
      "Plan: 1) back up the database, 2) migrate it.\n\nApproved. Backed up and migrated.",
    );
    expect(await runOf(runIdOf(result))).toEqual({ status: "success", face: "mcp" });
    await client.close();
  });

  it("approval-demo as a task: its question in the task, answered, the same run done", async () => {
    const client = await modernClient(`${base}/mcp`, { capabilities });
    const asked: Array<Record<string, unknown>> = [];
    const session = await taskSession(client, (params) => {
      asked.push(params);
      return approve;
    });
    const execution = await session.callTool("approval-demo", { message: "plan" });
    const taskId = execution.handle!.taskId;
    const { outcome } = await execution.settle();
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({
      mode: "form",
      message: "approval-demo: Approve the plan?",
      requestedSchema: { required: ["approved"] },
    });
    expect(outcome.status).toBe("completed");
    expect(textOf((outcome as { result: object }).result)).toContain("Approved.");
    expect(await runOf(taskId)).toEqual({ status: "success", face: "mcp" });
    await session.close();
  });
});
