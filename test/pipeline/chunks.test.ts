import { describe, expect, it } from "vitest";
import { messages, replay, run, started } from "./helpers.js";

const chunk = (fields: Record<string, unknown>) => ({ type: "TEXT_MESSAGE_CHUNK", ...fields });
const toolChunk = (fields: Record<string, unknown>) => ({ type: "TOOL_CALL_CHUNK", ...fields });

describe("pipeline chunk expansion", () => {
  it("forwards the canonical triad instead of the chunks, closed by the run terminal", () => {
    const r = replay(
      run(
        chunk({ messageId: "m", delta: "Hel", metadata: { a: 1 }, timestamp: 5 }),
        chunk({ delta: "lo" }),
      ),
    );
    expect(r.fault).toBeUndefined();
    expect(r.events.slice(1, -1)).toEqual([
      {
        type: "TEXT_MESSAGE_START",
        messageId: "m",
        role: "assistant",
        metadata: { a: 1 },
        timestamp: 5,
      },
      {
        type: "TEXT_MESSAGE_CONTENT",
        messageId: "m",
        delta: "Hel",
        metadata: { a: 1 },
        timestamp: 5,
      },
      { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "lo" },
      { type: "TEXT_MESSAGE_END", messageId: "m" },
    ]);
    expect(messages(r)).toEqual([
      { id: "m", role: "assistant", content: "Hello", metadata: { a: 1 } },
    ]);
  });

  it("expands tool call chunks onto an assistant message", () => {
    const r = replay(
      run(
        toolChunk({
          toolCallId: "c",
          toolCallName: "search",
          parentMessageId: "a",
          delta: '{"q":',
        }),
        toolChunk({ delta: '"x"}' }),
      ),
    );
    expect(r.fault).toBeUndefined();
    expect(r.events.map((e) => e.type).slice(1, -1)).toEqual([
      "TOOL_CALL_START",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_ARGS",
      "TOOL_CALL_END",
    ]);
    expect(messages(r)).toEqual([
      {
        id: "a",
        role: "assistant",
        toolCalls: [
          { id: "c", type: "function", function: { name: "search", arguments: '{"q":"x"}' } },
        ],
      },
    ]);
  });

  it("expands reasoning chunks into a reasoning message", () => {
    const r = replay(
      run(
        { type: "REASONING_MESSAGE_CHUNK", messageId: "r", delta: "think" },
        { type: "REASONING_MESSAGE_CHUNK", delta: "ing" },
      ),
    );
    expect(r.fault).toBeUndefined();
    expect(r.events[1]).toEqual({
      type: "REASONING_MESSAGE_START",
      messageId: "r",
      role: "reasoning",
    });
    expect(messages(r)).toEqual([{ id: "r", role: "reasoning", content: "thinking" }]);
  });

  it("closes the open stream when a chunk names a new id", () => {
    const r = replay(
      run(chunk({ messageId: "a", delta: "1" }), chunk({ messageId: "b", delta: "2" })),
    );
    expect(r.fault).toBeUndefined();
    expect(r.events.map((e) => `${e.type}:${e.messageId ?? ""}`).slice(1, -1)).toEqual([
      "TEXT_MESSAGE_START:a",
      "TEXT_MESSAGE_CONTENT:a",
      "TEXT_MESSAGE_END:a",
      "TEXT_MESSAGE_START:b",
      "TEXT_MESSAGE_CONTENT:b",
      "TEXT_MESSAGE_END:b",
    ]);
  });

  it.each([
    ["CUSTOM", { type: "CUSTOM", name: "n", value: 1 }],
    ["STATE_SNAPSHOT", { type: "STATE_SNAPSHOT", snapshot: {} }],
    ["STEP_STARTED", { type: "STEP_STARTED", stepName: "s" }],
    ["MESSAGES_SNAPSHOT", { type: "MESSAGES_SNAPSHOT", messages: [] }],
  ])("lets %s close the chunk stream, so an id-less continuation is fatal", (_t, closer) => {
    const r = replay([
      started(),
      chunk({ messageId: "m", delta: "a" }),
      closer,
      chunk({ delta: "b" }),
    ]);
    expect(r.fault?.message).toContain("First TEXT_MESSAGE_CHUNK must have a messageId");
    expect(r.fault?.rule).toBe("chunk");
  });

  it.each([
    ["RAW", { type: "RAW", event: {} }],
    [
      "ACTIVITY_SNAPSHOT",
      { type: "ACTIVITY_SNAPSHOT", messageId: "x", activityType: "t", content: {} },
    ],
    [
      "REASONING_ENCRYPTED_VALUE",
      { type: "REASONING_ENCRYPTED_VALUE", subtype: "message", entityId: "m", encryptedValue: "e" },
    ],
    ["SUBAGENT_STARTED", { type: "SUBAGENT_STARTED", subagentRunId: "s", name: "n" }],
  ])("lets %s stand aside, so the stream continues", (type, aside) => {
    const stream: unknown[] = [
      started(),
      chunk({ messageId: "m", delta: "a" }),
      aside,
      chunk({ delta: "b" }),
    ];
    if (type === "SUBAGENT_STARTED") stream.push({ type: "SUBAGENT_FINISHED", subagentRunId: "s" });
    const r = replay([...stream, { type: "RUN_FINISHED", threadId: "thread-1", runId: "run-1" }]);
    expect(r.fault).toBeUndefined();
    expect(messages(r).find((m) => m.id === "m")?.content).toBe("ab");
  });

  it("rejects a continuation that contradicts its opener's role, name or toolCallName", () => {
    expect(
      replay([
        started(),
        chunk({ messageId: "m", role: "user" }),
        chunk({ role: "assistant", delta: "x" }),
      ]).fault?.message,
    ).toContain("chunk role 'assistant' does not match the open stream's role 'user'");
    expect(
      replay([
        started(),
        chunk({ messageId: "m", name: "a" }),
        chunk({ messageId: "m", name: "b" }),
      ]).fault?.message,
    ).toContain("chunk name 'b'");
    expect(
      replay([
        started(),
        toolChunk({ toolCallId: "c", toolCallName: "f" }),
        toolChunk({ toolCallName: "g", delta: "{}" }),
      ]).fault?.message,
    ).toContain("chunk toolCallName 'g' does not match the open stream's toolCallName 'f'");
  });

  it("requires the first chunk to carry its id, and a tool chunk its name", () => {
    expect(replay([started(), chunk({ delta: "x" })]).fault?.message).toContain(
      "First TEXT_MESSAGE_CHUNK must have a messageId",
    );
    expect(replay([started(), toolChunk({ delta: "x" })]).fault?.message).toContain(
      "First TOOL_CALL_CHUNK must have a toolCallId",
    );
    expect(replay([started(), toolChunk({ toolCallId: "c" })]).fault?.message).toContain(
      "First TOOL_CALL_CHUNK must have a toolCallName",
    );
  });

  it("assembles one stream per subagent lane", () => {
    const r = replay(
      run(
        { type: "SUBAGENT_STARTED", subagentRunId: "s1", name: "a" },
        { type: "SUBAGENT_STARTED", subagentRunId: "s2", name: "b" },
        chunk({ messageId: "m1", delta: "one", subagentRunId: "s1" }),
        chunk({ messageId: "m2", delta: "two", subagentRunId: "s2" }),
        chunk({ delta: "+", subagentRunId: "s1" }),
        { type: "SUBAGENT_FINISHED", subagentRunId: "s1" },
        { type: "SUBAGENT_FINISHED", subagentRunId: "s2" },
      ),
    );
    expect(r.fault).toBeUndefined();
    expect(messages(r).map((m) => [m.id, m.content, m.subagentRunId])).toEqual([
      ["m1", "one+", "s1"],
      ["m2", "two", "s2"],
    ]);
    const ends = r.events.filter((e) => e.type === "TEXT_MESSAGE_END");
    expect(ends).toEqual([
      { type: "TEXT_MESSAGE_END", messageId: "m1", subagentRunId: "s1" },
      { type: "TEXT_MESSAGE_END", messageId: "m2", subagentRunId: "s2" },
    ]);
  });

  it("emits a zero-delta content event for a metadata-only continuation", () => {
    const r = replay(run(chunk({ messageId: "m", delta: "x" }), chunk({ metadata: { usage: 3 } })));
    expect(r.events[3]).toEqual({
      type: "TEXT_MESSAGE_CONTENT",
      messageId: "m",
      delta: "",
      metadata: { usage: 3 },
    });
    expect(messages(r)[0]!.metadata).toEqual({ usage: 3 });
  });
});
