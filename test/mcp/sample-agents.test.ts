/**
 * Every demo agent of config/sample.yaml as an MCP tool, with the official SDK's client over
 * Streamable HTTP (2025-11-25): listed at /mcp and alone at /mcp/{agent}, called and answered
 * with what the agent said, a conversation kept with `context`, and each call an ACP run.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { mcpClient, runIdOf, textOf } from "./helpers.js";

describe("the sample config's agents as MCP tools", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({ unchecked: true }));
  });
  afterAll(async () => {
    await t.close();
  });

  it("negotiates 2025-11-25 and lists a tool per agent with its schema", async () => {
    const client = await mcpClient(`${base}/mcp`);
    expect(client.getServerVersion()?.name).toBe("acp-agui");
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual([
      "approval-demo",
      "echo",
      "remote-echo",
      "scripted-demo",
      "word-count",
    ]);
    const echo = tools.find((tool) => tool.name === "echo")!;
    expect(echo.description).toContain("Streams back the last user message");
    expect(echo.inputSchema).toMatchObject({
      type: "object",
      required: ["message"],
      properties: { message: { type: "string" }, context: { type: "string" } },
    });
    expect(echo.outputSchema).toBeUndefined();
    await client.close();
  });

  it.each([
    ["echo", "hi echo", "hi echo"],
    ["remote-echo", "over the wire", "over the wire"],
    ["word-count", "one two three", "3 words (3 so far)."],
    ["scripted-demo", "weather?", "Let me check the weather in Lisbon."],
  ])("calling %s answers what the agent said", async (name, said, answer) => {
    const client = await mcpClient(`${base}/mcp`);
    const result = await client.callTool({ name, arguments: { message: said } });
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toBe(answer);
    const runId = runIdOf(result);
    // The call is an ACP run, made by the MCP face.
    const run = await t.call("GET", `/runs/${runId}`);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ run_id: runId, status: "success" });
    // The inspector says which face started it.
    const listed = await t.app.inject({ method: "GET", url: "/ui/api/runs?limit=50" });
    const entry = (listed.json() as Array<{ run_id: string; face: string }>).find(
      (r) => r.run_id === runId,
    );
    expect(entry?.face).toBe("mcp");
    await client.close();
  });

  it("answers an agent's state or result as structuredContent", async () => {
    const client = await mcpClient(`${base}/mcp`);
    const scripted = await client.callTool({ name: "scripted-demo", arguments: { message: "go" } });
    expect(scripted.structuredContent).toEqual({
      city: "Lisbon",
      forecast: { temperature: 21, sky: "clear" },
    });
    const counted = await client.callTool({ name: "word-count", arguments: { message: "a b" } });
    expect(counted.structuredContent).toEqual({ words: 2 });
    await client.close();
  });

  it("keeps a conversation on one thread with context, and none without", async () => {
    const client = await mcpClient(`${base}/mcp`);
    const call = (message: string, context?: string) =>
      client.callTool({
        name: "word-count",
        arguments: context ? { message, context } : { message },
      });
    expect(textOf(await call("one two", "talk-1"))).toBe("2 words (2 so far).");
    expect(textOf(await call("three four five", "talk-1"))).toBe("3 words (5 so far).");
    expect(textOf(await call("six"))).toBe("1 words (1 so far).");
    expect(textOf(await call("seven"))).toBe("1 words (1 so far).");
    expect(textOf(await call("eight", "talk-2"))).toBe("1 words (1 so far).");
    await client.close();
  });

  it("a call with context is a task A2A reads back, on the context of that name", async () => {
    const client = await mcpClient(`${base}/mcp`);
    const result = await client.callTool({
      name: "word-count",
      arguments: { message: "seen elsewhere", context: "shared-with-a2a" },
    });
    const runId = runIdOf(result);
    const response = await fetch(`${base}/a2a/word-count`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: runId } }),
    });
    const task = ((await response.json()) as { result: Record<string, unknown> }).result;
    expect(task).toMatchObject({
      id: runId,
      contextId: "shared-with-a2a",
      status: { state: "TASK_STATE_COMPLETED" },
    });
    await client.close();
  });

  it("serves one agent alone at /mcp/{agent}, by name or name@version", async () => {
    for (const ref of ["echo", "echo@1.0.0"]) {
      const client = await mcpClient(`${base}/mcp/${ref}`);
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(["echo"]);
      expect(textOf(await client.callTool({ name: "echo", arguments: { message: "solo" } }))).toBe(
        "solo",
      );
      await expect(
        client.callTool({ name: "word-count", arguments: { message: "x" } }),
      ).rejects.toThrow(/unknown tool "word-count"/);
      await client.close();
    }
  });

  it("refuses arguments that are not the tool's with InvalidParams", async () => {
    const client = await mcpClient(`${base}/mcp`);
    await expect(client.callTool({ name: "echo", arguments: {} })).rejects.toMatchObject({
      code: -32602,
    });
    await expect(
      client.callTool({ name: "echo", arguments: { message: "x", extra: 1 } }),
    ).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });
});
