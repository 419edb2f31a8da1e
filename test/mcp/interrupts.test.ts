/**
 * A run's progress and interrupts through the official SDK client: `notifications/progress` for
 * a call with a progress token, and approval-demo's interrupt put to the caller as
 * `elicitation/create` (form mode, the descriptor's resume schema as the form). Accept resumes
 * the same run with the answer; decline answers the interrupt as refused; cancel leaves the run
 * waiting, as does a client that cannot be asked, and the result says how to answer it.
 */
import { ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { mcpClient, runIdOf, textOf } from "./helpers.js";

describe("MCP progress and elicitation on the sample agents", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({ unchecked: true }));
  });
  afterAll(async () => {
    await t.close();
  });

  /** A client that answers every elicitation with `answer`, keeping what it was asked. */
  const elicitingClient = async (answer: ElicitResult) => {
    const client = await mcpClient(`${base}/mcp`, { capabilities: { elicitation: { form: {} } } });
    const asked: Array<Record<string, unknown>> = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Record<string, unknown>);
      return answer;
    });
    return { client, asked };
  };

  const runOf = async (runId: string) =>
    (await t.call("GET", `/runs/${runId}`)).body as { status: string; run_id: string };

  it("sends notifications/progress with the reply as it is written", async () => {
    const client = await mcpClient(`${base}/mcp`);
    const said = "one two three four five six seven eight nine ten eleven twelve";
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = await client.callTool(
      { name: "echo", arguments: { message: said } },
      undefined,
      {
        onprogress: (p) => progress.push(p),
      },
    );
    expect(textOf(result)).toBe(said);
    expect(progress.length).toBeGreaterThan(0);
    for (const [i, p] of progress.entries()) {
      if (i > 0) expect(p.progress).toBeGreaterThan(progress[i - 1]!.progress);
      expect(said.startsWith(p.message ?? "")).toBe(true);
    }
    await client.close();
  });

  it("asks approval-demo's question as a form; accept resumes the same run", async () => {
    const { client, asked } = await elicitingClient({
      action: "accept",
      content: { approved: true, comment: "go" },
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
    expect(result.structuredContent).toEqual({ plan: ["back up", "migrate"], status: "done" });
    // One run, interrupted and resumed: it ended a success after two segments.
    const run = await runOf(runIdOf(result));
    expect(run.status).toBe("success");
    await client.close();
  });

  it("an answer the agent's schema refuses is InvalidParams, naming the problem", async () => {
    const { client } = await elicitingClient({
      action: "accept",
      content: { comment: "no approval field" },
    });
    await expect(
      client.callTool({ name: "approval-demo", arguments: { message: "plan" } }),
    ).rejects.toMatchObject({ code: -32602, message: expect.stringContaining("approved") });
    await client.close();
  });

  it("decline answers the interrupt as cancelled and the run goes on to its end", async () => {
    const { client, asked } = await elicitingClient({ action: "decline" });
    const result = await client.callTool({ name: "approval-demo", arguments: { message: "plan" } });
    expect(asked).toHaveLength(1);
    const run = await runOf(runIdOf(result));
    expect(run.status).not.toBe("interrupted");
    expect(run.status).not.toBe("pending");
    await client.close();
  });

  it("cancel leaves the run interrupted, and the result says how to answer it", async () => {
    const { client } = await elicitingClient({ action: "cancel" });
    const result = await client.callTool({ name: "approval-demo", arguments: { message: "plan" } });
    const runId = runIdOf(result);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Approve the plan?");
    expect(textOf(result)).toContain(runId);
    expect((await runOf(runId)).status).toBe("interrupted");
    await client.close();
  });

  it("a client without elicitation gets the question in the result; ACP resumes the run", async () => {
    const client = await mcpClient(`${base}/mcp`);
    const result = await client.callTool({ name: "approval-demo", arguments: { message: "plan" } });
    const runId = runIdOf(result);
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain("Approve the plan?");
    expect((await runOf(runId)).status).toBe("interrupted");
    const resumed = await t.call("POST", `/runs/${runId}`, { approval: { approved: true } });
    expect(resumed.status).toBe(200);
    await client.close();
  });
});
