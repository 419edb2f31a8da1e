/**
 * MCP 2026-07-28 across replicas sharing one PostgreSQL (real CLI processes), with the official
 * 2026 clients: an InputRequiredResult given by one replica is retried on the other and the
 * same run resumes; a task of the tasks extension made on one replica is read, answered
 * (tasks/update) and cancelled on the other through `@modelcontextprotocol/ext-tasks`. The
 * revision is stateless and a task is its run, so no replica needs anything of the other.
 */
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { taskId as asTaskId } from "@modelcontextprotocol/ext-tasks/core";
import { describe, expect, it } from "vitest";
import { textOf } from "../mcp/helpers.js";
import { MODERN, modernClient, modernPost, rawDispatchTo } from "../mcp/modern-helpers.js";
import { MCP_REPLICA_CONFIG as CONFIG } from "./mcp-agents.js";
import { replicasOfSuite, until } from "./replicas.js";

const asking = { elicitation: { form: {} } };

describe("MCP 2026-07-28 across replicas sharing one PostgreSQL", () => {
  const replicas = replicasOfSuite("acp_mcp26", CONFIG);

  it("an InputRequiredResult of one replica is retried on the other, resuming the same run", async () => {
    const call = (url: string, extra: Record<string, unknown> = {}) =>
      modernPost(
        `${url}/mcp`,
        "tools/call",
        { name: "approval", arguments: { message: "plan" }, ...extra },
        { capabilities: asking },
      );
    const first = (await (await call(replicas[0]!.url)).json()) as {
      result: { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
    };
    expect(first.result.resultType).toBe("input_required");
    const [key] = Object.keys(first.result.inputRequests);
    const retried = (await (
      await call(replicas[1]!.url, {
        inputResponses: { [key!]: { action: "accept", content: { approved: true } } },
        requestState: first.result.requestState,
      })
    ).json()) as { result: Record<string, unknown> };
    expect(retried.result.resultType).toBe("complete");
    expect(textOf(retried.result)).toBe("Done.");
  }, 60_000);

  it("a task made on one replica is read, answered and finished on the other", async () => {
    const capabilities = asking;
    const client = await modernClient(`${replicas[0]!.url}/mcp`, { capabilities });
    // Calls go to A (the client's connection), the task's methods to B (the raw path).
    const session = createTaskSessionFromClient(client, {
      endpointId: "replicas",
      rawDispatch: rawDispatchTo(`${replicas[1]!.url}/mcp`),
      v2RequestFraming: {
        protocolVersion: MODERN,
        clientInfo: { name: "replicas", version: "1" },
        clientCapabilities: capabilities,
      },
      onInputRequest: async () => ({ action: "accept", content: { approved: true } }) as never,
    });
    const created = await modernPost(
      `${replicas[0]!.url}/mcp`,
      "tools/call",
      { name: "approval", arguments: { message: "plan" } },
      { capabilities: { ...asking, extensions: { "io.modelcontextprotocol/tasks": {} } } },
    );
    const { taskId } = ((await created.json()) as { result: { taskId: string } }).result;
    const onB = session.task(asTaskId(taskId));
    await until(
      async () => (await onB.snapshot()).status === "input_required",
      20_000,
      "the task to ask",
    );
    // The question as B tells it (tasks/get's inputRequests), answered on B.
    const asked = await modernPost(
      `${replicas[1]!.url}/mcp`,
      "tasks/get",
      { taskId },
      { capabilities: asking },
    );
    const { inputRequests } = ((await asked.json()) as { result: { inputRequests: object } })
      .result;
    const [key] = Object.keys(inputRequests);
    await onB.update({ [key!]: { action: "accept", content: { approved: true } } });
    const outcome = await onB.result();
    expect(outcome.status).toBe("completed");
    expect(textOf((outcome as { result: object }).result)).toBe("Done.");
    await session.close();
  }, 60_000);

  it("a task made on one replica is cancelled from the other", async () => {
    const created = await modernPost(
      `${replicas[0]!.url}/mcp`,
      "tools/call",
      {
        name: "slow",
        arguments: { message: Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ") },
      },
      { capabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } },
    );
    const { taskId } = ((await created.json()) as { result: { taskId: string } }).result;
    const tasks = { extensions: { "io.modelcontextprotocol/tasks": {} } };
    const cancel = await modernPost(
      `${replicas[1]!.url}/mcp`,
      "tasks/cancel",
      { taskId },
      { capabilities: tasks },
    );
    expect(((await cancel.json()) as { result: unknown }).result).toMatchObject({
      resultType: "complete",
    });
    const read = await modernPost(
      `${replicas[0]!.url}/mcp`,
      "tasks/get",
      { taskId },
      { capabilities: tasks },
    );
    expect(((await read.json()) as { result: { status: string } }).result.status).toBe("cancelled");
  }, 60_000);
});
