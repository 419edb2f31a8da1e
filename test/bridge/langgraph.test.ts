import { describe, expect, it } from "vitest";
import { acpToAguiMessages } from "../../src/bridge/acp/messages.js";
import {
  acpToLangchainMessages,
  langchainToAcpMessages,
} from "../../src/bridge/langgraph/messages.js";
import { MessagesMode } from "../../src/bridge/langgraph/messages-mode.js";
import { parseRunBody, parseStreamModes } from "../../src/bridge/langgraph/run-body.js";
import { LangGraphStreamMapper, waitResult } from "../../src/bridge/langgraph/stream-events.js";
import { ToolsMode } from "../../src/bridge/langgraph/tools-mode.js";
import {
  interruptsOfOutput,
  resumeBodyOf,
  toLangGraphInterrupts,
  toLangGraphValues,
} from "../../src/bridge/langgraph/values.js";

describe("LangChain messages ⇄ ours", () => {
  it("takes LangChain dicts and OpenAI-style roles, tool calls and tool results included", () => {
    const acp = langchainToAcpMessages([
      { type: "human", content: "hi", id: "h1" },
      { role: "user", content: "there" },
      {
        type: "ai",
        content: "",
        id: "a1",
        tool_calls: [{ id: "c1", name: "get", args: { q: 1 }, type: "tool_call" }],
      },
      { type: "tool", content: "42", tool_call_id: "c1", id: "t1" },
    ]);
    const agui = acpToAguiMessages(acp);
    expect(agui.map((m) => m.role)).toEqual(["user", "user", "assistant", "tool"]);
    expect(agui[0]).toMatchObject({ id: "h1", content: "hi" });
    expect(agui[2]).toMatchObject({
      id: "a1",
      toolCalls: [{ id: "c1", type: "function", function: { name: "get", arguments: '{"q":1}' } }],
    });
    expect(agui[3]).toMatchObject({ toolCallId: "c1", content: "42" });
  });

  it("refuses a message type it cannot take, naming where", () => {
    expect(() => langchainToAcpMessages([{ type: "human", content: "a" }, { type: "x" }])).toThrow(
      'input/messages/1/type "x"',
    );
    expect(() => langchainToAcpMessages([42])).toThrow("input/messages/0 must be a message object");
  });

  it("gives ours back as LangChain dicts, leaving out roles LangChain has no type for", () => {
    const out = acpToLangchainMessages([
      { id: "u", role: "user", content: "q" },
      {
        id: "a",
        role: "assistant",
        content: "",
        toolCalls: [{ id: "c", type: "function", function: { name: "f", arguments: "{bad" } }],
      },
      { id: "t", role: "tool", content: "r", toolCallId: "c" },
      { id: "r", role: "reasoning", content: "thinking" },
    ]);
    expect(out.map((m) => m.type)).toEqual(["human", "ai", "tool"]);
    expect(out[1]!.tool_calls).toEqual([{ id: "c", name: "f", args: {}, type: "tool_call" }]);
    expect(out[2]).toMatchObject({ tool_call_id: "c", status: "success" });
  });
});

describe("run bodies", () => {
  it("maps input, config and context, keeping the LangGraph options with the run", () => {
    const parsed = parseRunBody(
      {
        assistant_id: "echo",
        input: { messages: [{ type: "human", content: "hi" }], topic: "x" },
        config: { configurable: { a: 1, thread_id: "t" }, tags: ["t1"] },
        context: { b: 2 },
        stream_mode: "messages-tuple",
        stream_resumable: true,
      },
      false,
    );
    expect(parsed.acp.input).toEqual({
      messages: [{ role: "user", content: "hi" }],
      state: { topic: "x" },
    });
    expect(parsed.acp.config).toEqual({ configurable: { a: 1, b: 2 }, tags: ["t1"] });
    expect(parsed.acp.on_disconnect).toBe("continue");
    expect(parsed.options).toEqual({
      assistant_id: "echo",
      stream_mode: ["messages-tuple"],
      stream_resumable: true,
    });
  });

  it("takes command.resume on a thread only, and refuses what a graph of nodes would need", () => {
    expect(parseRunBody({ assistant_id: "a", command: { resume: 1 } }, false).resume).toEqual({
      value: 1,
    });
    expect(() => parseRunBody({ assistant_id: "a", command: { resume: 1 } }, true)).toThrow(
      "needs a thread",
    );
    expect(() => parseRunBody({ assistant_id: "a", interrupt_before: ["n"] }, false)).toThrow(
      "interrupt_before",
    );
    expect(() => parseRunBody({ assistant_id: "a", multitask_strategy: "x" }, false)).toThrow(
      "multitask_strategy",
    );
  });

  it("refuses stream modes it does not produce, naming them", () => {
    expect(parseStreamModes(undefined)).toEqual(["values"]);
    expect(parseStreamModes(["values", "values", "custom"])).toEqual(["values", "custom"]);
    expect(() => parseStreamModes(["debug", "values"])).toThrow('"debug" not supported');
  });
});

describe("interrupts", () => {
  const open = [{ id: "i1", reason: "approval", message: "ok?" }];

  it("are LangGraph interrupts with everything the agent said in value", () => {
    expect(toLangGraphInterrupts(open)).toEqual([
      { id: "i1", value: { reason: "approval", message: "ok?" } },
    ]);
    expect(interruptsOfOutput({ type: "interrupt", interrupt: { approval: open[0] } })).toEqual(
      open,
    );
  });

  it("are answered by a value or by a map keyed by interrupt id", () => {
    expect(resumeBodyOf({ approved: true }, open)).toEqual({
      resume: [{ interruptId: "i1", status: "resolved", payload: { approved: true } }],
    });
    expect(resumeBodyOf({ i1: "yes" }, open)).toEqual({
      resume: [{ interruptId: "i1", status: "resolved", payload: "yes" }],
    });
    expect(resumeBodyOf(null, open)).toEqual({
      resume: [{ interruptId: "i1", status: "resolved" }],
    });
  });
});

describe("stream events", () => {
  const context = { runId: "r", threadId: "t", agentName: "bot", runMetadata: {} };

  it("sends values once a message is complete, with updates naming what changed", () => {
    const mapper = new LangGraphStreamMapper(["values", "updates", "messages-tuple"], context);
    const messages = [{ id: "m", role: "assistant", content: "he" }];
    mapper.map({ kind: "event", event: { type: "TEXT_MESSAGE_START", messageId: "m" } });
    const chunk = mapper.map({
      kind: "event",
      event: { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "he" },
    });
    expect(chunk).toHaveLength(1);
    expect(chunk[0]!.event).toBe("messages");
    expect((chunk[0]!.data as unknown[])[1]).toMatchObject({ langgraph_node: "bot", run_id: "r" });
    expect(mapper.map({ kind: "values", values: {}, messages })).toEqual([]);
    mapper.map({ kind: "event", event: { type: "TEXT_MESSAGE_END", messageId: "m" } });
    const events = mapper.map({ kind: "values", values: { n: 1 }, messages });
    expect(events.map((e) => e.event)).toEqual(["updates", "values"]);
    expect(events[0]!.data).toEqual({
      bot: { n: 1, messages: [expect.objectContaining({ id: "m", content: "he" })] },
    });
    // The same values again at the end are not sent twice.
    expect(
      mapper.map({
        kind: "final",
        status: "success",
        output: { type: "result", values: { n: 1 }, messages },
      }),
    ).toEqual([]);
  });

  it("gives LangChain stream events in events mode, before the same chunk in messages-tuple", () => {
    const mapper = new LangGraphStreamMapper(["events", "messages-tuple"], context);
    const events = mapper.map({
      kind: "event",
      event: { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "hi" },
    });
    expect(events.map((e) => e.event)).toEqual(["events", "messages"]);
    expect(events[0]!.data).toMatchObject({
      event: "on_chat_model_stream",
      metadata: { langgraph_node: "bot" },
      data: { chunk: { type: "AIMessageChunk", id: "m", content: "hi" } },
    });
    const [end] = mapper.map({
      kind: "event",
      event: { type: "TEXT_MESSAGE_END", messageId: "m" },
    });
    expect(end!.data).toMatchObject({ event: "on_chat_model_end" });
    const [custom] = mapper.map({ kind: "event", event: { type: "CUSTOM", name: "n", value: 1 } });
    expect(custom!.data).toMatchObject({ event: "on_custom_event", name: "n", data: 1 });
  });

  it("ends with an error event for a failure and nothing for a cancel", () => {
    const mapper = new LangGraphStreamMapper(["values"], context);
    expect(
      mapper.map({ kind: "final", status: "error", output: { errcode: 500, description: "boom" } }),
    ).toEqual([{ event: "error", data: { error: "AgentError", message: "boom" } }]);
    expect(
      mapper.map({ kind: "final", status: "error", output: { errcode: 499, description: "x" } }),
    ).toEqual([]);
  });

  it("answers wait with values, __interrupt__ or __error__", () => {
    expect(toLangGraphValues({ $state: 3 }, [])).toEqual({ $state: 3, messages: [] });
    const base = { values: { a: 1 }, messages: [], interrupts: [] };
    expect(
      waitResult({ ...base, status: "interrupted", output: null, interrupts: [{ id: "i" }] }),
    ).toEqual({ a: 1, messages: [], __interrupt__: [{ id: "i", value: {} }] });
    expect(
      waitResult({
        ...base,
        status: "timeout",
        output: { type: "error", errcode: 504, description: "slow" },
      }),
    ).toEqual({ a: 1, messages: [], __error__: { error: "TimeoutError", message: "slow" } });
  });
});

describe("the messages and tools modes", () => {
  it("grows a message with its tool call, then completes it", () => {
    const mode = new MessagesMode({ langgraph_node: "bot" });
    const first = mode.map("TEXT_MESSAGE_CONTENT", { messageId: "m", delta: "Hi " });
    expect(first.map((e) => e.event)).toEqual(["messages/metadata", "messages/partial"]);
    expect(first[0]!.data).toEqual({ m: { metadata: { langgraph_node: "bot" } } });
    mode.map("TEXT_MESSAGE_CONTENT", { messageId: "m", delta: "there" });
    mode.map("TOOL_CALL_START", { toolCallId: "c", toolCallName: "f", parentMessageId: "m" });
    const [partial] = mode.map("TOOL_CALL_ARGS", { toolCallId: "c", delta: '{"a":1}' });
    expect(partial!.data).toEqual([
      expect.objectContaining({
        id: "m",
        content: "Hi there",
        tool_calls: [{ id: "c", name: "f", args: { a: 1 }, type: "tool_call" }],
      }),
    ]);
    expect(mode.map("TOOL_CALL_END", { toolCallId: "c" })[0]!.event).toBe("messages/complete");
  });

  it("starts a tool when its arguments are complete and ends it with its result or error", () => {
    const mode = new ToolsMode();
    mode.map("TOOL_CALL_START", { toolCallId: "c", toolCallName: "f" });
    mode.map("TOOL_CALL_ARGS", { toolCallId: "c", delta: '{"q":"x"}' });
    expect(mode.map("TOOL_CALL_END", { toolCallId: "c" })).toEqual([
      {
        event: "tools",
        data: { event: "on_tool_start", toolCallId: "c", name: "f", input: { q: "x" } },
      },
    ]);
    expect(mode.map("TOOL_CALL_RESULT", { toolCallId: "c", content: "r", error: "boom" })).toEqual([
      {
        event: "tools",
        data: { event: "on_tool_error", toolCallId: "c", name: "f", error: "boom" },
      },
    ]);
  });
});
