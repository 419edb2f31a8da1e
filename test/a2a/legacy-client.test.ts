/**
 * A2A 0.3 clients: a request naming no A2A-Version gets 0.3's methods and shapes, and the 0.3
 * card. `@ag-ui/a2a`'s A2AAgent (the client CopilotKit's A2A middleware uses, on the 0.2-era
 * SDK) holds a conversation with hosted agents: each turn a task on the same context.
 */
import { randomUUID } from "node:crypto";
import { resolve } from "node:path";
import { A2AAgent } from "@ag-ui/a2a";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// The 0.2-era SDK @ag-ui/a2a brings with it (its A2AAgent takes that SDK's client).
import { A2AClient } from "../../node_modules/@ag-ui/a2a/node_modules/@a2a-js/sdk/dist/client/index.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";

const configDir = resolve(import.meta.dirname, "../../config");
const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
  - name: word-count
    version: 1.0.0
    description: Counts words, with a running total.
    adapter: { type: module, path: ./agents/word-count.mjs, export: default }
`;

const texts = (agent: A2AAgent) =>
  agent.messages.map((m) => `${m.role}: ${(m as { content?: unknown }).content}`);

describe("A2A 0.3 clients", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML, baseDir: configDir, unchecked: true });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("@ag-ui/a2a's agent holds a conversation: every turn on the same context", async () => {
    const client = new A2AClient(`${base}/a2a/word-count`);
    const agent = new A2AAgent({ a2aClient: client, threadId: `conv-${randomUUID()}` });
    agent.addMessage({ id: randomUUID(), role: "user", content: "one two three" });
    await agent.runAgent();
    agent.addMessage({ id: randomUUID(), role: "user", content: "four five" });
    await agent.runAgent();
    expect(texts(agent)).toEqual([
      "user: one two three",
      "assistant: 3 words (3 so far).",
      "user: four five",
      "assistant: 2 words (5 so far).",
    ]);
  });

  it("answers 0.3's message/send, tasks/get and tasks/resubscribe in 0.3's shapes", async () => {
    const rpc = async (method: string, params: unknown) => {
      const response = await fetch(`${base}/a2a/echo`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ jsonrpc: "2.0", id: "r1", method, params }),
      });
      return (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
    };
    const sent = await rpc("message/send", {
      message: {
        kind: "message",
        messageId: randomUUID(),
        role: "user",
        parts: [{ kind: "text", text: "legacy" }],
      },
    });
    expect(sent.result).toMatchObject({
      kind: "task",
      status: {
        state: "completed",
        message: { kind: "message", role: "agent", parts: [{ kind: "text", text: "legacy" }] },
      },
      history: [
        { kind: "message", role: "user", parts: [{ kind: "text", text: "legacy" }] },
        { kind: "message", role: "agent", parts: [{ kind: "text", text: "legacy" }] },
      ],
    });
    const id = sent.result!.id as string;
    const read = await rpc("tasks/get", { id, historyLength: 0 });
    expect(read.result).toMatchObject({ kind: "task", id, status: { state: "completed" } });
    expect(read.result!.history).toBeUndefined();
    const finished = await rpc("tasks/resubscribe", { id });
    expect(finished.error).toMatchObject({ code: -32004 });
    const card = (await (await fetch(`${base}/a2a/echo/.well-known/agent.json`)).json()) as {
      url: string;
    };
    expect(card.url).toBe(`${base}/a2a/echo`);
  });
});
