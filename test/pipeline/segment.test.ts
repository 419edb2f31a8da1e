import { describe, expect, it } from "vitest";
import {
  AGUI_PROTOCOL_VERSION,
  type AguiValidation,
  compareDeclaredProtocol,
  PipelineFault,
  SegmentPipeline,
} from "../../src/pipeline/index.js";
import * as validation from "../../src/validation/index.js";
import { finished, RUN, replay, run, started, THREAD, text } from "./helpers.js";

describe("SegmentPipeline", () => {
  it("sends every warning to the logger with the run and event coordinates, and its kind", () => {
    const logged: Array<[Record<string, unknown>, string]> = [];
    const logger = {
      warn: (context: Record<string, unknown>, message: string) => logged.push([context, message]),
    };
    replay(run({ type: "FUTURE" }), { logger });
    expect(logged).toEqual([
      [
        {
          threadId: THREAD,
          runId: RUN,
          index: 1,
          eventType: "FUTURE",
          deviation: "FUTURE: dropped event of unrecognised type '…'",
        },
        "event 1 (FUTURE): dropped event of unrecognised type 'FUTURE'",
      ],
    ]);
  });

  it("warns about a producer declaring a newer or uninterpretable protocol version, not an older one", () => {
    expect(replay(run(), { initialState: {} }).warnings).toEqual([]);
    const seg = (v: string) => replay([started({ protocolVersion: v }), finished()]).warnings;
    expect(seg("1.0")).toEqual([]);
    expect(seg("0.9")).toEqual([]);
    expect(seg("1.2")[0]).toContain("AG-UI 1.2");
    expect(seg("v1")[0]).toContain("cannot interpret");
    expect(compareDeclaredProtocol("2.0")).toBe("newer");
    expect(AGUI_PROTOCOL_VERSION).toBe("1.0");
  });

  it("reports RUN_STARTED on the push that carried it", () => {
    const seg = new SegmentPipeline({ threadId: THREAD, runId: RUN });
    expect(seg.push(started()).runStarted).toMatchObject({ runId: RUN });
  });

  it("makes faults Errors that carry index, event type and rule", () => {
    const r = replay([started(), ...text("m", "x").slice(1)]);
    expect(r.fault).toBeInstanceOf(PipelineFault);
    expect(r.fault).toBeInstanceOf(Error);
    expect(r.fault).toMatchObject({
      index: 1,
      eventType: "TEXT_MESSAGE_CONTENT",
      rule: "text-message",
    });
  });

  it("keeps the events of a push that were accepted before its fault", () => {
    const seg = new SegmentPipeline({ threadId: THREAD, runId: RUN });
    seg.push(started());
    seg.push({ type: "TEXT_MESSAGE_CHUNK", messageId: "a", delta: "x" });
    // Closing lane "a" is fine; opening "b" while "b" is already open as a text message is not.
    seg.push({ type: "TEXT_MESSAGE_START", messageId: "b" });
    const r = seg.push({ type: "TEXT_MESSAGE_CHUNK", messageId: "b", delta: "y" });
    expect(r.fault?.message).toContain("'b' is already in progress");
    expect(seg.messages.map((m) => m.id)).toEqual(["a", "b"]);
  });

  it("uses an injected validation module", () => {
    let calls = 0;
    const counting: AguiValidation = {
      aguiEventTypes: validation.aguiEventTypes,
      aguiValidator(anchor: string) {
        const inner = validation.aguiValidator(anchor as never);
        const fn = Object.assign(
          (data: unknown) => {
            calls++;
            const ok = inner(data);
            fn.errors = inner.errors;
            return ok;
          },
          { errors: null as typeof inner.errors },
        );
        return fn;
      },
    };
    const r = replay(run(...text("m", "x")), { validation: counting });
    expect(r.fault).toBeUndefined();
    expect(calls).toBe(5);
  });
});

describe("SegmentPipeline › dropRaw", () => {
  const native = { event: "on_chat_model_stream", data: { chunk: { content: "Par" } } };
  const stream = [
    started({ rawEvent: native }),
    { type: "RAW", event: native, source: "langgraph" },
    {
      type: "TEXT_MESSAGE_CHUNK",
      messageId: "m",
      role: "assistant",
      delta: "Par",
      rawEvent: native,
    },
    { type: "TEXT_MESSAGE_CHUNK", messageId: "m", delta: "is", rawEvent: native },
    { type: "STATE_SNAPSHOT", snapshot: { city: "Paris" }, rawEvent: native },
    finished(),
  ];

  it("forwards RAW events and rawEvent fields by default", () => {
    const r = replay(stream);
    expect(r.fault).toBeUndefined();
    expect(r.events.filter((e) => e.type === "RAW")).toHaveLength(1);
    expect(r.events.filter((e) => "rawEvent" in e)).toHaveLength(4);
  });

  it("drops RAW events and every rawEvent (chunks' included) when on, and nothing else", () => {
    const r = replay(stream, { dropRaw: true });
    expect(r.fault).toBeUndefined();
    expect(r.warnings).toEqual([]);
    expect(r.events.some((e) => e.type === "RAW" || "rawEvent" in e)).toBe(false);
    expect(r.events.map((e) => e.type)).toEqual([
      "RUN_STARTED",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "STATE_SNAPSHOT",
      "RUN_FINISHED",
    ]);
    expect((r.seg.messages[0] as { content?: unknown }).content).toBe("Paris");
    expect(r.seg.state).toEqual({ city: "Paris" });
    // The adapter's own objects are left as they were.
    expect(stream[4]).toHaveProperty("rawEvent");
  });
});
