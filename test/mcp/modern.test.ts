/**
 * MCP 2026-07-28 (stateless) through the official `@modelcontextprotocol/client` pinned to that
 * revision, against the sample server: server/discover, tools/list, a blocking tools/call, and
 * approval-demo's interrupt as an InputRequiredResult the client fulfils and retries with
 * `inputResponses` and `requestState`, resuming the same run. The wire checks (headers that
 * do not match, `_meta` missing, another caller's requestState) are raw POSTs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { runIdOf, textOf } from "./helpers.js";
import { MODERN, modernClient, modernPost } from "./modern-helpers.js";

const V = MODERN;

describe("MCP 2026-07-28 with @modelcontextprotocol/client", () => {
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

  it("discovers the server, lists the agents as tools and calls one blocking", async () => {
    const client = await modernClient(`${base}/mcp`);
    expect(client.getNegotiatedProtocolVersion()).toBe(V);
    expect(client.getServerVersion()).toEqual({ name: "acp-agui", version: "0.2.0" });
    expect(client.getServerCapabilities()?.tools).toBeDefined();
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(
      expect.arrayContaining(["echo", "approval-demo"]),
    );
    const result = await client.callTool({ name: "echo", arguments: { message: "hello 2026" } });
    expect(textOf(result)).toBe("hello 2026");
    expect((await runOf(runIdOf(result))).status).toBe("success");
    await client.close();
  });

  it("sends notifications/progress on the call's stream for a progress token", async () => {
    const client = await modernClient(`${base}/mcp`);
    const said = "one two three four five six seven eight nine ten eleven twelve";
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = await client.callTool(
      { name: "echo", arguments: { message: said } },
      { onprogress: (p) => progress.push(p) },
    );
    expect(textOf(result)).toBe(said);
    expect(progress.length).toBeGreaterThan(0);
    for (const [i, p] of progress.entries()) {
      if (i > 0) expect(p.progress).toBeGreaterThan(progress[i - 1]!.progress);
      expect(said.startsWith(p.message ?? "")).toBe(true);
    }
    await client.close();
  });

  it("answers every result with its resultType and the server in _meta", async () => {
    const response = await modernPost(`${base}/mcp`, "server/discover");
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as { result: Record<string, unknown> };
    expect(result.resultType).toBe("complete");
    expect(result.supportedVersions).toEqual([V]);
    expect(result).toMatchObject({ ttlMs: 0, cacheScope: "private" });
    expect(result._meta).toEqual({
      "io.modelcontextprotocol/serverInfo": { name: "acp-agui", version: "0.2.0" },
    });
  });

  it("refuses headers that do not match the body, a missing _meta and an unknown version", async () => {
    const mismatch = await modernPost(
      `${base}/mcp`,
      "tools/call",
      { name: "echo", arguments: { message: "x" } },
      { headers: { "mcp-name": "other" } },
    );
    expect(mismatch.status).toBe(400);
    expect(((await mismatch.json()) as { error: { code: number } }).error.code).toBe(-32020);

    const noMeta = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": V,
        "mcp-method": "tools/list",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }),
    });
    expect(noMeta.status).toBe(400);
    expect(((await noMeta.json()) as { error: { code: number } }).error.code).toBe(-32602);

    const unknown = await modernPost(`${base}/mcp`, "resources/list");
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: number } }).error.code).toBe(-32601);
  });

  it("asks approval-demo's question as input_required; the retry resumes the same run", async () => {
    const client = await modernClient(`${base}/mcp`, {
      capabilities: { elicitation: { form: {} } },
    });
    const asked: Array<Record<string, unknown>> = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { action: "accept", content: { approved: true, comment: "go" } };
    });
    const result = await client.callTool({ name: "approval-demo", arguments: { message: "plan" } });
    expect(asked).toEqual([
      {
        mode: "form",
        message: "approval-demo: Approve the plan?",
        requestedSchema: {
          type: "object",
          properties: { approved: { type: "boolean" }, comment: { type: "string" } },
          required: ["approved"],
        },
      },
    ]);
    expect(result.isError).toBeFalsy();
    expect(textOf(result)).toContain("Approved. Backed up and migrated.");
    expect((await runOf(runIdOf(result))).status).toBe("success");
    await client.close();
  });
});

describe("MCP 2026-07-28 requestState between callers", () => {
  const KEY = "a-key-long-enough-for-the-server-1234";
  const OTHER = "another-key-long-enough-for-the-server";
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({
      unchecked: true,
      settings: {
        auth: {
          keys: [
            { key: KEY, name: "one" },
            { key: OTHER, name: "two" },
          ],
        },
      } as never,
    }));
  });
  afterAll(async () => {
    await t.close();
  });

  const asking = { elicitation: { form: {} } };
  const approve = { action: "accept", content: { approved: true } };

  it("refuses another caller's requestState as InvalidParams and resumes only for its own", async () => {
    const first = await modernPost(
      `${base}/mcp`,
      "tools/call",
      { name: "approval-demo", arguments: { message: "plan" } },
      { headers: { authorization: `Bearer ${KEY}` }, capabilities: asking },
    );
    const { result } = (await first.json()) as {
      result: { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
    };
    expect(result.resultType).toBe("input_required");
    const [key] = Object.keys(result.inputRequests);
    const retry = (bearer: string, requestState: string) =>
      modernPost(
        `${base}/mcp`,
        "tools/call",
        {
          name: "approval-demo",
          arguments: { message: "plan" },
          inputResponses: { [key!]: approve },
          requestState,
        },
        { headers: { authorization: `Bearer ${bearer}` }, capabilities: asking },
      );

    const stolen = await retry(OTHER, result.requestState);
    const refused = (await stolen.json()) as { error: { code: number; message: string } };
    expect(refused.error.code).toBe(-32602);
    expect(refused.error.message).toBe("requestState refused: its run is not found");

    const forged = await retry(KEY, "bm90LW9uZS1vZi1vdXJz");
    expect(((await forged.json()) as { error: { code: number } }).error.code).toBe(-32602);

    const own = await retry(KEY, result.requestState);
    const done = (await own.json()) as { result: Record<string, unknown> };
    expect(done.result.resultType).toBe("complete");
    expect(done.result.isError).toBeFalsy();
    expect(textOf(done.result)).toContain("Approved. Backed up and migrated.");
    // The same run it asked from, resumed: not a new one.
    const state = JSON.parse(Buffer.from(result.requestState, "base64url").toString()) as {
      r: string;
    };
    expect(runIdOf(done.result)).toBe(state.r);

    // Used up: the run no longer waits, so the same state cannot resume it twice.
    const again = await retry(KEY, result.requestState);
    expect(((await again.json()) as { error: { code: number } }).error.code).toBe(-32602);
  });

  it("answers tasks/get, tasks/update and tasks/cancel of another caller's task as not found", async () => {
    const tasks = { extensions: { "io.modelcontextprotocol/tasks": {} } };
    const created = await modernPost(
      `${base}/mcp`,
      "tools/call",
      { name: "echo", arguments: { message: "mine" } },
      { headers: { authorization: `Bearer ${KEY}` }, capabilities: tasks },
    );
    const task = ((await created.json()) as { result: { resultType: string; taskId: string } })
      .result;
    expect(task.resultType).toBe("task");
    for (const method of ["tasks/get", "tasks/update", "tasks/cancel"]) {
      const response = await modernPost(
        `${base}/mcp`,
        method,
        { taskId: task.taskId, ...(method === "tasks/update" ? { inputResponses: {} } : {}) },
        { headers: { authorization: `Bearer ${OTHER}` }, capabilities: tasks },
      );
      expect(await response.json()).toMatchObject({
        error: { code: -32602, message: `task "${task.taskId}" not found` },
      });
    }
    const own = await modernPost(
      `${base}/mcp`,
      "tasks/get",
      { taskId: task.taskId },
      { headers: { authorization: `Bearer ${KEY}` }, capabilities: tasks },
    );
    expect(((await own.json()) as { result: { taskId: string } }).result.taskId).toBe(task.taskId);
  });

  it("asks again when the retry leaves the question unanswered", async () => {
    const headers = { authorization: `Bearer ${KEY}` };
    const first = await modernPost(
      `${base}/mcp`,
      "tools/call",
      { name: "approval-demo", arguments: { message: "plan" } },
      { headers, capabilities: asking },
    );
    const { result } = (await first.json()) as { result: { requestState: string } };
    const retry = await modernPost(
      `${base}/mcp`,
      "tools/call",
      { name: "approval-demo", arguments: { message: "plan" }, requestState: result.requestState },
      { headers, capabilities: asking },
    );
    const asked = (await retry.json()) as { result: { resultType: string; requestState: string } };
    expect(asked.result.resultType).toBe("input_required");
    expect(asked.result.requestState).toBe(result.requestState);
  });
});
