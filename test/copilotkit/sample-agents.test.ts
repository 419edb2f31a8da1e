/**
 * Every demo agent of config/sample.yaml through CopilotKit's client: the echo, the recorded
 * run with a tool call, the approval that waits for a resume, the in-process module agent and
 * the remote AG-UI agent (this same server's AG-UI face, one server as `npm start` runs it).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { type Client, copilotClient, transcript } from "../helpers/copilotkit.js";
import { sampleServer } from "../helpers/sample.js";

describe("the sample config's agents, chatted with through CopilotKit's client", () => {
  let t: TestApp;
  let client: Client;
  beforeAll(async () => {
    const server = await sampleServer();
    t = server.t;
    client = await copilotClient(`${server.base}/copilotkit`);
  });
  afterAll(async () => {
    await t.close();
  });

  const chat = async (name: string, content: string) => {
    const agent = client.agent(name, randomUUID());
    agent.addMessage({ id: randomUUID(), role: "user", content });
    await client.core.runAgent({ agent });
    return agent;
  };

  it("lists all five", () => {
    expect(Object.keys(client.core.agents).sort()).toEqual([
      "approval-demo",
      "echo",
      "remote-echo",
      "scripted-demo",
      "word-count",
    ]);
  });

  it.each([
    ["echo", "hi echo", "hi echo"],
    ["remote-echo", "over the wire", "over the wire"],
    ["word-count", "one two three", "3 words (3 so far)."],
  ])("%s answers", async (name, said, answer) => {
    const agent = await chat(name, said);
    expect(transcript(agent)).toEqual([
      ["user", said],
      ["assistant", answer],
    ]);
  });

  it("scripted-demo replays its message, tool call and tool result, and its state", async () => {
    const agent = await chat("scripted-demo", "weather?");
    expect(agent.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    const assistant = agent.messages[1] as {
      content?: string;
      toolCalls?: Array<{ function: { name: string; arguments: string } }>;
    };
    expect(assistant.content).toBe("Let me check the weather in Lisbon.");
    expect(assistant.toolCalls?.[0]?.function).toEqual({
      name: "get_weather",
      arguments: '{"city":"Lisbon"}',
    });
    expect(agent.state).toEqual({ city: "Lisbon", forecast: { temperature: 21, sky: "clear" } });
  });

  it("approval-demo stops for approval and finishes when resumed", async () => {
    const agent = await chat("approval-demo", "go ahead");
    const pending = (agent as unknown as { pendingInterrupts: Array<{ id: string }> })
      .pendingInterrupts;
    expect(pending.map((interrupt) => interrupt.id)).toEqual(["approve-1"]);
    await client.core.runAgent({
      agent,
      resume: [{ interruptId: "approve-1", status: "resolved", payload: { approved: true } }],
    });
    expect(transcript(agent).at(-1)).toEqual(["assistant", "Approved. Backed up and migrated."]);
    expect(agent.state).toMatchObject({ status: "done" });
    expect(client.errors).toEqual([]);
  });
});
