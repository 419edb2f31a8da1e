import { describe, expect, it } from "vitest";
import { applyPatchAtomically } from "../../src/pipeline/json-patch.js";
import { deepFreeze, replay, run } from "./helpers.js";

describe("applyPatchAtomically", () => {
  it("applies every RFC 6902 operation, copying only the touched path", () => {
    const doc = deepFreeze({ a: { list: [1, 2] }, untouched: { big: [1, 2, 3] }, m: { x: 1 } });
    const out = applyPatchAtomically(doc, [
      { op: "add", path: "/a/list/-", value: 3 },
      { op: "remove", path: "/a/list/0" },
      { op: "add", path: "/a/flag", value: true },
      { op: "copy", from: "/a/list", path: "/copied" },
      { op: "move", from: "/m/x", path: "/moved" },
      { op: "test", path: "/moved", value: 1 },
    ]) as Record<string, unknown>;
    expect(out).toEqual({
      a: { list: [2, 3], flag: true },
      untouched: { big: [1, 2, 3] },
      m: {},
      copied: [2, 3],
      moved: 1,
    });
    expect(out.untouched).toBe(doc.untouched);
    expect(doc).toEqual({ a: { list: [1, 2] }, untouched: { big: [1, 2, 3] }, m: { x: 1 } });
  });

  it("never writes into a value an earlier operation inserted from the (frozen) patch", () => {
    const patch = deepFreeze([
      { op: "add", path: "/obj", value: { inner: [] } },
      { op: "add", path: "/obj/inner/-", value: 1 },
    ]);
    expect(applyPatchAtomically({}, patch)).toEqual({ obj: { inner: [1] } });
    expect(patch[0]!.value).toEqual({ inner: [] });
  });

  it("throws on the first failing operation and leaves the document as it was", () => {
    const doc = { a: 1, b: { c: 2 } };
    expect(() =>
      applyPatchAtomically(doc, [
        { op: "replace", path: "/a", value: 9 },
        { op: "remove", path: "/b/missing/deeper" },
      ]),
    ).toThrow();
    expect(doc).toEqual({ a: 1, b: { c: 2 } });
    expect(() => applyPatchAtomically(doc, [{ op: "test", path: "/a", value: 2 }])).toThrow(
      /Test operation failed/,
    );
  });

  it("replaces the root, and refuses prototype writes", () => {
    expect(applyPatchAtomically({ a: 1 }, [{ op: "replace", path: "", value: [1] }])).toEqual([1]);
    expect(() =>
      applyPatchAtomically({}, [{ op: "add", path: "/__proto__/polluted", value: 1 }]),
    ).toThrow();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("serves STATE_DELTA with a frozen stream that builds and then edits a branch", () => {
    const r = replay(
      run(
        deepFreeze({
          type: "STATE_DELTA",
          delta: [{ op: "add", path: "/todo", value: { items: [] } }],
        }),
        deepFreeze({
          type: "STATE_DELTA",
          delta: [{ op: "add", path: "/todo/items/-", value: "write tests" }],
        }),
      ),
    );
    expect(r.fault).toBeUndefined();
    expect(r.warnings).toEqual([]);
    expect(r.seg.state).toEqual({ todo: { items: ["write tests"] } });
  });
});
