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

  it("streams a text as the agent says it: a chunk per delta, then a last chunk", async () => {
    const client = await a2aClient(base, "echo", binding);
    const said = "one two three four";
    const events = await collect(client.sendMessageStream({ message: userMessage(said) } as never));
    const chunks = events.flatMap((event) =>
      event.payload?.$case === "artifactUpdate" && event.payload.value.artifact?.name === "response"
        ? [event.payload.value]
        : [],
    );
    const texts = chunks.map((c) =>
      c.artifact!.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join(""),
    );
    // The echo agent says a word per delta; the last chunk only closes the artifact.
    expect(texts).toEqual(["one ", "two ", "three ", "four", ""]);
    expect(chunks.map((c) => [c.append, c.lastChunk])).toEqual([
      [false, false],
      [true, false],
      [true, false],
      [true, false],
      [true, true],
    ]);
    expect(new Set(chunks.map((c) => c.artifact!.artifactId)).size).toBe(1);
    // Read back, the task holds the artifact the chunks built (a part per delta).
    const taskId = events[0]?.payload?.$case === "task" ? events[0].payload.value.id : "";
    const task = await client.getTask({ id: taskId } as never);
    const [artifact] = task.artifacts;
    expect(artifact?.artifactId).toBe(chunks[0]!.artifact!.artifactId);
    expect(artifact?.parts.map((p) => p.content)).toEqual(
      texts.slice(0, -1).map((value) => ({ $case: "text", value })),
    );
    expect(responseText(task)).toBe(said);
  });
});
