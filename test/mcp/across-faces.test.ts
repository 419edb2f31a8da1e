/**
 * MCP runs read back through the other faces, each with its official client where there is
 * one: a blocking call with `context` (the 2025-11-25 SDK client) and a task of the 2026-07-28
 * extension on the same context are runs ACP reads (GET /runs/{id}, the thread's history),
 * tasks A2A reads (`tasks/get` with the run id, on the context of that name, with
 * @a2a-js/sdk), a conversation an AG-UI run on that threadId continues (@ag-ui/client), and
 * runs the inspector lists as made by the face "mcp". (A stateful run is ACP's at
 * /threads/{thread_id}/runs/{run_id}; GET /runs/{id} is a stateless run's.)
 */
import { randomUUID } from "node:crypto";
import { TaskState } from "@a2a-js/sdk";
import { createTaskSessionFromClient } from "@modelcontextprotocol/ext-tasks/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aclThreadId } from "../../src/http/agui-runs/agui-runs.js";
import { a2aClient, responseText } from "../a2a/helpers.js";
import { ReconnectingAgent } from "../helpers/agui-reconnect.js";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { mcpClient, runIdOf, textOf } from "./helpers.js";
import { MODERN, modernClient, rawDispatchTo } from "./modern-helpers.js";

describe("MCP runs read back through ACP, AG-UI, A2A and the inspector", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({ unchecked: true }));
  });
  afterAll(async () => {
    await t.close();
  });

  /** A blocking call (2025-11-25) and a task (2026-07-28) on one context: their run ids. */
  async function mcpRuns(context: string): Promise<{ called: string; tasked: string }> {
    const client = await mcpClient(`${base}/mcp`);
    const result = await client.callTool({
      name: "word-count",
      arguments: { message: "one two", context },
    });
    expect(textOf(result)).toBe("2 words (2 so far).");
    await client.close();

    const capabilities = { elicitation: { form: {} } };
    const session = await createTaskSessionFromClient(
      await modernClient(`${base}/mcp`, { capabilities }),
      {
        endpointId: "acp-agui-tests",
        rawDispatch: rawDispatchTo(`${base}/mcp`),
        v2RequestFraming: {
          protocolVersion: MODERN,
          clientInfo: { name: "acp-agui-tests", version: "1.0.0" },
          clientCapabilities: capabilities,
        },
      },
    );
    const execution = await session.callTool("word-count", { message: "three four five", context });
    expect(execution.kind).toBe("task");
    const { outcome } = await execution.settle();
    expect(textOf((outcome as { result: object }).result)).toBe("3 words (5 so far).");
    await session.close();
    return { called: runIdOf(result), tasked: execution.handle!.taskId };
  }

  it("ACP reads both runs on the context's thread, in its history; the inspector names the face", async () => {
    const context = `acp-${randomUUID()}`;
    const { called, tasked } = await mcpRuns(context);
    // The context is the thread an AG-UI threadId of that name is (the caller has no key here).
    const threadId = aclThreadId(context);
    const runs = await Promise.all(
      [called, tasked].map(
        async (runId) =>
          (await t.call("GET", `/threads/${threadId}/runs/${runId}`)).body as {
            run_id: string;
            status: string;
            thread_id: string;
          },
      ),
    );
    expect(runs.map((run) => [run.run_id, run.status, run.thread_id])).toEqual([
      [called, "success", threadId],
      [tasked, "success", threadId],
    ]);
    const listedOnThread = (await t.call("GET", `/threads/${threadId}/runs`)).body as Array<{
      run_id: string;
    }>;
    expect(listedOnThread.map((run) => run.run_id).sort()).toEqual([called, tasked].sort());

    const history = (await t.call("GET", `/threads/${threadId}/history?limit=100`)).body as Array<{
      metadata: { run_id?: string };
    }>;
    const historyRuns = new Set(history.map((state) => state.metadata.run_id));
    expect(historyRuns.has(called) && historyRuns.has(tasked)).toBe(true);

    const listed = await t.app.inject({ method: "GET", url: "/ui/api/runs?limit=100" });
    const faces = (listed.json() as Array<{ run_id: string; face: string }>)
      .filter((run) => run.run_id === called || run.run_id === tasked)
      .map((run) => run.face);
    expect(faces).toEqual(["mcp", "mcp"]);
  });

  it("an AG-UI run on the context as threadId continues the conversation", async () => {
    const context = `agui-${randomUUID()}`;
    await mcpRuns(context);
    // An AG-UI app joining the thread: connect gives it the conversation and state so far.
    const agent = new ReconnectingAgent(`${base}/ag-ui/word-count`, context);
    await agent.connectAgent();
    const said = () =>
      agent.messages.map((message) => [message.role, message.content as string | undefined]);
    expect(said()).toEqual([
      ["user", "one two"],
      ["assistant", "2 words (2 so far)."],
      ["user", "three four five"],
      ["assistant", "3 words (5 so far)."],
    ]);
    expect(agent.state).toMatchObject({ total_words: 5 });
    agent.addMessage({ id: randomUUID(), role: "user", content: "six" });
    const { newMessages } = await agent.runAgent();
    // The running total counts the words the two MCP runs were told: the same thread.
    expect(newMessages.filter((m) => m.role === "assistant").map((m) => m.content)).toEqual([
      "1 words (6 so far).",
    ]);
  });

  it("A2A's tasks/get reads each run as a task on the context of that name", async () => {
    const context = `a2a-${randomUUID()}`;
    const { called, tasked } = await mcpRuns(context);
    const client = await a2aClient(base, "word-count", "JSONRPC");
    for (const [runId, answer] of [
      [called, "2 words (2 so far)."],
      [tasked, "3 words (5 so far)."],
    ] as const) {
      const task = await client.getTask({ tenant: "", id: runId, historyLength: 10 });
      expect(task.id).toBe(runId);
      expect(task.contextId).toBe(context);
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
      expect(responseText(task)).toBe(answer);
    }
  });
});
