import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";

// Content events reach an SSE client as the JSON they were stored as (never parsed on the way
// out), every other event through the encoder: the client must not be able to tell which.
const YAML = `
agents:
  - name: words
    version: 1.0.0
    description: Streams a few content events.
    adapter:
      type: scripted
      script:
        - { type: RUN_STARTED, threadId: t, runId: r }
        - { type: TEXT_MESSAGE_START, messageId: m-1, role: assistant }
        - { type: TEXT_MESSAGE_CONTENT, messageId: m-1, delta: "plain words" }
        - { type: TEXT_MESSAGE_CONTENT, messageId: m-1, delta: "null and void" }
        - { delta: "type second", type: TEXT_MESSAGE_CONTENT, messageId: m-1 }
        - { type: TEXT_MESSAGE_END, messageId: m-1 }
        - { type: TOOL_CALL_START, toolCallId: c-1, toolCallName: lookup }
        - { type: TOOL_CALL_ARGS, toolCallId: c-1, delta: '{"q":' }
        - { type: TOOL_CALL_ARGS, toolCallId: c-1, delta: '"x"}' }
        - { type: TOOL_CALL_END, toolCallId: c-1 }
        - { type: RUN_FINISHED, threadId: t, runId: r }
`;

describe("the AG-UI face's SSE stream", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("writes every event as its JSON, content events as stored, ids as the client's", async () => {
    const url = `${base}/agents/${t.registry.getByName("words")!.agentId}/ag-ui`;
    const res = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({
        threadId: `stored-json-${Math.random()}`,
        runId: "client-run",
        messages: [{ id: "u-1", role: "user", content: "go" }],
        state: {},
        tools: [],
        context: [],
        forwardedProps: {},
      }),
    });
    expect(res.status).toBe(200);
    const lines = (await res.text()).split("\n").filter((line) => line.startsWith("data: "));
    const events = lines.map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
    // Each line is exactly what the encoder writes for its event (JSON.stringify of it).
    expect(lines).toEqual(events.map((event) => `data: ${JSON.stringify(event)}`));
    expect(events.map((e) => e.type)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
      "RUN_FINISHED",
    ]);
    expect(events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT").map((e) => e.delta)).toEqual([
      "plain words",
      "null and void",
      "type second",
    ]);
    expect(events.filter((e) => e.type === "TOOL_CALL_ARGS").map((e) => e.delta)).toEqual([
      '{"q":',
      '"x"}',
    ]);
    expect(events[0]!.runId).toBe("client-run");
    expect(events.at(-1)!.runId).toBe("client-run");
  });
});
