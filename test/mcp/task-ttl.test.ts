/**
 * A task's ttl (2025-11-25, experimental Tasks) with the official SDK client: the ttl asked in
 * `params.task` is granted up to what retention keeps a stateless run, reported in the task,
 * and the run is deleted that long after its creation (tasks/get and ACP then find nothing).
 */
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RETENTION_DEFAULTS } from "../../src/retention/settings.js";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { mcpClient } from "./helpers.js";
import { modernPost } from "./modern-helpers.js";

type Message = { type: string; task?: { taskId: string; status: string; ttl: number | null } };

/** Polls `check` until it holds, for at most `limitMs` (no timing is asserted). */
async function eventually(check: () => Promise<boolean>, limitMs = 15_000): Promise<boolean> {
  const until = Date.now() + limitMs;
  while (Date.now() < until) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return check();
}

describe("MCP task ttl", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({
      unchecked: true,
      // Finished stateless runs are kept an hour; the sweeper looks every 0.2 s.
      settings: {
        retention: { ...RETENTION_DEFAULTS, finishedStatelessRuns: 3600, sweepInterval: 0.2 },
      },
    }));
  });
  afterAll(async () => {
    await t.close();
  });

  const runAsTask = async (ttl: number) => {
    const client = await mcpClient(`${base}/mcp`);
    const messages: Message[] = [];
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "word-count", arguments: { message: "a b c" } },
      CallToolResultSchema,
      { task: { ttl } },
    )) {
      messages.push(message as Message);
    }
    return { client, created: messages[0]!, last: messages.at(-1)! };
  };

  it("a short ttl is granted; after it the task and its run are gone", async () => {
    const { client, created, last } = await runAsTask(500);
    expect(created).toMatchObject({ type: "taskCreated", task: { ttl: 500 } });
    expect(last.type).toBe("result");
    const taskId = created.task!.taskId;
    const gone = await eventually(
      async () => (await t.call("GET", `/runs/${taskId}`)).status === 404,
    );
    expect(gone).toBe(true);
    await expect(client.experimental.tasks.getTask(taskId)).rejects.toThrow(/not found/);
    await client.close();
  });

  it("a ttl beyond retention is capped at it, and tasks/get reports the granted ttl", async () => {
    const { client, created } = await runAsTask(7 * 24 * 3_600_000);
    expect(created.task!.ttl).toBe(3_600_000);
    const task = await client.experimental.tasks.getTask(created.task!.taskId);
    expect(task).toMatchObject({ status: "completed", ttl: 3_600_000 });
    expect((await t.call("GET", `/runs/${created.task!.taskId}`)).status).toBe(200);
    await client.close();
  });
});

describe("MCP task ttl read on 2026-07-28", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({
      unchecked: true,
      settings: { retention: { ...RETENTION_DEFAULTS, finishedStatelessRuns: 3600 } },
    }));
  });
  afterAll(async () => {
    await t.close();
  });

  it("the extension's tasks/get reports the ttl a 2025 client was granted, not retention's", async () => {
    const client = await mcpClient(`${base}/mcp`);
    let taskId = "";
    for await (const message of client.experimental.tasks.callToolStream(
      { name: "word-count", arguments: { message: "a b" } },
      CallToolResultSchema,
      { task: { ttl: 90_000 } },
    )) {
      if ((message as Message).type === "taskCreated") taskId = (message as Message).task!.taskId;
    }
    await client.close();
    const tasks = { extensions: { "io.modelcontextprotocol/tasks": {} } };
    const read = await modernPost(`${base}/mcp`, "tasks/get", { taskId }, { capabilities: tasks });
    expect(await read.json()).toMatchObject({
      result: { taskId, status: "completed", ttlMs: 90_000 },
    });
  });
});
