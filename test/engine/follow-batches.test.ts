import { describe, expect, it } from "vitest";
import { LocalFrameBus } from "../../src/engine/frame-bus.js";
import {
  customFrameData,
  finalFrameData,
  VALUES_DELTA_DATA,
  valuesKeyframeData,
} from "../../src/engine/frames/codec.js";
import { followRun, followRunBatches } from "../../src/engine/frames/follow.js";
import type { RunFrame } from "../../src/storage/types.js";
import { storageWithPendingRun } from "../helpers/pending-run.js";

/**
 * A follower gets a run's frames in the batches they come in (a page of storage, a turn's
 * publish), and exactly the frames it would get one by one: in order, none twice, none after
 * the frame that ends the run.
 */
const RUN = "0190c7a0-0000-7000-8000-0000000000b1";

const custom = (seq: number): RunFrame => ({
  run_id: RUN,
  seq,
  mode: "custom",
  data: customFrameData({ type: "CUSTOM", name: "n", value: seq }),
});
const final = (seq: number): RunFrame => ({
  run_id: RUN,
  seq,
  mode: "final",
  data: finalFrameData(RUN, "error", {}, [], { type: "error", description: "stopped" }),
});

async function pendingRun(stored: RunFrame[]) {
  const { storage } = await storageWithPendingRun(RUN);
  if (stored.length > 0) await storage.appendFrames(stored);
  return storage;
}

/** Collects the batches while `publish` feeds the bus once the follower waits. */
async function collect(
  read: "events" | "without-values" | "all",
  stored: RunFrame[],
  publish: (bus: LocalFrameBus) => Promise<void>,
) {
  const storage = await pendingRun(stored);
  const bus = new LocalFrameBus();
  const signal = new AbortController().signal;
  const batches: number[][] = [];
  const following = (async () => {
    for await (const batch of followRunBatches(storage, bus, RUN, { afterSeq: 0, signal, read })) {
      batches.push(batch.map((f) => f.seq));
    }
  })();
  await publish(bus);
  await following;
  await storage.close();
  return batches;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("following a run in batches", () => {
  it("gives the stored page as one batch, then each publish as one batch", async () => {
    const batches = await collect("events", [custom(1), custom(2), custom(3)], async (bus) => {
      await settle();
      bus.publish(RUN, [custom(4), custom(5)]);
      await settle();
      bus.publish(RUN, [custom(6), final(7)]);
    });
    expect(batches).toEqual([
      [1, 2, 3],
      [4, 5],
      [6, 7],
    ]);
  });

  it("stops at the frame that ends the run, even inside a batch", async () => {
    const batches = await collect("without-values", [], async (bus) => {
      await settle();
      bus.publish(RUN, [custom(1), final(2), custom(3)]);
    });
    expect(batches).toEqual([[1, 2]]);
  });

  it("skips frames already delivered and fills a hole from storage", async () => {
    const storage = await pendingRun([custom(1)]);
    const bus = new LocalFrameBus();
    const signal = new AbortController().signal;
    const batches: number[][] = [];
    const following = (async () => {
      const options = { afterSeq: 0, signal, read: "events" as const };
      for await (const batch of followRunBatches(storage, bus, RUN, options)) {
        batches.push(batch.map((f) => f.seq));
      }
    })();
    await settle();
    // Frame 2 is stored but never published here (another replica's); 1 comes again.
    await storage.appendFrames([custom(2)]);
    bus.publish(RUN, [custom(1), custom(3), final(4)]);
    await following;
    await storage.close();
    expect(batches.flat()).toEqual([1, 2, 3, 4]);
    expect(batches.every((b) => b.length > 0)).toBe(true);
  });

  it("gives one by one the frames it gives in batches", async () => {
    const follow = async (batched: boolean) => {
      const storage = await pendingRun([custom(1), custom(2)]);
      const bus = new LocalFrameBus();
      const options = { afterSeq: 1, signal: new AbortController().signal };
      const seen: number[][] = [];
      const following = (async () => {
        if (batched) {
          for await (const batch of followRunBatches(storage, bus, RUN, options)) {
            seen.push(batch.map((f) => f.seq));
          }
        } else {
          for await (const frame of followRun(storage, bus, RUN, options)) seen.push([frame.seq]);
        }
      })();
      await settle();
      bus.publish(RUN, [custom(3), final(4)]);
      await following;
      await storage.close();
      return seen;
    };
    expect(await follow(false)).toEqual([[2], [3], [4]]);
    expect(await follow(true)).toEqual([[2], [3, 4]]);
  });

  it("ends a batch after each values frame, which a lazy reader reads before the next", async () => {
    const keyframe: RunFrame = {
      run_id: RUN,
      seq: 2,
      mode: "values",
      data: valuesKeyframeData({ n: 1 }, []),
    };
    const delta = (seq: number): RunFrame => ({
      run_id: RUN,
      seq,
      mode: "values",
      data: VALUES_DELTA_DATA,
    });
    const storage = await pendingRun([custom(1), keyframe, custom(3), delta(4), custom(5)]);
    const bus = new LocalFrameBus();
    const signal = new AbortController().signal;
    const options = { afterSeq: 0, signal, read: "all" as const, lazyValues: true };
    const batches: number[][] = [];
    let unread: RunFrame | undefined;
    const following = (async () => {
      for await (const batch of followRunBatches(storage, bus, RUN, options)) {
        batches.push(batch.map((f) => f.seq));
        const last = batch[batch.length - 1]!;
        // Read at once, as a stream writes it; one values frame is kept unread for later.
        if (last.mode === "values" && last.seq === 4) unread = last;
        else for (const frame of batch) expect(JSON.parse(frame.data)).toBeTypeOf("object");
      }
    })();
    await settle();
    bus.publish(RUN, [custom(6), final(7)]);
    await following;
    await storage.close();
    expect(batches).toEqual([[1, 2], [3, 4], [5], [6, 7]]);
    expect(() => unread!.data).toThrow(/read after the log moved on/);
  });
});
