/**
 * Message replies (`a2a.reply`), with the official client over both bindings: an agent set to
 * `message` answers a run that needs no task with a Message (SendMessage and
 * SendStreamingMessage, `returnImmediately` or not); `auto` does for a blocking SendMessage
 * only; a run that pauses is answered as a task either way; the default stays a task.
 */
import { randomUUID } from "node:crypto";
import { type Message, type Task, TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { a2aClient, BINDINGS, collect, userMessage } from "./helpers.js";

const agent = (name: string, reply?: string) => `
  - name: ${name}
    version: 1.0.0
    description: Answers ${reply ?? "with tasks"}.
    adapter: { type: module, path: ./media-agent.mjs }
${reply ? `    a2a: { reply: ${reply} }` : ""}`;

const isMessage = (answer: Message | Task): answer is Message => "messageId" in answer;
const textOf = (message: Message) =>
  message.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join("");

describe.each(BINDINGS)("A2A message replies over %s", (binding) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({
      unchecked: true,
      baseDir: `${process.cwd()}/test/fixtures/modules`,
      yaml: `agents:${agent("talker", "message")}${agent("either", "auto")}${agent("tracker")}`,
    });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("an agent set to message answers SendMessage with a Message, returnImmediately or not", async () => {
    const client = await a2aClient(base, "talker", binding);
    const contextId = randomUUID();
    for (const returnImmediately of [false, true]) {
      const answer = await client.sendMessage({
        message: userMessage("hi there", { contextId }),
        configuration: { returnImmediately },
      } as never);
      if (!isMessage(answer)) throw new Error(`expected a Message, got ${JSON.stringify(answer)}`);
      expect(answer.role).toBe(2);
      expect(textOf(answer)).toBe("hi there");
      expect(answer.contextId).toBe(contextId);
      expect(answer.taskId).toBe("");
    }
  });

  it("an agent set to message streams its one Message", async () => {
    const client = await a2aClient(base, "talker", binding);
    const events = await collect(
      client.sendMessageStream({ message: userMessage("stream hi") } as never),
    );
    expect(events.map((e) => e.payload?.$case)).toEqual(["message"]);
    const only = events[0]!.payload;
    if (only?.$case === "message") expect(textOf(only.value)).toBe("stream hi");
  });

  it("a Message reply carries a tool's parts, files among them", async () => {
    const client = await a2aClient(base, "talker", binding);
    const answer = await client.sendMessage({ message: userMessage("picture") } as never);
    if (!isMessage(answer)) throw new Error("expected a Message");
    expect(answer.parts.map((p) => p.content?.$case)).toEqual([
      "text",
      "data",
      "text",
      "raw",
      "url",
    ]);
    expect(answer.parts[3]).toMatchObject({ mediaType: "image/png", filename: "chart.png" });
  });

  it("a run that asks for input is a task, even for an agent set to message", async () => {
    const client = await a2aClient(base, "talker", binding);
    const answer = await client.sendMessage({ message: userMessage("ask") } as never);
    if (isMessage(answer)) throw new Error("expected a Task");
    expect(answer.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);
    const events = await collect(
      client.sendMessageStream({ message: userMessage("ask") } as never),
    );
    expect(events.map((e) => e.payload?.$case)).toEqual(["task", "statusUpdate"]);
    // The answer on the task is a task's too: the client follows a task now.
    const resumed = await client.sendMessage({
      message: userMessage("Ada", { taskId: answer.id }),
    } as never);
    if (isMessage(resumed)) throw new Error("expected a Task");
    expect(resumed.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("auto answers a blocking SendMessage with a Message, and a task otherwise", async () => {
    const client = await a2aClient(base, "either", binding);
    const blocking = await client.sendMessage({ message: userMessage("now") } as never);
    expect(isMessage(blocking) && textOf(blocking)).toBe("now");
    const later = await client.sendMessage({
      message: userMessage("later"),
      configuration: { returnImmediately: true },
    } as never);
    expect(isMessage(later)).toBe(false);
    const events = await collect(client.sendMessageStream({ message: userMessage("s") } as never));
    expect(events[0]?.payload?.$case).toBe("task");
    expect(events.at(-1)?.payload?.$case).toBe("statusUpdate");
  });

  it("the default answers with a task", async () => {
    const client = await a2aClient(base, "tracker", binding);
    const answer = await client.sendMessage({ message: userMessage("hi") } as never);
    expect(isMessage(answer)).toBe(false);
  });
});

describe("A2A message replies to a 0.3 client", () => {
  it("answers message/send with a kind: message", async () => {
    const t = await build({
      unchecked: true,
      baseDir: `${process.cwd()}/test/fixtures/modules`,
      yaml: `agents:${agent("talker", "message")}`,
    });
    try {
      const response = await t.app.inject({
        method: "POST",
        url: "/a2a/talker",
        headers: { "content-type": "application/json" },
        payload: {
          jsonrpc: "2.0",
          id: 1,
          method: "message/send",
          params: {
            message: {
              kind: "message",
              messageId: "m1",
              role: "user",
              parts: [{ kind: "text", text: "old" }],
            },
          },
        },
      });
      expect(JSON.parse(response.body).result).toMatchObject({
        kind: "message",
        role: "agent",
        parts: [{ kind: "text", text: "old" }],
      });
    } finally {
      await t.close();
    }
  });
});
