import { describe, expect, it } from "vitest";
import { changedPaths } from "../../ui/src/lib/diff.js";

describe("the inspector's state diff", () => {
  it("names changed, added and removed leaves with the containers holding them", () => {
    const before = { plan: ["back up", "migrate"], status: "awaiting", meta: { n: 1 } };
    const after = { plan: ["back up", "migrate", "verify"], status: "done", meta: { n: 1 }, x: 0 };
    expect([...changedPaths(before, after)].sort()).toEqual([
      "",
      "/plan",
      "/plan/2",
      "/status",
      "/x",
    ]);
  });

  it("finds nothing between equal values, and the root when a value changes kind", () => {
    expect(changedPaths({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }).size).toBe(0);
    expect([...changedPaths({ a: [1] }, { a: { 0: 1 } })]).toEqual(["/a", ""]);
    expect([...changedPaths(null, { a: 1 })]).toEqual([""]);
  });

  it("escapes keys holding / and ~ as JSON Pointer does", () => {
    expect([...changedPaths({}, { "a/b": 1, "c~d": 2 })].sort()).toEqual(["", "/a~1b", "/c~0d"]);
  });
});
