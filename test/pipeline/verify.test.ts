import { describe, expect, it } from "vitest";
import { SegmentPipeline } from "../../src/pipeline/index.js";
import { finished, RUN, replay, run, started, THREAD, text } from "./helpers.js";

const fault = (stream: unknown[]) => replay(stream).fault;

describe("pipeline order verification", () => {
  describe("lifecycle", () => {
    it("rejects a stream that does not open with RUN_STARTED", () => {
      const f = fault([{ type: "STEP_STARTED", stepName: "s" }]);
      expect(f?.rule).toBe("first-event");
      expect(f?.message).toContain("event 0 (STEP_STARTED): First event must be 'RUN_STARTED'");
    });

    it("accepts a stream that opens with RUN_ERROR", () => {
      const r = replay([{ type: "RUN_ERROR", message: "unreachable", code: "UNAVAILABLE" }]);
      expect(r.fault).toBeUndefined();
      expect(r.terminals).toEqual([
        { kind: "error", runId: undefined, message: "unreachable", code: "UNAVAILABLE" },
      ]);
    });

    it("rejects a nested RUN_STARTED", () => {
      expect(fault([started(), started()])?.rule).toBe("nested-run");
    });

    it("rejects anything but RUN_STARTED / RUN_ERROR after RUN_FINISHED", () => {
      const f = fault([started(), finished(), { type: "CUSTOM", name: "x", value: 1 }]);
      expect(f?.rule).toBe("after-terminal");
      expect(f?.index).toBe(2);
    });

    it("drops what follows RUN_ERROR (but a new RUN_STARTED) with one warning counting it; the agent's error stands", () => {
      const r = replay(
        [
          started(),
          { type: "STEP_STARTED", stepName: "agent" },
          {
            type: "RUN_ERROR",
            message: "Recursion limit of 25 reached",
            code: "GRAPH_RECURSION_LIMIT",
          },
          { type: "STEP_FINISHED", stepName: "agent" },
          { type: "STATE_SNAPSHOT", snapshot: { late: true } },
          finished(),
        ],
        { end: false },
      );
      expect(r.fault).toBeUndefined();
      expect(r.events.map((e) => e.type)).toEqual(["RUN_STARTED", "STEP_STARTED", "RUN_ERROR"]);
      expect(r.seg.terminal).toMatchObject({
        kind: "error",
        message: "Recursion limit of 25 reached",
        code: "GRAPH_RECURSION_LIMIT",
      });
      expect(r.seg.state).toEqual({});
      expect(r.warnings).toEqual([]);
      const end = r.seg.end();
      expect(end.warnings).toEqual([
        "event 3 (STEP_FINISHED): dropped 3 events (STEP_FINISHED, STATE_SNAPSHOT, RUN_FINISHED) the agent sent after its RUN_ERROR: AG-UI allows only a new RUN_STARTED after RUN_ERROR, so the run ends with the agent's error",
      ]);
    });

    it("marks each event dropped after RUN_ERROR, and reports them when a new run starts", () => {
      const seg = new SegmentPipeline({ threadId: THREAD, runId: RUN });
      seg.push(started());
      seg.push({ type: "RUN_ERROR", message: "first" });
      expect(seg.push({ type: "CUSTOM", name: "late", value: 1 })).toMatchObject({
        dropped: true,
        events: [],
        warnings: [],
      });
      const next = seg.push(started({ runId: "run-2" }));
      expect(next.events).toHaveLength(1);
      expect(next.warnings).toEqual([
        expect.stringMatching(
          /^event 2 \(CUSTOM\): dropped 1 event \(CUSTOM\) the agent sent after its RUN_ERROR/,
        ),
      ]);
      expect(seg.end().warnings).toEqual([]);
    });

    it("accepts a new run after RUN_ERROR, reporting both terminals", () => {
      const r = replay([
        started(),
        { type: "RUN_ERROR", message: "first" },
        started({ runId: "run-2" }),
        finished({ runId: "run-2" }),
      ]);
      expect(r.fault).toBeUndefined();
      expect(r.terminals.map((t) => [t.kind, t.runId])).toEqual([
        ["error", RUN],
        ["finished", "run-2"],
      ]);
      expect(r.seg.terminal?.kind).toBe("finished");
    });

    it("reports a stream that ends with a run still open", () => {
      const r = replay([started(), ...text("m", "x")]);
      expect(r.fault?.rule).toBe("incomplete-stream");
      expect(r.fault?.message).toBe(
        `end of stream: the stream ended while run '${RUN}' was still open: no RUN_FINISHED or RUN_ERROR`,
      );
    });

    it("reports an empty stream", () => {
      expect(replay([]).fault?.message).toContain("without RUN_STARTED");
    });
  });

  describe("run ids", () => {
    const scoped = (events: Array<Record<string, unknown>>) =>
      events.filter((e) => e.type === "RUN_STARTED" || e.type === "RUN_FINISHED");

    it("maps a RUN_FINISHED naming another run (LangGraph's own run id) to the run in progress, warning once", () => {
      const r = replay([started(), finished({ runId: "lg-run" })]);
      expect(r.fault).toBeUndefined();
      expect(scoped(r.events)).toEqual([started(), finished()]);
      expect(r.warnings).toEqual([
        `event 1 (RUN_FINISHED): RUN_FINISHED names thread '${THREAD}' run 'lg-run', but the run in progress is thread '${THREAD}' run '${RUN}'; mapped to the run in progress (reported once per run)`,
      ]);
      expect(r.seg.terminal).toMatchObject({ kind: "finished", runId: RUN });
    });

    it("maps a RUN_STARTED for another thread or run to the segment's, with one warning for the run", () => {
      const r = replay([
        started({ threadId: "other", runId: "minted" }),
        finished({ threadId: "other", runId: "minted" }),
      ]);
      expect(r.fault).toBeUndefined();
      expect(scoped(r.events)).toEqual([started(), finished()]);
      expect(r.warnings).toHaveLength(1);
      expect(r.warnings[0]).toContain("RUN_STARTED names thread 'other' run 'minted'");
    });

    it("leaves the adapter's own event object untouched when it maps its ids", () => {
      const event = finished({ runId: "lg-run" });
      replay([started(), event]);
      expect(event.runId).toBe("lg-run");
    });

    it("lets a later run in the same stream keep its own runId, but maps it to the segment's thread", () => {
      const ok = replay([
        started(),
        finished(),
        started({ runId: "r2" }),
        finished({ runId: "r2" }),
      ]);
      expect(ok.fault).toBeUndefined();
      expect(ok.warnings).toEqual([]);
      const r = replay([
        started(),
        finished(),
        started({ runId: "r2", threadId: "t2" }),
        finished({ runId: "r3" }),
      ]);
      expect(r.fault).toBeUndefined();
      expect(scoped(r.events).slice(2)).toEqual([
        started({ runId: "r2" }),
        finished({ runId: "r2" }),
      ]);
      expect(r.warnings).toHaveLength(1);
    });

    it("warns again for each run whose ids disagree", () => {
      const r = replay([
        started({ runId: "a" }),
        finished({ runId: "b" }),
        started({ runId: "r2" }),
        finished({ runId: "c" }),
      ]);
      expect(r.fault).toBeUndefined();
      expect(r.warnings).toHaveLength(2);
    });
  });

  describe("text messages", () => {
    it("rejects CONTENT or END for a message that is not open", () => {
      expect(fault(run({ type: "TEXT_MESSAGE_END", messageId: "m" }))?.rule).toBe("text-message");
      const f = fault(
        run(...text("m", "x"), { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "late" }),
      );
      expect(f?.message).toContain("No active text message found with ID 'm'");
    });

    it("rejects opening a message that is already open", () => {
      const f = fault([started(), text("m", "x")[0], text("m", "x")[0]]);
      expect(f?.message).toContain("already in progress");
    });

    it("rejects RUN_FINISHED while a message is open", () => {
      const f = fault([started(), text("m", "x")[0], finished()]);
      expect(f?.rule).toBe("open-at-finish");
      expect(f?.message).toContain("while text messages are still active: m");
    });
  });

  describe("tool calls", () => {
    const start = { type: "TOOL_CALL_START", toolCallId: "c", toolCallName: "f" };
    it("rejects ARGS / END for a call that is not open", () => {
      expect(fault(run({ type: "TOOL_CALL_ARGS", toolCallId: "c", delta: "{}" }))?.rule).toBe(
        "tool-call",
      );
      expect(fault(run(start, { type: "TOOL_CALL_END", toolCallId: "d" }))?.rule).toBe("tool-call");
    });

    it("rejects a duplicate open and RUN_FINISHED with an open call", () => {
      expect(fault([started(), start, start])?.message).toContain("already in progress");
      expect(fault([started(), start, finished()])?.message).toContain(
        "while tool calls are still active: c",
      );
    });
  });

  describe("reasoning", () => {
    it("verifies spans and messages separately, allowing one id to name both", () => {
      const r = replay(
        run(
          { type: "REASONING_START", messageId: "r" },
          { type: "REASONING_MESSAGE_START", messageId: "r", role: "reasoning" },
          { type: "REASONING_MESSAGE_CONTENT", messageId: "r", delta: "x" },
          { type: "REASONING_MESSAGE_END", messageId: "r" },
          { type: "REASONING_END", messageId: "r" },
        ),
      );
      expect(r.fault).toBeUndefined();
    });

    it("rejects an unopened span end, and an open span or message at RUN_FINISHED", () => {
      expect(fault(run({ type: "REASONING_END", messageId: "r" }))?.message).toContain(
        "No active reasoning span found with ID 'r'",
      );
      expect(fault(run({ type: "REASONING_START", messageId: "r" }))?.message).toContain(
        "reasoning spans are still active",
      );
      expect(
        fault(run({ type: "REASONING_MESSAGE_START", messageId: "r", role: "reasoning" }))?.message,
      ).toContain("reasoning messages are still active");
    });
  });

  describe("steps", () => {
    it("rejects finishing a step that was not started, or one started twice", () => {
      expect(fault(run({ type: "STEP_FINISHED", stepName: "s" }))?.rule).toBe("step");
      const twice = { type: "STEP_STARTED", stepName: "s" };
      expect(fault([started(), twice, twice])?.message).toContain('Step "s" is already active');
    });

    it("rejects RUN_FINISHED with a step open", () => {
      expect(fault(run({ type: "STEP_STARTED", stepName: "s" }))?.message).toContain(
        "while steps are still active: s",
      );
    });

    it("keys steps by owner: a subagent may not close the parent's step", () => {
      const f = fault([
        started(),
        { type: "STEP_STARTED", stepName: "tools" },
        { type: "STEP_FINISHED", stepName: "tools", subagentRunId: "s1" },
      ]);
      expect(f?.message).toContain("that step is open under the parent agent");
    });
  });

  describe("subagents", () => {
    const sStart = { type: "SUBAGENT_STARTED", subagentRunId: "s1", name: "researcher" };
    const sEnd = { type: "SUBAGENT_FINISHED", subagentRunId: "s1" };

    it("pairs SUBAGENT_STARTED with FINISHED / ERROR", () => {
      expect(replay(run(sStart, sEnd)).fault).toBeUndefined();
      expect(
        replay(run(sStart, { type: "SUBAGENT_ERROR", subagentRunId: "s1", message: "x" })).fault,
      ).toBeUndefined();
      expect(fault(run(sEnd))?.message).toContain("no active subagent found with ID 's1'");
    });

    it("rejects a reused invocation id and an unknown parent", () => {
      expect(fault(run(sStart, sEnd, sStart))?.message).toContain("cannot be reused");
      expect(fault(run({ ...sStart, parentSubagentRunId: "zz" }))?.message).toContain(
        "parentSubagentRunId 'zz'",
      );
    });

    it("rejects RUN_FINISHED while a subagent is active, naming it", () => {
      const f = fault(run(sStart));
      expect(f?.message).toContain("while subagents are still active: s1");
    });

    it("rejects a continuation attributed to another owner than its opener", () => {
      const f = fault([
        started(),
        { type: "TEXT_MESSAGE_START", messageId: "m", subagentRunId: "s1" },
        { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "x", subagentRunId: "s2" },
      ]);
      expect(f?.rule).toBe("attribution");
      const parentOwned = fault([
        started(),
        { type: "TEXT_MESSAGE_START", messageId: "m" },
        { type: "TEXT_MESSAGE_END", messageId: "m", subagentRunId: "s1" },
      ]);
      expect(parentOwned?.message).toContain("(the parent agent)");
    });

    it("rejects a tool call tagged differently from its parent message", () => {
      const f = fault([
        started(),
        { type: "TEXT_MESSAGE_START", messageId: "m", subagentRunId: "s1" },
        { type: "TEXT_MESSAGE_END", messageId: "m" },
        {
          type: "TOOL_CALL_START",
          toolCallId: "c",
          toolCallName: "f",
          parentMessageId: "m",
          subagentRunId: "s2",
        },
      ]);
      expect(f?.message).toContain("A tool call belongs to the message that carries it");
    });

    it("accepts attribution without any SUBAGENT_STARTED", () => {
      const r = replay(run(...text("m", "x", { subagentRunId: "s9" })));
      expect(r.fault).toBeUndefined();
    });
  });

  describe("interrupts", () => {
    it("accepts an interrupt outcome and rejects duplicate interrupt ids", () => {
      const interrupt = { id: "i1", reason: "approval" };
      expect(
        replay([started(), finished({ outcome: { type: "interrupt", interrupts: [interrupt] } })])
          .fault,
      ).toBeUndefined();
      const f = fault([
        started(),
        finished({ outcome: { type: "interrupt", interrupts: [interrupt, { ...interrupt }] } }),
      ]);
      expect(f?.rule).toBe("interrupt-ids");
      expect(f?.message).toContain("'i1'");
    });

    it("rejects an interrupt outcome without interrupts", () => {
      const f = fault([started(), finished({ outcome: { type: "interrupt", interrupts: [] } })]);
      expect(f?.rule).toBe("validation");
    });
  });

  it("keeps failing after a fault, without processing further events", () => {
    const r = replay([started(), started()], { end: false });
    const again = r.seg.push(finished());
    expect(again.fault).toBe(r.fault);
    expect(again.events).toEqual([]);
    expect(r.seg.end().fault).toBe(r.fault);
  });
});
