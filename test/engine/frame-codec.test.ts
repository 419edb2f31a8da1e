import { describe, expect, it } from "vitest";
import {
  customFrameData,
  endsForGood,
  finalFrameData,
  finalNeedsRunOutput,
  fullCustom,
  fullFinalData,
  readFinal,
  readUpdate,
  VALUES_DELTA_DATA,
  ValuesRebuilder,
  valuesKeyframeData,
} from "../../src/engine/frames/codec.js";
import { Accumulator } from "../../src/pipeline/index.js";
import type { RunFrame } from "../../src/storage/types.js";
import { jsonPieces } from "../../src/util/json-pieces.js";

const frame = (mode: RunFrame["mode"], data: string): RunFrame => ({
  run_id: "r1",
  seq: 1,
  mode,
  data,
});

describe("the frame codec", () => {
  it("writes the ACP stream items byte for byte", () => {
    // A custom frame is stored as its AG-UI event, and read in full form.
    const custom = frame("custom", customFrameData({ type: "TEXT_MESSAGE_START", messageId: "m" }));
    expect(custom.data).toBe('{"type":"TEXT_MESSAGE_START","messageId":"m"}');
    expect(fullCustom(custom).data).toBe(
      '{"type":"custom","run_id":"r1","status":"pending","update":{"type":"TEXT_MESSAGE_START","messageId":"m"}}',
    );
    expect(fullCustom({ ...custom, mode: "subagent" }).data).toBe(fullCustom(custom).data);
    // A values frame is stored without its values and rebuilt on read.
    const values = new ValuesRebuilder().next(frame("values", valuesKeyframeData({ n: 1 }, [])));
    expect(values?.data).toBe(
      '{"type":"values","run_id":"r1","status":"pending","values":{"n":1},"messages":[]}',
    );
    // A result's final frame is stored by reference to the run's output, completed on read.
    const output = { type: "result", values: {}, messages: [] };
    const stored = frame("final", finalFrameData("r1", "success", {}, [], output));
    expect(finalNeedsRunOutput(stored)).toBe(true);
    expect(fullFinalData(stored, output).data).toBe(
      '{"type":"values","run_id":"r1","status":"success","values":{},"messages":[],"output":{"type":"result"}}',
    );
    // Any other final frame is stored in full form.
    const error = { type: "error", run_id: "r1", errcode: 500, description: "x" };
    expect(finalFrameData("r1", "error", { n: 1 }, [], error)).toBe(
      '{"type":"values","run_id":"r1","status":"error","values":{"n":1},"messages":[],"output":{"type":"error","run_id":"r1","errcode":500,"description":"x"}}',
    );
  });

  it("reads back what it wrote", () => {
    const event = { type: "RUN_STARTED", threadId: "t", runId: "a" };
    expect(readUpdate(frame("custom", customFrameData(event)))).toEqual(event);
    expect(readUpdate(frame("subagent", customFrameData(event)))).toEqual(event);
    expect(readUpdate(frame("values", valuesKeyframeData({}, [])))).toBeUndefined();
    const output = { type: "error", errcode: 499, description: "stop" };
    const final = frame("final", finalFrameData("r1", "error", {}, [], output));
    expect(readFinal(final)).toEqual({ status: "error", output });
    expect(readUpdate(final)).toBeUndefined();
    expect(readFinal(frame("custom", customFrameData(event)))).toBeUndefined();
    // A result stored by reference: its output is the run's.
    const result = frame("final", finalFrameData("r1", "success", {}, [], { type: "result" }));
    expect(readFinal(result)).toEqual({ status: "success", output: null });
    // A result's final frame in full form: its output is the frame's values and messages.
    const full = fullFinalData(result, { type: "result", values: { n: 1 }, messages: [] });
    expect(readFinal(full)).toEqual({
      status: "success",
      output: { type: "result", values: { n: 1 }, messages: [] },
    });
  });

  it("reads custom frames stored in full form before the event-only format as they are", () => {
    const event = { type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta: "hi" };
    const older = frame(
      "custom",
      `{"type":"custom","run_id":"r1","status":"pending","update":${JSON.stringify(event)}}`,
    );
    expect(fullCustom(older)).toBe(older);
    expect(readUpdate(older)).toEqual(event);
    expect(fullCustom(frame("custom", customFrameData(event))).data).toBe(older.data);
    // Other frames are never wrapped.
    const values = frame("values", valuesKeyframeData({}, []));
    expect(fullCustom(values)).toBe(values);
  });

  it("renders a lazy values frame when it is read, and refuses once the log moved on", () => {
    const rebuilder = new ValuesRebuilder();
    const lazy = rebuilder.nextLazy(frame("values", valuesKeyframeData({ n: 1 }, [])))!;
    expect(lazy.data).toBe(
      '{"type":"values","run_id":"r1","status":"pending","values":{"n":1},"messages":[]}',
    );
    // Read once, it keeps its data.
    const skipped = rebuilder.nextLazy({ ...frame("values", VALUES_DELTA_DATA), seq: 2 })!;
    rebuilder.nextLazy({ ...frame("custom", customFrameData({ type: "STEP_STARTED" })), seq: 3 });
    expect(lazy.data).toContain('"values":{"n":1}');
    expect(() => skipped.data).toThrow(/values frame 2 was read after the log moved on/);
  });

  it("tells a final frame that ends the run for good from an interrupted one", () => {
    for (const status of ["success", "error", "timeout"] as const) {
      expect(endsForGood(frame("final", finalFrameData("r1", status, {}, [], {})))).toBe(true);
      const result = { type: "result" };
      expect(endsForGood(frame("final", finalFrameData("r1", status, {}, [], result)))).toBe(true);
    }
    expect(endsForGood(frame("final", finalFrameData("r1", "interrupted", {}, [], {})))).toBe(
      false,
    );
    // Only final frames end a run, whatever their data says.
    expect(endsForGood(frame("values", finalFrameData("r1", "success", {}, [], {})))).toBe(false);
  });

  it("rebuilds values frames of a long answer byte for byte as the whole state", () => {
    // Past 64 K characters a message's text is held in pieces: frames must not change for it.
    const events: Record<string, unknown>[] = [
      { type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" },
      { type: "TEXT_MESSAGE_START", messageId: "m2", role: "assistant" },
    ];
    for (let i = 0; i < 800; i++) {
      const messageId = i % 5 === 0 ? "m2" : "m1";
      // Escapes, multi-byte characters and a surrogate pair split between two deltas.
      const delta = i % 7 === 0 ? `"q" \\ \n é \ud83d` : `\ude00${"prose ".repeat(30)}`;
      events.push({ type: "TEXT_MESSAGE_CONTENT", messageId, delta });
      if (i === 400) events.push({ type: "TEXT_MESSAGE_END", messageId: "m1", metadata: { k: 1 } });
    }
    events.push({
      type: "MESSAGES_SNAPSHOT",
      messages: [{ id: "m2", role: "assistant", content: "replaced" }],
    });
    events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: "m2", delta: " and more" });
    const start = [{ id: "u", role: "user", content: "go" }];
    const reference = new Accumulator({}, start);
    const lazy = new ValuesRebuilder();
    const eager = new ValuesRebuilder();
    let seq = 0;
    const take = (f: Omit<RunFrame, "seq" | "run_id">) => {
      const next = { ...f, run_id: "r1", seq: ++seq } as RunFrame;
      return [lazy.nextLazy(next)!, eager.next(next)!] as const;
    };
    take({ mode: "values", data: valuesKeyframeData({}, start) });
    let checked = 0;
    for (const [i, event] of events.entries()) {
      reference.apply(event as never, () => {});
      take({ mode: "custom", data: customFrameData(event) });
      if (i % 97 !== 0 && i !== events.length - 1) continue;
      const [fromLazy, fromEager] = take({ mode: "values", data: VALUES_DELTA_DATA });
      const expected = JSON.stringify({
        type: "values",
        run_id: "r1",
        status: "pending",
        values: {},
        messages: reference.messages.map((m) => ({ ...m })),
      });
      expect([...jsonPieces(fromLazy.value!())].join(""), `event ${i}`).toBe(expected);
      expect(fromLazy.data, `event ${i}`).toBe(expected);
      expect(fromEager.data, `event ${i}`).toBe(expected);
      checked++;
    }
    expect(checked).toBeGreaterThan(8);
    expect(seq).toBeGreaterThan(events.length);
  });
});
