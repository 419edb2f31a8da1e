import { describe, expect, it } from "vitest";
import {
  customFrameData,
  endsForGood,
  finalFrameData,
  readFinal,
  readUpdate,
  valuesFrameData,
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
    expect(valuesFrameData("r1", { n: 1 }, [])).toBe(
      '{"type":"values","run_id":"r1","status":"pending","values":{"n":1},"messages":[]}',
    );
    expect(finalFrameData("r1", "success", {}, [], { type: "result" })).toBe(
      '{"type":"values","run_id":"r1","status":"success","values":{},"messages":[],"output":{"type":"result"}}',
    );
  });

  it("reads back what it wrote", () => {
    const event = { type: "RUN_STARTED", threadId: "t", runId: "a" };
    expect(readUpdate(frame("custom", customFrameData("r1", event)))).toEqual(event);
    expect(readUpdate(frame("subagent", customFrameData("r1", event)))).toEqual(event);
    expect(readUpdate(frame("values", valuesFrameData("r1", {}, [])))).toBeUndefined();
    const output = { type: "error", errcode: 499, description: "stop" };
    const final = frame("final", finalFrameData("r1", "error", {}, [], output));
    expect(readFinal(final)).toEqual({ status: "error", output });
    expect(readUpdate(final)).toBeUndefined();
    expect(readFinal(frame("custom", customFrameData("r1", event)))).toBeUndefined();
  });

  it("tells a final frame that ends the run for good from an interrupted one", () => {
    for (const status of ["success", "error", "timeout"] as const) {
      expect(endsForGood(frame("final", finalFrameData("r1", status, {}, [], {})))).toBe(true);
    }
    expect(endsForGood(frame("final", finalFrameData("r1", "interrupted", {}, [], {})))).toBe(
      false,
    );
    // Only final frames end a run, whatever their data says.
    expect(endsForGood(frame("values", finalFrameData("r1", "success", {}, [], {})))).toBe(false);
  });
});
