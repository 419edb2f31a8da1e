import { describe, expect, it } from "vitest";
import { aguiToAcpMessages } from "../../src/bridge/acp/messages.js";
import { LocalFrameBus } from "../../src/engine/frame-bus.js";
import {
  customFrameData,
  finalFrameData,
  VALUES_DELTA_DATA,
  valuesKeyframeData,
} from "../../src/engine/frames/codec.js";
import { followRun, readFullFrames } from "../../src/engine/frames/follow.js";
import type { RunFrame, Storage } from "../../src/storage/types.js";
import { storageWithPendingRun } from "../helpers/pending-run.js";

const RUN = "0190c7a0-0000-7000-8000-000000000001";

/** A run record in storage with these frames (the run itself ended with `output`). */
async function storedRun(frames: Omit<RunFrame, "run_id">[], output: Record<string, unknown>) {
  const { storage } = await storageWithPendingRun(RUN);
  await storage.appendFrames(frames.map((f) => ({ ...f, run_id: RUN })));
  await storage.updateRun(RUN, { status: "success", output });
  return storage;
}

async function followAll(storage: Storage, afterSeq = 0): Promise<RunFrame[]> {
  const out: RunFrame[] = [];
  const signal = new AbortController().signal;
  for await (const frame of followRun(storage, new LocalFrameBus(), RUN, { afterSeq, signal })) {
    out.push(frame);
  }
  return out;
}

const event = (delta: string) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: "m", delta });
const start = { type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" };

describe("reading values frames back", () => {
  it("frames stored in full form (older databases) are read as they are", async () => {
    const legacyValues = `{"type":"values","run_id":"${RUN}","status":"pending","values":{"n":1},"messages":[]}`;
    const output = { type: "result", values: { n: 1 }, messages: [] };
    const legacyFinal = `{"type":"values","run_id":"${RUN}","status":"success","values":{"n":1},"messages":[],"output":${JSON.stringify(output)}}`;
    const legacyCustom = `{"type":"custom","run_id":"${RUN}","status":"pending","update":${JSON.stringify(start)}}`;
    const storage = await storedRun(
      [
        { seq: 1, mode: "custom", data: legacyCustom },
        { seq: 2, mode: "values", data: legacyValues },
        { seq: 3, mode: "final", data: legacyFinal },
      ],
      output,
    );
    const frames = await followAll(storage);
    expect(frames.map((f) => f.data)).toEqual([legacyCustom, legacyValues, legacyFinal]);
    expect((await readFullFrames(storage, RUN, 1)).map((f) => f.data)).toEqual([
      legacyValues,
      legacyFinal,
    ]);
    await storage.close();
  });

  it("a keyframe, the events after it and a result's final frame rebuild the full stream, from any position", async () => {
    const messages = [{ id: "u", role: "user", content: "hi" }];
    const values = { n: 1 };
    const acpMessages = aguiToAcpMessages([
      ...messages,
      { id: "m", role: "assistant", content: "ab" },
    ] as never);
    const output = { type: "result", values, messages: acpMessages };
    const storage = await storedRun(
      [
        { seq: 1, mode: "custom", data: customFrameData(start) },
        { seq: 2, mode: "custom", data: customFrameData(event("a")) },
        { seq: 3, mode: "values", data: valuesKeyframeData(values, messages) },
        { seq: 4, mode: "custom", data: customFrameData(event("b")) },
        { seq: 5, mode: "values", data: VALUES_DELTA_DATA },
        { seq: 6, mode: "final", data: finalFrameData(RUN, "success", values, [], output) },
      ],
      output,
    );
    const all = await followAll(storage);
    // Custom frames are stored as their event and read in full form.
    expect(JSON.parse(all[1]!.data)).toEqual({
      type: "custom",
      run_id: RUN,
      status: "pending",
      update: event("a"),
    });
    const last = JSON.parse(all[4]!.data);
    expect(last).toEqual({
      type: "values",
      run_id: RUN,
      status: "pending",
      values,
      messages: last.messages,
    });
    expect(JSON.stringify(last.messages)).toBe(JSON.stringify(acpMessages));
    expect(JSON.parse(all[2]!.data).messages).toHaveLength(2);
    expect(JSON.parse(all[5]!.data)).toEqual({
      type: "values",
      run_id: RUN,
      status: "success",
      values,
      messages: acpMessages,
      // A result's values and messages are the frame's, not repeated in its output.
      output: { type: "result" },
    });
    for (let at = 0; at <= 6; at++) {
      expect((await followAll(storage, at)).map((f) => f.data)).toEqual(
        all.slice(at).map((f) => f.data),
      );
      expect((await readFullFrames(storage, RUN, at)).map((f) => f.data)).toEqual(
        all.slice(at).map((f) => f.data),
      );
    }
    // Compacted to its final frame, the run still reads: the frame takes the run's output.
    const finalOnly = {
      seq: 1,
      mode: "final" as const,
      data: finalFrameData(RUN, "success", {}, [], output),
    };
    const compacted = await storedRun([finalOnly], output);
    expect((await followAll(compacted)).map((f) => f.data)).toEqual([all[5]!.data]);
    await compacted.close();
    await storage.close();
  });
});
