/** The MCP mapping (src/bridge/mcp): tools of agents, runs as results and tasks, interrupts as forms. */
import { describe, expect, it } from "vitest";
import {
  answerOf,
  callResultOf,
  decodeCursor,
  encodeCursor,
  expectedSchemaOf,
  ProgressOfEvents,
  replyTextOf,
  requestedSchemaOf,
  resumeEntryOf,
  runInputOf,
  ToolArgumentsError,
  taskOf,
  toolNameOf,
  toolOf,
  ttlOf,
} from "../../src/bridge/mcp/index.js";

const messageAgent = {
  name: "echo",
  version: "1.0.0",
  descriptor: {
    metadata: { description: "Echoes." },
    specs: { input: { type: "object", properties: { messages: {} } }, output: { type: "object" } },
  },
};
const inputAgent = {
  name: "sum two",
  version: "2.0.0",
  descriptor: {
    metadata: { description: "" },
    specs: {
      input: { type: "object", properties: { a: { type: "number" } }, required: ["a"] },
      output: { type: "object", properties: { total: { type: "number" } } },
    },
  },
};
const run = (fields: Record<string, unknown>) => ({
  run_id: "r1",
  kind: "stateless",
  status: "success",
  created_at: "2026-01-01T00:00:00.000Z",
  updated_at: "2026-01-01T00:00:01.000Z",
  output: null,
  interrupts: [],
  ...fields,
});

describe("agents as tools", () => {
  it("a message agent takes {message, context?}; no outputSchema for the open default", () => {
    const tool = toolOf(messageAgent);
    expect(tool).toMatchObject({ name: "echo", title: "echo 1.0.0", description: "Echoes." });
    expect(tool.inputSchema.required).toEqual(["message"]);
    expect(tool.outputSchema).toBeUndefined();
  });

  it("another agent takes its own input (plus context) and declares its output", () => {
    const tool = toolOf(inputAgent);
    expect(tool.name).toBe("sum_two");
    expect(tool.description).toBe("The sum two agent.");
    expect(tool.inputSchema).toMatchObject({ required: ["a"], properties: { a: {}, context: {} } });
    expect(tool.outputSchema).toEqual(inputAgent.descriptor.specs.output);
  });

  it("tool names keep to MCP's characters and length", () => {
    expect(toolNameOf("a b/c")).toBe("a_b_c");
    expect(toolNameOf("x".repeat(200))).toHaveLength(128);
  });

  it("arguments become the run's input and conversation, or a ToolArgumentsError", () => {
    expect(runInputOf(messageAgent.descriptor, { message: "hi", context: "c" }, "m1")).toEqual({
      input: { messages: [{ id: "m1", role: "user", content: "hi" }] },
      context: "c",
    });
    expect(runInputOf(inputAgent.descriptor, { a: 1 }, "m1")).toEqual({ input: { a: 1 } });
    for (const bad of [
      {},
      { message: 3 },
      { message: "x", more: 1 },
      { message: "x", context: "" },
    ]) {
      expect(() => runInputOf(messageAgent.descriptor, bad, "m1")).toThrow(ToolArgumentsError);
    }
  });
});

describe("runs as results and tasks", () => {
  it("the reply is what the assistant said after the call's message", () => {
    const messages = [
      { role: "user", content: "first" },
      { role: "assistant", content: "old" },
      { role: "user", content: "second" },
      { role: "assistant", content: [{ type: "text", text: "new" }] },
    ];
    expect(replyTextOf(messages)).toBe("new");
  });

  it("a success carries its result or state; a failure is isError with its description", () => {
    const ok = callResultOf(
      run({ output: { type: "result", values: { v: 1 }, messages: [], result: { total: 2 } } }),
      false,
    );
    expect(ok.structuredContent).toEqual({ total: 2 });
    expect(ok.isError).toBeUndefined();
    const failed = callResultOf(
      run({ status: "error", output: { type: "error", errcode: 500, description: "boom" } }),
      false,
    );
    expect(failed).toMatchObject({
      isError: true,
      content: [{ text: "The agent's run error: boom" }],
    });
  });

  it("statuses map to task statuses", () => {
    expect(taskOf(run({ status: "pending" }))).toMatchObject({
      status: "working",
      pollInterval: 1000,
    });
    expect(
      taskOf(run({ status: "interrupted", interrupts: [{ id: "i", message: "Approve?" }] })),
    ).toMatchObject({ status: "input_required", statusMessage: "The agent asks: Approve?" });
    expect(taskOf(run({})).status).toBe("completed");
    expect(
      taskOf(run({ status: "error", output: { errcode: 499, description: "stop" } })),
    ).toMatchObject({
      status: "cancelled",
      statusMessage: "stop",
    });
    expect(taskOf(run({ status: "timeout", output: { errcode: 504 } })).status).toBe("failed");
  });

  it("a finished stateless run's task lives as long as retention keeps the run", () => {
    const finished = run({ updated_at: "2026-01-01T00:00:01.000Z" });
    expect(ttlOf(finished, 3600)).toBe(1000 + 3_600_000);
    expect(ttlOf(finished, null)).toBeNull();
    expect(ttlOf({ ...finished, kind: "stateful" }, 3600)).toBeNull();
    expect(ttlOf({ ...finished, status: "pending" }, 3600)).toBeNull();
  });

  it("cursors round-trip, and a made-up one is refused", () => {
    expect(decodeCursor(encodeCursor(50))).toBe(50);
    expect(decodeCursor("bm9wZQ")).toBeUndefined();
    expect(decodeCursor("!!")).toBeUndefined();
  });

  it("progress counts every event and says the reply so far", () => {
    const progress = new ProgressOfEvents();
    expect(progress.push({ type: "RUN_STARTED" })).toBe(false);
    expect(progress.push({ type: "TEXT_MESSAGE_CONTENT", delta: "Hel" })).toBe(true);
    expect(progress.push({ type: "TEXT_MESSAGE_CONTENT", delta: "lo" })).toBe(true);
    expect(progress.params).toEqual({ progress: 3, message: "Hello" });
  });
});

describe("interrupts as elicitation", () => {
  const approval = {
    type: "object",
    required: ["approved"],
    properties: { approved: { type: "boolean" }, note: { type: "string", pattern: "x" } },
  };

  it("a flat schema of primitives is the form; anything else one answer field", () => {
    expect(requestedSchemaOf(approval)).toEqual({
      schema: {
        type: "object",
        properties: { approved: { type: "boolean" }, note: { type: "string" } },
        required: ["approved"],
      },
      freeForm: false,
    });
    const nested = requestedSchemaOf({ type: "object", properties: { a: { type: "object" } } });
    expect(nested.freeForm).toBe(true);
    expect(Object.keys(nested.schema.properties)).toEqual(["answer"]);
  });

  it("the interrupt's own schema wins over the descriptor's, and the open default is none", () => {
    const entries = [{ interrupt_type: "approval", resume_payload: approval }];
    expect(expectedSchemaOf({ id: "i", reason: "approval" }, entries)).toBe(approval);
    const own = { type: "object", properties: { ok: { type: "boolean" } } };
    expect(expectedSchemaOf({ id: "i", reason: "approval", responseSchema: own }, entries)).toBe(
      own,
    );
    expect(
      expectedSchemaOf({ id: "i", reason: "other" }, [
        { interrupt_type: "*", resume_payload: { type: "object" } },
      ]),
    ).toBeUndefined();
  });

  it("answers become resume entries; a free-form answer is read as JSON when it parses", () => {
    expect(answerOf({ answer: '{"ok":true}' }, true)).toEqual({ ok: true });
    expect(answerOf({ answer: "plain" }, true)).toBe("plain");
    expect(
      resumeEntryOf({ id: "i", reason: "approval" }, { accepted: true, payload: { ok: 1 } }),
    ).toEqual({
      interruptId: "i",
      status: "resolved",
      payload: { ok: 1 },
    });
    expect(resumeEntryOf({ id: "i", reason: "approval" }, { accepted: false })).toEqual({
      interruptId: "i",
      status: "cancelled",
    });
  });
});
