/**
 * The A2A face with the official client (`@a2a-js/sdk`) over both bindings: every agent is an
 * A2A agent whose tasks are ACP runs.
 */
import { TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { a2aClient, asTask, BINDINGS, collect, responseText, userMessage } from "./helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
`;

describe.each(BINDINGS)("the A2A face over %s", (binding) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML, unchecked: true });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("answers a blocking SendMessage with the completed task", async () => {
    const client = await a2aClient(base, "echo", binding);
    const task = asTask(await client.sendMessage({ message: userMessage("hello there") } as never));
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(responseText(task)).toBe("hello there");
  });

  it("streams a task: the task first, then its artifacts and final status", async () => {
    const client = await a2aClient(base, "echo", binding);
    const events = await collect(
      client.sendMessageStream({ message: userMessage("stream me") } as never),
    );
    expect(events[0]?.payload?.$case).toBe("task");
    const last = events.at(-1)?.payload;
    expect(last?.$case).toBe("statusUpdate");
    if (last?.$case === "statusUpdate") {
      expect(last.value.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    }
  });
});
