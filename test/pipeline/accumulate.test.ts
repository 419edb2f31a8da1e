import { describe, expect, it } from "vitest";
import type { AgUiMessage } from "../../src/pipeline/index.js";
import { deepFreeze, finished, messages, replay, run, started, text } from "./helpers.js";

const toolStart = (toolCallId: string, extra: Record<string, unknown> = {}) => ({
  type: "TOOL_CALL_START",
  toolCallId,
  toolCallName: "lookup",
  ...extra,
});
const toolCall = (toolCallId: string, args: string, extra: Record<string, unknown> = {}) => [
  toolStart(toolCallId, extra),
  { type: "TOOL_CALL_ARGS", toolCallId, delta: args },
  { type: "TOOL_CALL_END", toolCallId },
];
const call = (id: string, args: string, name = "lookup") => ({
  id,
  type: "function",
  function: { name, arguments: args },
});

describe("pipeline accumulation", () => {
  describe("text and reasoning messages", () => {
    it("builds a message from its triad, with role, name and subagent attribution", () => {
      const r = replay(
        run(
          {
            type: "TEXT_MESSAGE_START",
            messageId: "m",
            role: "user",
            name: "ann",
            subagentRunId: "s",
          },
          { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "a" },
          { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "b" },
          { type: "TEXT_MESSAGE_END", messageId: "m" },
        ),
      );
      expect(messages(r)).toEqual([
        { id: "m", role: "user", name: "ann", subagentRunId: "s", content: "ab" },
      ]);
    });

    it("defaults the role to assistant", () => {
      const r = replay(run(...text("m", "x", { role: undefined })));
      expect(messages(r)[0]!.role).toBe("assistant");
    });

    it("merges metadata key by key, last write wins, without recursing", () => {
      const r = replay(
        run(
          { type: "TEXT_MESSAGE_START", messageId: "m", metadata: { a: 1, deep: { x: 1 } } },
          {
            type: "TEXT_MESSAGE_CONTENT",
            messageId: "m",
            delta: "x",
            metadata: { deep: { y: 2 } },
          },
          { type: "TEXT_MESSAGE_END", messageId: "m", metadata: { end: null } },
        ),
      );
      expect(messages(r)[0]!.metadata).toEqual({ a: 1, deep: { y: 2 }, end: null });
    });

    it("appends text to a message a tool call created, as the client does", () => {
      const r = replay(run(...toolCall("c", "{}", { parentMessageId: "a" }), ...text("a", "done")));
      expect(messages(r)).toEqual([
        { id: "a", role: "assistant", toolCalls: [call("c", "{}")], content: "done" },
      ]);
    });

    it("builds reasoning messages", () => {
      const r = replay(
        run(
          { type: "REASONING_MESSAGE_START", messageId: "r", role: "reasoning" },
          { type: "REASONING_MESSAGE_CONTENT", messageId: "r", delta: "why" },
          { type: "REASONING_MESSAGE_END", messageId: "r" },
        ),
      );
      expect(messages(r)).toEqual([{ id: "r", role: "reasoning", content: "why" }]);
    });

    it("attaches an encrypted value to a message or a tool call, ignoring unknown entities", () => {
      const r = replay(
        run(
          ...text("m", "x"),
          ...toolCall("c", "{}", { parentMessageId: "a" }),
          {
            type: "REASONING_ENCRYPTED_VALUE",
            subtype: "message",
            entityId: "m",
            encryptedValue: "E1",
          },
          {
            type: "REASONING_ENCRYPTED_VALUE",
            subtype: "tool-call",
            entityId: "c",
            encryptedValue: "E2",
          },
          {
            type: "REASONING_ENCRYPTED_VALUE",
            subtype: "message",
            entityId: "zz",
            encryptedValue: "E3",
          },
        ),
      );
      expect(r.warnings).toEqual([]);
      expect(messages(r)[0]!.encryptedValue).toBe("E1");
      expect((messages(r)[1]!.toolCalls as Array<Record<string, unknown>>)[0]!.encryptedValue).toBe(
        "E2",
      );
      expect(messages(r)).toHaveLength(2);
    });
  });

  describe("tool calls", () => {
    it("adds calls to the parent assistant message, accumulating arguments", () => {
      const r = replay(
        run(
          ...text("a", "Looking."),
          toolStart("c1", { parentMessageId: "a", metadata: { t: 1 } }),
          { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: '{"q":' },
          { type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: '"x"}' },
          { type: "TOOL_CALL_END", toolCallId: "c1" },
          ...toolCall("c2", "{}", { parentMessageId: "a" }),
        ),
      );
      expect(messages(r)).toEqual([
        {
          id: "a",
          role: "assistant",
          content: "Looking.",
          toolCalls: [{ ...call("c1", '{"q":"x"}'), metadata: { t: 1 } }, call("c2", "{}")],
        },
      ]);
    });

    it("creates the assistant message for a call without a parent, or with an unknown one", () => {
      const r = replay(
        run(...toolCall("c1", "{}"), ...toolCall("c2", "{}", { parentMessageId: "p" })),
      );
      expect(messages(r)).toEqual([
        { id: "c1", role: "assistant", toolCalls: [call("c1", "{}")] },
        { id: "p", role: "assistant", toolCalls: [call("c2", "{}")] },
      ]);
    });

    it("keys the new assistant message by call id when the parent is not an assistant message", () => {
      const r = replay(
        run(...text("u", "hi", { role: "user" }), ...toolCall("c", "{}", { parentMessageId: "u" })),
      );
      expect(r.warnings[0]).toContain("is a 'user' message, not assistant");
      expect(messages(r).map((m) => m.id)).toEqual(["u", "c"]);
    });

    it("updates a replayed TOOL_CALL_START instead of duplicating the call", () => {
      const history = [
        { id: "a", role: "assistant", toolCalls: [call("c", '{"x":1}', "old")] },
      ] as unknown as AgUiMessage[];
      const r = replay(run(...toolCall("c", "", { parentMessageId: "a" })), {
        initialMessages: history,
      });
      expect(r.warnings[0]).toContain("renamed to 'lookup'");
      expect(messages(r)).toEqual([
        { id: "a", role: "assistant", toolCalls: [call("c", '{"x":1}', "lookup")] },
      ]);
      expect(
        (history[0] as unknown as { toolCalls: Array<{ function: { name: string } }> })
          .toolCalls[0]!.function.name,
      ).toBe("old");
    });

    it("places a tool result right after the assistant message that made the call", () => {
      const r = replay(
        run(
          ...toolCall("c1", "{}", { parentMessageId: "a" }),
          ...toolCall("c2", "{}", { parentMessageId: "a" }),
          ...text("b", "follow-up"),
          { type: "TOOL_CALL_RESULT", messageId: "t1", toolCallId: "c1", content: "one" },
          {
            type: "TOOL_CALL_RESULT",
            messageId: "t2",
            toolCallId: "c2",
            content: [{ type: "text", text: "two" }],
            metadata: { ms: 3 },
          },
          { type: "TOOL_CALL_RESULT", messageId: "t3", toolCallId: "nobody", content: "orphan" },
        ),
      );
      expect(messages(r).map((m) => m.id)).toEqual(["a", "t1", "t2", "b", "t3"]);
      expect(messages(r)[2]).toEqual({
        id: "t2",
        role: "tool",
        toolCallId: "c2",
        content: [{ type: "text", text: "two" }],
        metadata: { ms: 3 },
      });
    });
  });

  describe("activity messages", () => {
    const snapshot = (content: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({
      type: "ACTIVITY_SNAPSHOT",
      messageId: "act",
      activityType: "search",
      content,
      ...extra,
    });
    const delta = (patch: unknown[]) => ({
      type: "ACTIVITY_DELTA",
      messageId: "act",
      activityType: "search",
      patch,
    });

    it("creates, replaces and patches an activity message", () => {
      const r = replay(
        run(
          snapshot({ found: 0 }),
          snapshot({ found: 1 }),
          snapshot({ ignored: true }, { replace: false }),
          delta([{ op: "replace", path: "/found", value: 3 }]),
        ),
      );
      expect(messages(r)).toEqual([
        { id: "act", role: "activity", activityType: "search", content: { found: 3 } },
      ]);
    });

    it("warns and keeps the content when a patch does not apply, or the target is missing", () => {
      const r = replay(
        run(snapshot({ found: 0 }), delta([{ op: "replace", path: "/missing/deep", value: 1 }]), {
          ...delta([]),
          messageId: "nope",
        }),
      );
      expect(r.fault).toBeUndefined();
      expect(r.warnings[0]).toContain("Failed to apply activity patch for 'act'");
      expect(r.warnings[1]).toContain("no activity message 'nope'");
      expect(messages(r)).toHaveLength(1);
      expect(messages(r)[0]!.content).toEqual({ found: 0 });
    });

    it("refuses to stream text into an activity message", () => {
      const r = replay(run(snapshot({}), ...text("act", "x")));
      expect(r.fault).toBeUndefined();
      expect(r.warnings[0]).toContain("is an activity message");
      expect(messages(r)[0]!.content).toEqual({});
    });
  });

  describe("messages snapshots", () => {
    const history = [
      { id: "u1", role: "user", content: "hi" },
      { id: "r1", role: "reasoning", content: "local thought" },
      { id: "a1", role: "assistant", content: "old" },
      { id: "x1", role: "user", content: "dropped" },
    ] as unknown as AgUiMessage[];

    it("replaces by id, appends new messages and removes the ones it leaves out", () => {
      const r = replay(
        run({
          type: "MESSAGES_SNAPSHOT",
          messages: [
            { id: "u1", role: "user", content: "hi" },
            { id: "a1", role: "assistant", content: "new" },
            { id: "a2", role: "assistant", content: "more" },
          ],
        }),
        { initialMessages: history },
      );
      expect(messages(r).map((m) => [m.id, m.content])).toEqual([
        ["u1", "hi"],
        ["r1", "local thought"],
        ["a1", "new"],
        ["a2", "more"],
      ]);
    });

    it("treats the snapshot as the truth for reasoning when it carries some", () => {
      const r = replay(
        run({
          type: "MESSAGES_SNAPSHOT",
          messages: [{ id: "r9", role: "reasoning", content: "t" }],
        }),
        { initialMessages: history },
      );
      expect(messages(r).map((m) => m.id)).toEqual(["r9"]);
    });

    it("keeps local activity messages unless the snapshot claims their type", () => {
      const base = run({
        type: "ACTIVITY_SNAPSHOT",
        messageId: "act",
        activityType: "search",
        content: {},
      }).slice(0, -1);
      const keep = replay([...base, { type: "MESSAGES_SNAPSHOT", messages: [] }, finished()]);
      expect(messages(keep).map((m) => m.id)).toEqual(["act"]);
      const claim = replay([
        ...base,
        {
          type: "MESSAGES_SNAPSHOT",
          messages: [],
          metadata: { "@ag-ui/client": { authoritativeActivityTypes: ["search"] } },
        },
        finished(),
      ]);
      expect(messages(claim)).toEqual([]);
    });

    it("copies snapshot messages before streaming into them, so the event stays intact", () => {
      const snap = deepFreeze({
        type: "MESSAGES_SNAPSHOT",
        messages: [{ id: "a", role: "assistant", content: "x", toolCalls: [call("c", "")] }],
      });
      const r = replay(
        run(
          snap,
          { type: "TEXT_MESSAGE_START", messageId: "a" },
          { type: "TEXT_MESSAGE_CONTENT", messageId: "a", delta: "y" },
          { type: "TEXT_MESSAGE_END", messageId: "a" },
          toolStart("c", { parentMessageId: "a" }),
          { type: "TOOL_CALL_ARGS", toolCallId: "c", delta: "{}" },
          { type: "TOOL_CALL_END", toolCallId: "c" },
        ),
      );
      expect(r.fault).toBeUndefined();
      expect(messages(r)[0]).toMatchObject({ content: "xy", toolCalls: [call("c", "{}")] });
      expect(snap.messages[0]!.content).toBe("x");
    });
  });

  describe("state", () => {
    it("replaces the state on a snapshot, with any JSON value", () => {
      const r = replay(
        run({ type: "STATE_SNAPSHOT", snapshot: [1] }, { type: "STATE_SNAPSHOT", snapshot: null }),
      );
      expect(r.seg.state).toBeNull();
    });

    it("applies a delta as a new document, leaving the previous one untouched", () => {
      const initial = deepFreeze({ plan: { steps: ["a"] } });
      const r = replay(
        run({ type: "STATE_DELTA", delta: [{ op: "add", path: "/plan/steps/-", value: "b" }] }),
        { initialState: initial },
      );
      expect(r.seg.state).toEqual({ plan: { steps: ["a", "b"] } });
      expect(initial.plan.steps).toEqual(["a"]);
    });

    it("applies a failing patch atomically: warns and keeps the prior state object", () => {
      const initial = { plan: { status: "open" } };
      const r = replay(
        run({
          type: "STATE_DELTA",
          delta: [
            { op: "replace", path: "/plan/status", value: "closed" },
            { op: "test", path: "/plan/status", value: "never" },
          ],
        }),
        { initialState: initial },
      );
      expect(r.fault).toBeUndefined();
      expect(r.warnings[0]).toContain("Failed to apply state patch");
      expect(r.seg.state).toBe(initial);
      expect(initial.plan.status).toBe("open");
      expect(r.changes[1]).toEqual([false, false]);
    });

    it("starts from {} when no initial state is given", () => {
      expect(replay(run()).seg.state).toEqual({});
    });
  });

  describe("what each push reports", () => {
    it("flags state and message changes only when something changed", () => {
      const r = replay(
        run(
          { type: "TEXT_MESSAGE_START", messageId: "m" },
          { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "" },
          { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "x" },
          { type: "TEXT_MESSAGE_END", messageId: "m" },
          { type: "STATE_SNAPSHOT", snapshot: {} },
          { type: "CUSTOM", name: "n", value: 1 },
        ),
      );
      expect(r.changes).toEqual([
        [false, false],
        [false, true],
        [false, false],
        [false, true],
        [false, false],
        [true, false],
        [false, false],
        [false, false],
      ]);
    });

    it("asks for a checkpoint at each STEP_FINISHED", () => {
      const r = replay(
        run(
          { type: "STEP_STARTED", stepName: "plan" },
          { type: "STEP_FINISHED", stepName: "plan" },
        ),
      );
      expect(r.checkpoints).toEqual(["plan"]);
    });

    it("adds messages echoed in RUN_STARTED.input that are not held yet", () => {
      const history = [{ id: "u1", role: "user", content: "hi" }] as unknown as AgUiMessage[];
      const r = replay(
        [
          started({
            input: {
              threadId: "thread-1",
              runId: "run-1",
              messages: [
                { id: "u1", role: "user", content: "changed?" },
                { id: "u2", role: "user", content: "new" },
              ],
            },
          }),
          finished(),
        ],
        { initialMessages: history },
      );
      expect(messages(r).map((m) => [m.id, m.content])).toEqual([
        ["u1", "hi"],
        ["u2", "new"],
      ]);
    });

    it("describes a successful finish with result, usage and unanswered tool calls", () => {
      const usage = [{ provider: "p", inputTokens: 3 }];
      const r = replay([
        started(),
        ...toolCall("c1", "{}"),
        ...toolCall("c2", "{}"),
        { type: "TOOL_CALL_RESULT", messageId: "t", toolCallId: "c1", content: "ok" },
        finished({ result: { answer: 42 }, usage }),
      ]);
      expect(r.seg.terminal).toMatchObject({
        kind: "finished",
        outcome: "success",
        runId: "run-1",
        result: { answer: 42 },
        usage,
        pendingToolCallIds: ["c2"],
      });
    });

    it("describes interrupt and cancelled outcomes", () => {
      const interrupts = [{ id: "i1", reason: "approval", message: "ok?" }];
      expect(
        replay([started(), finished({ outcome: { type: "interrupt", interrupts } })]).seg.terminal,
      ).toMatchObject({ outcome: "interrupt", interrupts });
      expect(
        replay([started(), finished({ outcome: { type: "cancelled" } })]).seg.terminal,
      ).toMatchObject({ kind: "finished", outcome: "cancelled" });
      expect(
        replay([started(), finished({ outcome: { type: "success", pendingToolCallIds: ["z"] } })])
          .seg.terminal,
      ).toMatchObject({ pendingToolCallIds: ["z"] });
    });

    it("describes a RUN_ERROR with its code", () => {
      const r = replay([started(), { type: "RUN_ERROR", message: "boom", code: "RATE_LIMIT" }]);
      expect(r.seg.terminal).toEqual({
        kind: "error",
        runId: "run-1",
        message: "boom",
        code: "RATE_LIMIT",
      });
    });
  });

  it("never mutates frozen events or frozen initial messages across a whole run", () => {
    const history = deepFreeze([
      { id: "a", role: "assistant", content: "so far", toolCalls: [call("c0", "{}")] },
    ]) as unknown as AgUiMessage[];
    const stream = deepFreeze([
      started(),
      { type: "TEXT_MESSAGE_CHUNK", messageId: "a", delta: " more", metadata: { k: 1 } },
      ...toolCall("c1", '{"a":1}', { parentMessageId: "a" }),
      { type: "TOOL_CALL_RESULT", messageId: "t", toolCallId: "c1", content: "r" },
      { type: "STATE_SNAPSHOT", snapshot: { list: [1] } },
      { type: "STATE_DELTA", delta: [{ op: "add", path: "/list/-", value: { v: 2 } }] },
      { type: "STATE_DELTA", delta: [{ op: "replace", path: "/list/1/v", value: 3 }] },
      { type: "ACTIVITY_SNAPSHOT", messageId: "act", activityType: "t", content: { n: 0 } },
      {
        type: "ACTIVITY_DELTA",
        messageId: "act",
        activityType: "t",
        patch: [{ op: "replace", path: "/n", value: 1 }],
      },
      finished(),
    ]);
    const r = replay(stream, { initialMessages: history });
    expect(r.fault).toBeUndefined();
    expect(r.seg.state).toEqual({ list: [1, { v: 3 }] });
    expect(messages(r)[0]).toMatchObject({
      content: "so far more",
      metadata: { k: 1 },
      toolCalls: [call("c0", "{}"), call("c1", '{"a":1}')],
    });
    expect(messages(r).at(-1)).toMatchObject({ id: "act", content: { n: 1 } });
  });
});
