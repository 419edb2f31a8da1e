import { describe, expect, it } from "vitest";
import { ERRCODE } from "../../src/bridge/acp/outcomes.js";
import type { LogItem } from "../../src/bridge/langgraph/stream-events.js";
import { ThreadEventMapper } from "../../src/bridge/langgraph/thread-events.js";

type Rec = Record<string, unknown>;

const context = { runId: "run-1", threadId: "thread-1", agentName: "helper", runMetadata: {} };
const event = (e: Rec): LogItem => ({ kind: "event", event: e });

/** The events' `data`, by method, for a log fed in order to one mapper. */
function mapAll(items: LogItem[]): Array<{ method: string; data: Rec }> {
  const mapper = new ThreadEventMapper(context);
  return items.flatMap((item) =>
    mapper.map(item).map(({ method, params }) => {
      expect(params.namespace).toEqual([]);
      return { method, data: params.data as Rec };
    }),
  );
}

describe("v2 thread events from a run's log", () => {
  it("text and a tool call of the same message are content blocks of one message, in order", () => {
    const events = mapAll([
      event({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" }),
      event({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Let me " }),
      event({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "look." }),
      event({
        type: "TOOL_CALL_START",
        toolCallId: "c1",
        toolCallName: "get",
        parentMessageId: "m1",
      }),
      event({ type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: '{"q":' }),
      event({ type: "TOOL_CALL_ARGS", toolCallId: "c1", delta: "1}" }),
      event({ type: "TOOL_CALL_END", toolCallId: "c1" }),
      event({ type: "TOOL_CALL_RESULT", toolCallId: "c1", messageId: "t1", content: "42" }),
    ]);
    const messages = events.filter((e) => e.method === "messages").map((e) => e.data);
    expect(messages).toEqual([
      { event: "message-start", role: "ai", id: "m1" },
      { event: "content-block-start", index: 0, content: { type: "text", text: "" } },
      { event: "content-block-delta", index: 0, delta: { type: "text-delta", text: "Let me " } },
      { event: "content-block-delta", index: 0, delta: { type: "text-delta", text: "look." } },
      { event: "content-block-finish", index: 0, content: { type: "text", text: "Let me look." } },
      {
        event: "content-block-start",
        index: 1,
        content: { type: "tool_call_chunk", id: "c1", name: "get", args: "" },
      },
      { event: "content-block-delta", index: 1, delta: { type: "tool-call-delta", args: '{"q":' } },
      { event: "content-block-delta", index: 1, delta: { type: "tool-call-delta", args: "1}" } },
      {
        event: "content-block-finish",
        index: 1,
        content: { type: "tool_call", id: "c1", name: "get", args: { q: 1 } },
      },
      { event: "message-finish" },
    ]);
    expect(events.filter((e) => e.method === "tools").map((e) => e.data)).toEqual([
      { event: "tool-started", tool_call_id: "c1", tool_name: "get", input: { q: 1 } },
      { event: "tool-finished", tool_call_id: "c1", output: "42" },
    ]);
    expect(events[0]).toEqual({
      method: "lifecycle",
      data: { event: "running", graph_name: "helper" },
    });
  });

  it("an interrupted run asks on the input channel, then says interrupted; its resume runs again", () => {
    const mapper = new ThreadEventMapper(context);
    const interrupted = mapper.map({
      kind: "final",
      status: "interrupted",
      output: {
        type: "interrupt",
        interrupt: { approval: [{ id: "ask-1", reason: "approval", message: "OK?" }] },
      },
    });
    expect(interrupted.map(({ method, params }) => [method, params.data])).toEqual([
      ["lifecycle", { event: "running", graph_name: "helper" }],
      [
        "input.requested",
        { interrupt_id: "ask-1", payload: { reason: "approval", message: "OK?" } },
      ],
      ["lifecycle", { event: "interrupted", graph_name: "helper" }],
    ]);
    const resumed = mapper.map(event({ type: "RUN_STARTED", threadId: "t", runId: "r2" }));
    expect(resumed.map(({ params }) => params.data)).toEqual([
      { event: "running", graph_name: "helper" },
    ]);
  });

  it("a cancelled run fails with `cancelled`; a failed one with its description", () => {
    const cancelled = mapAll([
      { kind: "final", status: "error", output: { errcode: ERRCODE.cancelled, description: "x" } },
    ]);
    expect(cancelled.at(-1)).toEqual({
      method: "lifecycle",
      data: { event: "failed", graph_name: "helper", error: "cancelled" },
    });
    const failed = mapAll([
      { kind: "final", status: "error", output: { errcode: 500, description: "model down" } },
    ]);
    expect(failed.at(-1)!.data).toEqual({
      event: "failed",
      graph_name: "helper",
      error: "model down",
    });
  });

  it("custom events carry their value as the payload", () => {
    const events = mapAll([event({ type: "CUSTOM", name: "progress", value: { done: 1 } })]);
    expect(events.at(-1)).toEqual({
      method: "custom",
      data: { name: "progress", payload: { done: 1 } },
    });
  });
});
