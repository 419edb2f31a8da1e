import { describe, expect, it } from "vitest";
import {
  ERRCODE,
  errcodeOf,
  runOutput,
  type SegmentEnd,
  statusesFor,
  storageFailureEnd,
  terminalEnd,
} from "../../src/bridge/acp/outcomes.js";

describe("outcomes", () => {
  it("passes numeric AG-UI codes through and gives every other fault 500", () => {
    expect(errcodeOf(429)).toBe(429);
    expect(errcodeOf("404")).toBe(404);
    expect(errcodeOf("rate_limited")).toBe(ERRCODE.agentError);
    expect(errcodeOf(1.5)).toBe(ERRCODE.agentError);
    expect(errcodeOf(undefined)).toBe(ERRCODE.agentError);
  });

  it("maps the agent's terminal event to the segment's end", () => {
    expect(terminalEnd(undefined)).toEqual({
      kind: "error",
      errcode: ERRCODE.protocolViolation,
      description: "end of stream: the agent ended without RUN_FINISHED or RUN_ERROR",
    });
    expect(terminalEnd({ kind: "error", message: "boom", code: "E1" } as never)).toEqual({
      kind: "error",
      errcode: ERRCODE.agentError,
      description: "boom (code E1)",
    });
    expect(terminalEnd({ kind: "error", message: "slow down" } as never)).toEqual({
      kind: "error",
      errcode: ERRCODE.agentError,
      description: "slow down",
    });
    const interrupts = [{ id: "i1", reason: "approval" }];
    expect(terminalEnd({ kind: "finished", outcome: "interrupt", interrupts } as never)).toEqual({
      kind: "interrupt",
      interrupts,
    });
    expect(terminalEnd({ kind: "finished", outcome: "cancelled" } as never)).toEqual({
      kind: "cancelled",
      description: "the agent cancelled the run",
      rollback: false,
    });
    expect(terminalEnd({ kind: "finished", outcome: "success" } as never)).toEqual({
      kind: "success",
    });
    expect(terminalEnd({ kind: "finished", outcome: "success", result: 42 } as never)).toEqual({
      kind: "success",
      result: 42,
    });
  });

  it("gives each end its run and thread status (the bridge page's table)", () => {
    const table: Array<[SegmentEnd, string, string]> = [
      [{ kind: "success" }, "success", "idle"],
      [{ kind: "interrupt", interrupts: [] }, "interrupted", "interrupted"],
      [{ kind: "cancelled", description: "", rollback: false }, "error", "idle"],
      [{ kind: "timeout", description: "" }, "timeout", "error"],
      [{ kind: "error", errcode: 500, description: "" }, "error", "error"],
    ];
    for (const [end, run, thread] of table) expect(statusesFor(end)).toEqual({ run, thread });
  });

  it("writes the ACP output of each end", () => {
    const values = { n: 1 };
    const messages = [{ role: "assistant", content: "hi" }];
    expect(runOutput("r", { kind: "success" }, values, messages)).toEqual({
      type: "result",
      values,
      messages,
    });
    expect(runOutput("r", { kind: "success", result: "x" }, values, messages)).toEqual({
      type: "result",
      values,
      messages,
      result: "x",
    });
    const interrupts = [{ id: "i1", reason: "approval" }];
    expect(runOutput("r", { kind: "interrupt", interrupts }, values, messages)).toEqual({
      type: "interrupt",
      interrupt: { approval: interrupts[0] },
    });
    expect(
      runOutput("r", { kind: "cancelled", description: "stop", rollback: true }, values, messages),
    ).toEqual({ type: "error", run_id: "r", errcode: ERRCODE.cancelled, description: "stop" });
    expect(runOutput("r", { kind: "timeout", description: "late" }, values, messages)).toEqual({
      type: "error",
      run_id: "r",
      errcode: ERRCODE.timeout,
      description: "late",
    });
    expect(runOutput("r", storageFailureEnd("events", new Error("disk full")), {}, [])).toEqual({
      type: "error",
      run_id: "r",
      errcode: ERRCODE.storageFailure,
      description: "the server could not store the run's events: disk full",
    });
  });
});
