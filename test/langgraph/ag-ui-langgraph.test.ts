/**
 * `@ag-ui/langgraph`'s `LangGraphAgent` (what CopilotKit's LangGraph path uses) pointed at the
 * LangGraph face, with its own default stream modes (`events`, `values`, `updates`,
 * `messages-tuple`), holding a conversation with agents that are not LangGraph graphs: the
 * echo agent and the scripted agent's tool call.
 */
import { randomUUID } from "node:crypto";
import type { BaseEvent, Message } from "@ag-ui/client";
import { LangGraphAgent } from "@ag-ui/langgraph";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";

let t: TestApp;
let base: string;

beforeAll(async () => {
  ({ t, base } = await sampleServer());
});
afterAll(() => t.close());

function agentFor(graphId: string, threadId: string) {
  return new LangGraphAgent({ deploymentUrl: `${base}/langgraph`, graphId, threadId });
}

async function say(agent: LangGraphAgent, text: string) {
  agent.addMessage({ id: randomUUID(), role: "user", content: text } as Message);
  const events: BaseEvent[] = [];
  await agent.runAgent(
    { runId: randomUUID() },
    { onEvent: ({ event }) => void events.push(event) },
  );
  return events;
}

const textOf = (events: BaseEvent[]) =>
  events
    .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
    .map((e) => (e as unknown as { delta: string }).delta)
    .join("");

describe("@ag-ui/langgraph's LangGraphAgent through the LangGraph face", () => {
  it("holds a two-turn conversation with the echo agent, streamed as text", async () => {
    const threadId = randomUUID();
    const agent = agentFor("echo", threadId);
    const first = await say(agent, "hello from ag-ui");
    expect(first[0]!.type).toBe("RUN_STARTED");
    expect(first.at(-1)!.type).toBe("RUN_FINISHED");
    expect(textOf(first)).toBe("hello from ag-ui");
    const second = await say(agent, "second turn");
    expect(textOf(second)).toBe("second turn");
    expect(agent.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "hello from ag-ui"],
      ["assistant", "hello from ag-ui"],
      ["user", "second turn"],
      ["assistant", "second turn"],
    ]);
    // The same thread, read through the ACP face.
    const acp = (await (await fetch(`${base}/threads/${threadId}`)).json()) as {
      messages: unknown[];
    };
    expect(acp.messages).toHaveLength(4);
  });

  it("streams the scripted agent's tool call and its result", async () => {
    const agent = agentFor("scripted-demo", randomUUID());
    const events = await say(agent, "weather?");
    const types = events.map((e) => e.type);
    expect(types).toContain("TOOL_CALL_START");
    const start = events.find((e) => e.type === "TOOL_CALL_START") as unknown as {
      toolCallId: string;
      toolCallName: string;
    };
    expect(start).toMatchObject({ toolCallId: "call-1", toolCallName: "get_weather" });
    const args = events
      .filter((e) => e.type === "TOOL_CALL_ARGS")
      .map((e) => (e as unknown as { delta: string }).delta)
      .join("");
    expect(args).toBe('{"city":"Lisbon"}');
    expect(types).toContain("TOOL_CALL_RESULT");
    expect(textOf(events)).toBe("Let me check the weather in Lisbon.");
    expect(agent.state).toMatchObject({ city: "Lisbon", forecast: { temperature: 21 } });
  });
});
