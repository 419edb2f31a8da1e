import { describe, expect, it } from "vitest";
import { LocalFrameBus } from "../../src/engine/frame-bus.js";
import {
  customFrameData,
  finalFrameData,
  VALUES_DELTA_DATA,
  valuesKeyframeData,
} from "../../src/engine/frames/codec.js";
import { followRun, followRunBatches, MAX_LIVE_FRAMES } from "../../src/engine/frames/follow.js";
import type { RunFrame, Storage } from "../../src/storage/types.js";
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

interface Following {
  read?: "events" | "without-values" | "all";
  afterSeq?: number;
  lazyValues?: boolean;
  /** false: through `followRun`, each frame counted as a batch of its own. */
  batched?: boolean;
  /** Sees each batch as it comes, before the next is asked for. */
  onBatch?: (batch: RunFrame[]) => void;
}

/**
 * The seqs of each batch a follower gets of a pending run holding `stored`, while `publish`
 * feeds the bus (and storage) once the follower waits.
 */
async function collect(
  stored: RunFrame[],
  publish: (bus: LocalFrameBus, storage: Storage) => Promise<void>,
  { read = "events", afterSeq = 0, lazyValues, batched = true, onBatch }: Following = {},
) {
  const storage = await pendingRun(stored);
  const bus = new LocalFrameBus();
  const options = { afterSeq, signal: new AbortController().signal, read, lazyValues };
  const batches: number[][] = [];
  const following = (async () => {
    if (!batched) {
      for await (const frame of followRun(storage, bus, RUN, options)) batches.push([frame.seq]);
      return;
    }
    for await (const batch of followRunBatches(storage, bus, RUN, options)) {
      batches.push(batch.map((f) => f.seq));
      onBatch?.(batch);
    }
  })();
  await publish(bus, storage);
  await following;
  await storage.close();
  return batches;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("following a run in batches", () => {
  it("gives the stored page as one batch, then each publish as one batch", async () => {
    const batches = await collect([custom(1), custom(2), custom(3)], async (bus) => {
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

  it("a reader that falls far behind lets go of what it holds and reads it back: nothing missed", async () => {
    const total = MAX_LIVE_FRAMES * 3;
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    let first = true;
    const seqs: number[] = [];
    const storage = await pendingRun([custom(1)]);
    const bus = new LocalFrameBus();
    const following = (async () => {
      const options = {
        afterSeq: 0,
        signal: new AbortController().signal,
        read: "events" as const,
      };
      for await (const batch of followRunBatches(storage, bus, RUN, options)) {
        seqs.push(...batch.map((f) => f.seq));
        // The reader is slow: it takes nothing more until every frame has been published.
        if (first) {
          first = false;
          await held;
        }
      }
    })();
    await settle();
    for (let seq = 2; seq <= total; seq += 100) {
      const frames = Array.from({ length: 100 }, (_, i) => custom(seq + i));
      await storage.appendFrames(frames);
      bus.publish(RUN, frames);
    }
    await storage.appendFrames([final(total + 2)]);
    bus.publish(RUN, [final(total + 2)]);
    // What it let go of is read back from storage, not held: count the pages it reads.
    let pagesRead = 0;
    const readFrames = storage.readFrames.bind(storage);
    storage.readFrames = (...args) => {
      pagesRead++;
      return readFrames(...args);
    };
    release();
    await following;
    await storage.close();
    expect(seqs).toEqual(Array.from({ length: total + 2 }, (_, i) => i + 1));
    expect(pagesRead).toBeGreaterThan(0);
  });

  it("stops at the frame that ends the run, even inside a batch", async () => {
    const batches = await collect(
      [],
      async (bus) => {
        await settle();
        bus.publish(RUN, [custom(1), final(2), custom(3)]);
      },
      { read: "without-values" },
    );
    expect(batches).toEqual([[1, 2]]);
  });

  it("skips frames already delivered and fills a hole from storage", async () => {
    const batches = await collect([custom(1)], async (bus, storage) => {
      await settle();
      // Frame 2 is stored but never published here (another replica's); 1 comes again.
      await storage.appendFrames([custom(2)]);
      bus.publish(RUN, [custom(1), custom(3), final(4)]);
    });
    expect(batches.flat()).toEqual([1, 2, 3, 4]);
    expect(batches.every((b) => b.length > 0)).toBe(true);
  });

  it("gives one by one the frames it gives in batches", async () => {
    const follow = (batched: boolean) =>
      collect(
        [custom(1), custom(2)],
        async (bus) => {
          await settle();
          bus.publish(RUN, [custom(3), final(4)]);
        },
        { read: "all", afterSeq: 1, batched },
      );
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
    let unread: RunFrame | undefined;
    const batches = await collect(
      [custom(1), keyframe, custom(3), delta(4), custom(5)],
      async (bus) => {
        await settle();
        bus.publish(RUN, [custom(6), final(7)]);
      },
      {
        read: "all",
        lazyValues: true,
        onBatch: (batch) => {
          const last = batch[batch.length - 1]!;
          // Read at once, as a stream writes it; one values frame is kept unread for later.
          if (last.mode === "values" && last.seq === 4) unread = last;
          else for (const frame of batch) expect(JSON.parse(frame.data)).toBeTypeOf("object");
        },
      },
    );
    expect(batches).toEqual([[1, 2], [3, 4], [5], [6, 7]]);
    expect(() => unread!.data).toThrow(/read after the log moved on/);
  });
});
