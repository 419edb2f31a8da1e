import { describe, expect, it } from "vitest";
import {
  customFrameData,
  endsForGood,
  finalFrameData,
  finalNeedsRunOutput,
  fullFinalData,
  readFinal,
  readUpdate,
  ValuesRebuilder,
  valuesKeyframeData,
} from "../../src/engine/frames/codec.js";
import type { RunFrame } from "../../src/storage/types.js";

const frame = (mode: RunFrame["mode"], data: string): RunFrame => ({
  run_id: "r1",
  seq: 1,
  mode,
  data,
});

describe("the frame codec", () => {
  it("writes the ACP stream items byte for byte", () => {
    expect(customFrameData("r1", { type: "TEXT_MESSAGE_START", messageId: "m" })).toBe(
      '{"type":"custom","run_id":"r1","status":"pending","update":{"type":"TEXT_MESSAGE_START","messageId":"m"}}',
    );
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
      '{"type":"values","run_id":"r1","status":"success","values":{},"messages":[],"output":{"type":"result","values":{},"messages":[]}}',
    );
    // Any other final frame is stored in full form.
    const error = { type: "error", run_id: "r1", errcode: 500, description: "x" };
    expect(finalFrameData("r1", "error", { n: 1 }, [], error)).toBe(
      '{"type":"values","run_id":"r1","status":"error","values":{"n":1},"messages":[],"output":{"type":"error","run_id":"r1","errcode":500,"description":"x"}}',
    );
  });

  it("reads back what it wrote", () => {
    const event = { type: "RUN_STARTED", threadId: "t", runId: "a" };
    expect(readUpdate(frame("custom", customFrameData("r1", event)))).toEqual(event);
    expect(readUpdate(frame("subagent", customFrameData("r1", event)))).toEqual(event);
    expect(readUpdate(frame("values", valuesKeyframeData({}, [])))).toBeUndefined();
    const output = { type: "error", errcode: 499, description: "stop" };
    const final = frame("final", finalFrameData("r1", "error", {}, [], output));
    expect(readFinal(final)).toEqual({ status: "error", output });
    expect(readUpdate(final)).toBeUndefined();
    expect(readFinal(frame("custom", customFrameData("r1", event)))).toBeUndefined();
    // A result stored by reference: its output is the run's.
    const result = frame("final", finalFrameData("r1", "success", {}, [], { type: "result" }));
    expect(readFinal(result)).toEqual({ status: "success", output: null });
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
});
