import { describe, expect, it } from "vitest";
import { SharedReads } from "../../src/storage/postgres/shared-reads.js";

// Reads asked for together share a statement (shared-reads.ts), and none answers a caller with
// a read that began before its call.

/** A read whose answer the test gives: `reads` lists the ones started, in order. */
function controlledReads() {
  const reads: Array<{ key: string; answer: (n: number) => void; fail: (err: Error) => void }> = [];
  const read = (key: string) => () =>
    new Promise<number>((resolve, reject) => {
      reads.push({ key, answer: resolve, fail: reject });
    });
  return { reads, read };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("SharedReads", () => {
  it("answers callers that ask while a read is under way with one read started after it", async () => {
    const shared = new SharedReads<number>();
    const { reads, read } = controlledReads();
    const first = shared.get("a", read("a"));
    expect(reads).toHaveLength(1);
    // Asked while the first read is under way: they wait for the next one, not this one.
    const second = shared.get("a", read("a"));
    const third = shared.get("a", read("a"));
    expect(reads).toHaveLength(1);
    reads[0]!.answer(1);
    expect(await first).toBe(1);
    await turn();
    expect(reads).toHaveLength(2);
    reads[1]!.answer(2);
    expect(await Promise.all([second, third])).toEqual([2, 2]);
    // Nothing under way any more: the next caller starts a read of its own at once.
    const fourth = shared.get("a", read("a"));
    expect(reads).toHaveLength(3);
    reads[2]!.answer(3);
    expect(await fourth).toBe(3);
  });

  it("keeps keys apart", async () => {
    const shared = new SharedReads<number>();
    const { reads, read } = controlledReads();
    const a = shared.get("a", read("a"));
    const b = shared.get("b", read("b"));
    expect(reads.map((r) => r.key)).toEqual(["a", "b"]);
    reads[1]!.answer(20);
    reads[0]!.answer(10);
    expect(await Promise.all([a, b])).toEqual([10, 20]);
  });

  it("fails every caller of a read that failed, and reads again for the next", async () => {
    const shared = new SharedReads<number>();
    const { reads, read } = controlledReads();
    const first = shared.get("a", read("a"));
    const second = shared.get("a", read("a"));
    const third = shared.get("a", read("a"));
    reads[0]!.fail(new Error("lost"));
    await expect(first).rejects.toThrow("lost");
    await turn();
    reads[1]!.fail(new Error("lost again"));
    await expect(second).rejects.toThrow("lost again");
    await expect(third).rejects.toThrow("lost again");
    const fourth = shared.get("a", read("a"));
    reads[2]!.answer(4);
    expect(await fourth).toBe(4);
  });
});
