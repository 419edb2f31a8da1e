import { describe, expect, it } from "vitest";
import { parseRunCommand, withAguiOrigin } from "../../src/bridge/acp/run-command.js";
import { buildRunInput, ownsState } from "../../src/bridge/acp/run-input.js";
import { AGUI_PROTOCOL_VERSION } from "../../src/pipeline/index.js";

const thread = (values: unknown, messages: Record<string, unknown>[] | null = null) => ({
  thread_id: "t1",
  values,
  messages: messages as never,
});
const first = { aguiRunId: "a1", first: true };

describe("ACP run → AG-UI run input", () => {
  it("maps the thread's history and the command's input", () => {
    const command = parseRunCommand({
      input: {
        messages: [{ id: "u2", role: "human", content: "again" }],
        tools: [{ name: "t", description: "", parameters: {} }],
        context: [{ description: "d", value: "v" }],
        forwardedProps: { p: 1 },
      },
      config: { tags: ["x"] },
    });
    const input = buildRunInput(
      command,
      thread({ n: 1 }, [{ id: "u1", role: "user", content: "hi" }]),
      first,
    );
    expect(input).toEqual({
      threadId: "t1",
      runId: "a1",
      protocolVersion: AGUI_PROTOCOL_VERSION,
      messages: [
        { id: "u1", role: "user", content: "hi" },
        { id: "u2", role: "user", content: "again" },
      ],
      tools: [{ name: "t", description: "", parameters: {} }],
      context: [{ description: "d", value: "v" }],
      forwardedProps: { p: 1, acp: { config: { tags: ["x"] } } },
      state: { n: 1 },
    });
  });

  it("adds the input's messages only to the first segment, and the resume entries to a resume", () => {
    const command = parseRunCommand({ input: { messages: [{ role: "user", content: "x" }] } });
    const resume = [{ interruptId: "i1", status: "resolved" }];
    const input = buildRunInput(command, thread(null), { aguiRunId: "a2", first: false, resume });
    expect(input.messages).toEqual([]);
    expect(input.resume).toEqual(resume);
    expect(buildRunInput(command, thread(null), { ...first, resume: [] }).resume).toBeUndefined();
  });

  it("starts from the thread's state, unwrapped, else the input's, else {}", () => {
    const withState = parseRunCommand({ input: { state: { from: "input" } } });
    expect(buildRunInput(withState, thread({ $state: [1, 2] }), first).state).toEqual([1, 2]);
    expect(buildRunInput(withState, thread({}), first).state).toEqual({ from: "input" });
    expect(buildRunInput(withState, thread(null), first).state).toEqual({ from: "input" });
    expect(buildRunInput(parseRunCommand({}), thread(null), first).state).toEqual({});
    // A null state is not AG-UI's: the input carries none then.
    expect("state" in buildRunInput(parseRunCommand({}), thread({ $state: null }), first)).toBe(
      false,
    );
  });

  it("lets an AG-UI client's own state win over the thread's", () => {
    const origin = { threadId: "main", runId: "r1" };
    const client = withAguiOrigin(
      parseRunCommand({ input: { state: { from: "client" } } }),
      origin,
    );
    expect(ownsState(client)).toBe(true);
    expect(buildRunInput(client, thread({ from: "thread" }), first).state).toEqual({
      from: "client",
    });
    const sentNone = withAguiOrigin(parseRunCommand({ input: {} }), origin);
    expect(ownsState(sentNone)).toBe(false);
    expect(buildRunInput(sentNone, thread({ from: "thread" }), first).state).toEqual({
      from: "thread",
    });
  });
});
