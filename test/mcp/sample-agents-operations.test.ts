/**
 * Every demo agent of config/sample.yaml through each operation of the official SDK client
 * (2025-11-25) that the blocking calls of sample-agents.test.ts do not cover: a call with a
 * progress token told as the run goes, and the call made as an experimental task, polled to
 * the agent's answer, its id the run's. (approval-demo's elicitation and its task are in
 * interrupts.test.ts and tasks.test.ts; the 2026-07-28 client in modern-sample-agents.test.ts.)
 */
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { mcpClient, runIdOf, textOf } from "./helpers.js";

const AGENTS = [
  ["echo", "hi echo", "hi echo"],
  ["remote-echo", "over the wire", "over the wire"],
  ["word-count", "one two three", "3 words (3 so far)."],
  ["scripted-demo", "weather?", "Let me check the weather in Lisbon."],
] as const;

describe("the sample config's agents: progress and tasks with the 2025-11-25 client", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({ unchecked: true }));
  });
  afterAll(async () => {
    await t.close();
  });

  it.each(AGENTS)(
    "%s: a call with a progress token is told progress",
    async (name, said, answer) => {
      const client = await mcpClient(`${base}/mcp`);
      const progress: Array<{ progress: number; message?: string }> = [];
      const result = await client.callTool({ name, arguments: { message: said } }, undefined, {
        onprogress: (p) => progress.push(p),
      });
      expect(textOf(result)).toBe(answer);
      expect(progress.length).toBeGreaterThan(0);
      for (const [i, p] of progress.entries()) {
        if (i > 0) expect(p.progress).toBeGreaterThan(progress[i - 1]!.progress);
      }
      expect((await t.call("GET", `/runs/${runIdOf(result)}`)).body).toMatchObject({
        status: "success",
      });
      await client.close();
    },
  );

  it.each(AGENTS)(
    "%s: a call as a task is polled to the agent's answer",
    async (name, said, answer) => {
      const client = await mcpClient(`${base}/mcp`);
      let taskId = "";
      let result: unknown;
      for await (const message of client.experimental.tasks.callToolStream(
        { name, arguments: { message: said } },
        CallToolResultSchema,
        { task: {} },
      )) {
        if (message.type === "taskCreated") taskId = message.task.taskId;
        if (message.type === "result") result = message.result;
        if (message.type === "error") throw message.error;
      }
      expect(textOf(result as object)).toBe(answer);
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe("completed");
      expect((await t.call("GET", `/runs/${taskId}`)).body).toMatchObject({
        run_id: taskId,
        status: "success",
      });
      await client.close();
    },
  );
});
