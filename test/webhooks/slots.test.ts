/**
 * The deliverer's slots (src/webhooks/slots.ts): attempts under way take a slot until their
 * receiver has been silent for `slowAfterMs`, then go on slow, without one; a target whose
 * attempt went slow starts its next ones slow; one target gets at most `perTarget` at once.
 */
import { describe, expect, it } from "vitest";
import { DeliverySlots, targetOf } from "../../src/webhooks/slots.js";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function slots(over: Partial<ConstructorParameters<typeof DeliverySlots>[0]> = {}) {
  let rooms = 0;
  const pool = new DeliverySlots(
    { concurrency: 2, perTarget: 2, maxSlow: 2, slowAfterMs: 30, ...over },
    () => rooms++,
  );
  return { pool, rooms: () => rooms };
}

describe("DeliverySlots", () => {
  it("gives back a slot when its attempt ends, or once its receiver is silent for slowAfterMs", async () => {
    const { pool, rooms } = slots();
    const a = pool.take("http://a")!;
    const b = pool.take("http://b")!;
    expect(pool.room()).toBe(0);
    expect(pool.take("http://c")).toBeNull();
    a.release();
    expect(pool.room()).toBe(1);
    await sleep(60);
    // b is slow now: it holds no slot, only a slow place.
    expect(pool.room()).toBe(2);
    expect(pool.open).toEqual({ fast: 0, slow: 1 });
    b.release();
    expect(pool.open).toEqual({ fast: 0, slow: 0 });
    expect(rooms()).toBe(3);
  });

  it("lets one target have perTarget attempts at once, and names it busy meanwhile", () => {
    const { pool } = slots({ concurrency: 10 });
    const first = pool.take("http://a")!;
    pool.take("http://a");
    expect(pool.take("http://a")).toBeNull();
    expect(pool.busyTargets()).toEqual(["http://a"]);
    expect(pool.take("http://b")).not.toBeNull();
    first.release();
    expect(pool.busyTargets()).toEqual([]);
  });

  it("starts a target known as slow without a slot, until it answers in time", async () => {
    const { pool } = slots({ maxSlow: 1 });
    const hung = pool.take("http://slow")!;
    await sleep(60);
    hung.release();
    const again = pool.take("http://slow")!;
    expect(pool.open).toEqual({ fast: 0, slow: 1 });
    expect(pool.room()).toBe(2);
    // No slow place left: the slow target is busy, the others are not.
    expect(pool.take("http://slow")).toBeNull();
    expect(pool.busyTargets()).toEqual(["http://slow"]);
    expect(pool.take("http://fine")).not.toBeNull();
    // Answered in time: no longer slow.
    again.release();
    pool.take("http://slow");
    expect(pool.open).toEqual({ fast: 2, slow: 0 });
  });

  it("counts a receiver by its origin", () => {
    expect(targetOf("https://Hooks.Example.com:443/a?b")).toBe("https://hooks.example.com");
    expect(targetOf("http://127.0.0.1:8080/x")).toBe("http://127.0.0.1:8080");
  });
});
