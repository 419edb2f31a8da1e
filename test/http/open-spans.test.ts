import { describe, expect, it } from "vitest";
import { OpenSpans } from "../../src/http/open-spans.js";

describe("what a stopped run left open", () => {
  it("is closed innermost first, each closer attributed as its opener was", () => {
    const spans = new OpenSpans();
    for (const event of [
      { type: "RUN_STARTED", threadId: "t", runId: "r" },
      { type: "STEP_STARTED", stepName: "plan" },
      { type: "SUBAGENT_STARTED", subagentRunId: "sub", name: "helper" },
      { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
      { type: "TEXT_MESSAGE_END", messageId: "m1" },
      { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "search", subagentRunId: "sub" },
      { type: "REASONING_START", messageId: "r1" },
      { type: "REASONING_MESSAGE_START", messageId: "r1m", role: "reasoning" },
      { type: "TEXT_MESSAGE_START", messageId: "m2", role: "assistant" },
    ]) {
      spans.observe(event);
    }
    expect(spans.closers("stopped")).toEqual([
      { type: "REASONING_MESSAGE_END", messageId: "r1m" },
      { type: "REASONING_END", messageId: "r1" },
      { type: "TEXT_MESSAGE_END", messageId: "m2" },
      { type: "TOOL_CALL_END", toolCallId: "c1", subagentRunId: "sub" },
      { type: "STEP_FINISHED", stepName: "plan" },
      { type: "SUBAGENT_ERROR", subagentRunId: "sub", message: "stopped" },
    ]);
    expect(spans.closers("stopped")).toEqual([]);
  });

  it("is nothing after the run's own end, and starts afresh with the next run", () => {
    const spans = new OpenSpans();
    spans.observe({ type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" });
    spans.observe({ type: "RUN_ERROR", message: "boom" });
    expect(spans.closers("x")).toEqual([]);
    spans.observe({ type: "RUN_STARTED", threadId: "t", runId: "r2" });
    spans.observe({ type: "TOOL_CALL_START", toolCallId: "c", toolCallName: "f" });
    expect(spans.closers("x")).toEqual([{ type: "TOOL_CALL_END", toolCallId: "c" }]);
  });
});
