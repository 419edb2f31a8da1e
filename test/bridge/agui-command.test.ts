import type { RunAgentInput } from "@ag-ui/core";
import { describe, expect, it } from "vitest";
import { parseRunCommand } from "../../src/bridge/acp/run-command.js";
import {
  aguiRunCommand,
  clientIds,
  knownMessages,
  startedInput,
} from "../../src/bridge/agui/run-command.js";

const input = (extra: Partial<RunAgentInput> = {}): RunAgentInput => ({
  threadId: "main",
  runId: "client-run",
  messages: [
    { id: "m1", role: "user", content: "old" },
    { id: "m2", role: "user", content: "new" },
  ],
  tools: [],
  context: [],
  state: { n: 1 },
  forwardedProps: { p: 1 },
  ...extra,
});

describe("the AG-UI face's input as a run command", () => {
  it("sends the thread only what it has not seen, and keeps the client's ids", () => {
    const command = aguiRunCommand(input(), {
      agentId: "echo",
      knownMessageIds: new Set(["m1"]),
      onDisconnect: "cancel",
      face: "copilotkit",
    });
    // Stored exactly as the face has always written it.
    expect(JSON.stringify(command.creation)).toBe(
      JSON.stringify({
        agent_id: "echo",
        input: {
          messages: [{ id: "m2", role: "user", content: "new" }],
          tools: [],
          context: [],
          state: { n: 1 },
          forwardedProps: { p: 1 },
        },
        if_not_exists: "create",
        on_disconnect: "cancel",
        stream_mode: ["custom"],
        agui: { threadId: "main", runId: "client-run" },
      }),
    );
    expect(command.agui).toEqual({ threadId: "main", runId: "client-run" });
    expect(clientIds(command)).toEqual({ threadId: "main", runId: "client-run" });
    expect(command.streamMode).toEqual(["custom"]);
    expect(command.ifNotExists).toBe("create");
    // The face rides beside the stored body (the run's own column), never in it.
    expect(command.face).toBe("copilotkit");
    const stored = JSON.parse(JSON.stringify(command.creation));
    expect(parseRunCommand(stored).face).toBeUndefined();
    expect(parseRunCommand(stored, "copilotkit")).toEqual(command);
  });

  it("leaves out a null state and absent forwarded props", () => {
    const command = aguiRunCommand(
      input({ state: null, forwardedProps: undefined, tools: undefined as never }),
      { agentId: "echo", knownMessageIds: new Set(), onDisconnect: "continue", face: "agui" },
    );
    expect(command.input.value).toEqual({
      messages: [
        { id: "m1", role: "user", content: "old" },
        { id: "m2", role: "user", content: "new" },
      ],
      tools: [],
      context: [],
    });
    expect(command.onDisconnect).toBe("continue");
  });

  it("has no client ids for a run made through ACP", () => {
    expect(clientIds(parseRunCommand({}))).toBeUndefined();
    expect(clientIds(parseRunCommand({ agui: { threadId: "main" } }))).toBeUndefined();
  });

  it("replays a run's input as its RUN_STARTED carries it", () => {
    const command = parseRunCommand({
      input: {
        messages: [{ id: "u", role: "human", content: "hi" }, { role: "nobody" }],
        state: null,
      },
    });
    expect(startedInput(command, { threadId: "main", runId: "r" })).toEqual({
      threadId: "main",
      runId: "r",
      messages: [{ id: "u", role: "user", content: "hi" }],
      tools: [],
      context: [],
      forwardedProps: {},
    });
  });

  it("leaves out messages AG-UI has no form for", () => {
    expect(
      knownMessages([
        { role: "nobody", content: "" },
        { id: "a", role: "ai", content: "x" },
      ]),
    ).toEqual([{ id: "a", role: "assistant", content: "x" }]);
  });
});
