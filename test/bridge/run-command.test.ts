import { describe, expect, it } from "vitest";
import {
  deliveredModes,
  parseRunCommand,
  withAguiOrigin,
} from "../../src/bridge/acp/run-command.js";

describe("the run command", () => {
  it("reads every field of a run-creation body", () => {
    const body = {
      agent_id: "echo",
      input: {
        messages: [{ role: "user", content: "hi" }],
        tools: [{ name: "t" }],
        context: [{ description: "d", value: "v" }],
        state: { n: 1 },
        forwardedProps: { a: 1 },
        extra: true,
      },
      metadata: { m: 1 },
      config: { tags: ["x"], configurable: { temperature: 0 } },
      webhook: "https://example.com/hook",
      stream_mode: "custom",
      stream_subgraphs: true,
      on_disconnect: "continue",
      on_completion: "keep",
      multitask_strategy: "enqueue",
      if_not_exists: "create",
      after_seconds: 5,
    } as const;
    const command = parseRunCommand(body);
    expect(command).toEqual({
      creation: body,
      agentId: "echo",
      input: {
        value: body.input,
        messages: body.input.messages,
        tools: body.input.tools,
        context: body.input.context,
        state: { n: 1 },
        forwardedProps: { a: 1 },
      },
      metadata: { m: 1 },
      config: body.config,
      webhook: "https://example.com/hook",
      streamMode: ["custom"],
      streamSubgraphs: true,
      onDisconnect: "continue",
      onCompletion: "keep",
      multitaskStrategy: "enqueue",
      ifNotExists: "create",
      afterSeconds: 5,
    });
    // The body itself is what storage keeps: the very object, not a copy.
    expect(command.creation).toBe(body);
  });

  it("gives an empty body ACP's defaults", () => {
    expect(parseRunCommand({})).toEqual({
      creation: {},
      input: { value: {} },
      metadata: {},
      streamSubgraphs: false,
      onDisconnect: "cancel",
      onCompletion: "delete",
      multitaskStrategy: "reject",
      ifNotExists: "reject",
    });
  });

  it("reads fields of the wrong type as absent, and a null stream_mode as none", () => {
    const command = parseRunCommand({
      agent_id: 7,
      input: "text",
      metadata: [1],
      webhook: 3,
      stream_mode: null,
      after_seconds: "5",
    });
    expect(command.agentId).toBeUndefined();
    expect(command.input).toEqual({ value: "text" });
    expect(command.metadata).toEqual({});
    expect(command.webhook).toBeUndefined();
    expect(command.streamMode).toBeUndefined();
    expect(command.afterSeconds).toBeUndefined();
  });

  it("keeps an empty stream_mode list as requested", () => {
    expect(parseRunCommand({ stream_mode: [] }).streamMode).toEqual([]);
  });

  describe("the AG-UI origin", () => {
    it("reads the origin stored by older versions under the agui key", () => {
      const command = parseRunCommand({ agui: { threadId: "main", runId: "r1" } });
      expect(command.agui).toEqual({ threadId: "main", runId: "r1" });
    });

    it("is present, without ids, for an agui key that names none", () => {
      expect(parseRunCommand({ agui: null }).agui).toEqual({});
      expect(parseRunCommand({ agui: { runId: 3 } }).agui).toEqual({});
      expect(parseRunCommand({}).agui).toBeUndefined();
    });

    it("is stored with the body, where a parse reads it back", () => {
      const body = { agent_id: "echo", stream_mode: ["custom"] };
      const command = withAguiOrigin(parseRunCommand(body), { threadId: "main", runId: "r1" });
      expect(command.agui).toEqual({ threadId: "main", runId: "r1" });
      expect(JSON.stringify(command.creation)).toBe(
        '{"agent_id":"echo","stream_mode":["custom"],"agui":{"threadId":"main","runId":"r1"}}',
      );
      expect(body).toEqual({ agent_id: "echo", stream_mode: ["custom"] });
      expect(parseRunCommand(JSON.parse(JSON.stringify(command.creation)))).toEqual(command);
    });
  });

  describe("the frame modes a stream delivers", () => {
    const modes = (body: Record<string, unknown>, kind: "stateful" | "stateless") => [
      ...deliveredModes(parseRunCommand(body), kind),
    ];

    it("is values unless modes are requested", () => {
      expect(modes({}, "stateful")).toEqual(["values"]);
      expect(modes({ stream_mode: [] }, "stateful")).toEqual(["values"]);
      expect(modes({ stream_mode: ["values", "custom"] }, "stateful")).toEqual([
        "values",
        "custom",
      ]);
    });

    it("adds the subagents' frames to custom for stream_subgraphs, and always when stateless", () => {
      expect(modes({ stream_mode: "custom" }, "stateful")).toEqual(["custom"]);
      expect(modes({ stream_mode: "custom", stream_subgraphs: true }, "stateful")).toEqual([
        "custom",
        "subagent",
      ]);
      expect(modes({ stream_mode: "custom" }, "stateless")).toEqual(["custom", "subagent"]);
      expect(modes({ stream_mode: "values", stream_subgraphs: true }, "stateful")).toEqual([
        "values",
      ]);
    });
  });
});
