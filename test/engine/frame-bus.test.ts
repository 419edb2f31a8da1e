import { describe, expect, it } from "vitest";
import { LocalFrameBus } from "../../src/engine/frame-bus.js";
import type { RunFrame } from "../../src/storage/types.js";

const frame = (seq: number) => ({ seq }) as unknown as RunFrame;

describe("LocalFrameBus", () => {
  it("hands a run's frames to its one listener, and to no other run's", () => {
    const bus = new LocalFrameBus();
    const got: number[] = [];
    const other: number[] = [];
    bus.subscribe("a", (frames) => got.push(...frames.map((f) => f.seq)));
    bus.subscribe("b", (frames) => other.push(...frames.map((f) => f.seq)));
    bus.publish("a", [frame(1), frame(2)]);
    expect(got).toEqual([1, 2]);
    expect(other).toEqual([]);
    expect(bus.listenerCount()).toBe(2);
  });

  it("hands frames to every listener of a run; one leaving does not stop the others", () => {
    const bus = new LocalFrameBus();
    const seen: string[] = [];
    const offFirst = bus.subscribe("r", () => seen.push("first"));
    const offSecond = bus.subscribe("r", () => seen.push("second"));
    const offThird = bus.subscribe("r", () => seen.push("third"));
    bus.publish("r", [frame(1)]);
    expect(seen).toEqual(["first", "second", "third"]);
    offFirst();
    offThird();
    seen.length = 0;
    bus.publish("r", [frame(2)]);
    expect(seen).toEqual(["second"]);
    expect(bus.listenerCount()).toBe(1);
    offSecond();
    seen.length = 0;
    bus.publish("r", [frame(3)]);
    expect(seen).toEqual([]);
    expect(bus.listenerCount()).toBe(0);
  });

  it("unsubscribing twice counts once, and does not remove a later listener", () => {
    const bus = new LocalFrameBus();
    const seen: string[] = [];
    const off = bus.subscribe("r", () => seen.push("old"));
    off();
    off();
    expect(bus.listenerCount()).toBe(0);
    bus.subscribe("r", () => seen.push("new"));
    off();
    bus.publish("r", [frame(1)]);
    expect(seen).toEqual(["new"]);
    expect(bus.listenerCount()).toBe(1);
  });

  it("a listener that leaves while frames are handed out does not stop the others", () => {
    const bus = new LocalFrameBus();
    const seen: string[] = [];
    let offFirst: () => void = () => {};
    offFirst = bus.subscribe("r", () => {
      seen.push("first");
      offFirst();
    });
    bus.subscribe("r", () => seen.push("second"));
    bus.publish("r", [frame(1)]);
    bus.publish("r", [frame(2)]);
    expect(seen).toEqual(["first", "second", "second"]);
  });

  it("pokeAll hands every watched run an empty list", () => {
    const bus = new LocalFrameBus();
    const got: Array<[string, number]> = [];
    bus.subscribe("a", (frames) => got.push(["a", frames.length]));
    bus.subscribe("b", (frames) => got.push(["b", frames.length]));
    bus.subscribe("b", (frames) => got.push(["b2", frames.length]));
    bus.pokeAll();
    expect(got).toEqual([
      ["a", 0],
      ["b", 0],
      ["b2", 0],
    ]);
  });
});
