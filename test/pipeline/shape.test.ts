import { describe, expect, it } from "vitest";
import { SegmentPipeline } from "../../src/pipeline/index.js";
import { depthOf, jsonSize, ShapeError, StateBounds } from "../../src/pipeline/shape.js";

const KiB = 1024;
const keys = {
  maxStateBytes: "server.limits.maxStateBytes",
  maxEventDepth: "server.limits.maxEventDepth",
};

describe("jsonSize and depthOf", () => {
  it("estimate the JSON text's length and the nesting, without recursing past the cap", () => {
    const value = { a: [1, "xy", null, true], b: { c: {} } };
    const exact = JSON.stringify(value).length;
    expect(Math.abs(jsonSize(value) - exact)).toBeLessThanOrEqual(8);
    expect(depthOf(value, 100)).toBe(3);
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(depthOf(deep, 300)).toBe(301);
  });
});

describe("StateBounds", () => {
  it("a state patched again and again but kept small is never refused", () => {
    const bounds = new StateBounds({ maxStateBytes: 64 * KiB, maxEventDepth: 32, keys }, {});
    for (let i = 0; i < 1000; i++) {
      bounds.delta([{ op: "add", path: "/x", value: "y".repeat(8 * KiB) }], {
        x: "y".repeat(8 * KiB),
      });
    }
  });

  it("a state that grows is refused within a sixteenth of the limit past it", () => {
    const limit = 64 * KiB;
    const bounds = new StateBounds({ maxStateBytes: limit, maxEventDepth: 32, keys }, {});
    const state: Record<string, string> = {};
    let refused: unknown;
    for (let i = 0; i < 100 && !refused; i++) {
      state[`k${i}`] = "z".repeat(KiB);
      try {
        bounds.delta([{ op: "add", path: `/k${i}`, value: state[`k${i}`] }], { ...state });
      } catch (err) {
        refused = err;
      }
    }
    expect(refused).toBeInstanceOf(ShapeError);
    expect((refused as ShapeError).rule).toBe("state-size");
    expect(jsonSize(state)).toBeGreaterThan(limit);
    expect(jsonSize(state)).toBeLessThanOrEqual(limit + limit / 16 + 2 * KiB);
  });
});

describe("the pipeline with bounds", () => {
  const pipeline = () =>
    new SegmentPipeline({
      threadId: "t",
      runId: "r",
      bounds: { maxStateBytes: 16 * KiB, maxEventDepth: 16, keys },
    });

  it("a deep patch leaves the state as it was and faults naming the path and the key", () => {
    const seg = pipeline();
    seg.push({ type: "RUN_STARTED", threadId: "t", runId: "r" });
    seg.push({ type: "STATE_SNAPSHOT", snapshot: { keep: 1 } });
    const delta = [];
    let path = "";
    for (let i = 0; i < 40; i++) {
      path += "/a";
      delta.push({ op: "add", path, value: {} });
    }
    const result = seg.push({ type: "STATE_DELTA", delta });
    expect(result.fault?.rule).toBe("state-depth");
    expect(result.fault?.message).toMatch(
      /^event 2 \(STATE_DELTA\): the patch makes the state nested deeper than 16 levels, at \/a\/a.*\(server\.limits\.maxEventDepth\)$/,
    );
    expect(seg.state).toEqual({ keep: 1 });
  });

  it("a snapshot larger than the state's limit faults before it is kept", () => {
    const seg = pipeline();
    seg.push({ type: "RUN_STARTED", threadId: "t", runId: "r" });
    const result = seg.push({ type: "STATE_SNAPSHOT", snapshot: { big: "q".repeat(20 * KiB) } });
    expect(result.fault?.rule).toBe("state-size");
    expect(result.fault?.message).toMatch(
      /the snapshot would be larger than 16 KiB.*\(server\.limits\.maxStateBytes\)$/,
    );
    expect(seg.state).toEqual({});
  });
});
