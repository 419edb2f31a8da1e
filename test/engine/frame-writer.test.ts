import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { LocalFrameBus } from "../../src/engine/frame-bus.js";
import { LiveTails, readLog } from "../../src/engine/frames/live-tails.js";
import { FrameWriter } from "../../src/engine/frames/writer.js";
import type { RunFrame, RunRecord, Storage } from "../../src/storage/types.js";
import { storageWithPendingRun } from "../helpers/pending-run.js";

// Frames go to this replica's followers from memory at once, and to storage within the store
// delay (or with the run's end): the writer's live tail bridges the two for readers here.

const STORE_DELAY = 40;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

let storage: Storage;
let run: RunRecord;

beforeEach(async () => {
  ({ storage, run } = await storageWithPendingRun());
});

afterEach(async () => {
  await storage.close();
});

function writerWith(tails: LiveTails, bus = new LocalFrameBus(), maxBatch = 512) {
  const writer = new FrameWriter(storage, bus, run.run_id, 0, {
    tails,
    storeDelayMs: STORE_DELAY,
    maxBatch,
  });
  return { writer, bus };
}

const seqs = (frames: RunFrame[]) => frames.map((frame) => frame.seq);

describe("FrameWriter", () => {
  it("publishes a turn's frames before storing them, and stores them within the delay", async () => {
    const tails = new LiveTails();
    const { writer, bus } = writerWith(tails);
    const published: RunFrame[] = [];
    bus.subscribe(run.run_id, (frames) => published.push(...frames));
    writer.custom('{"n":1}');
    writer.custom('{"n":2}');
    await turn();
    expect(seqs(published)).toEqual([1, 2]);
    expect(await storage.readFrames(run.run_id, 0)).toEqual([]);
    // A reader here finds them in the tail, continuing what storage has.
    expect(seqs(tails.after(run.run_id, 0))).toEqual([1, 2]);
    expect(seqs(await readLog(storage, tails, run.run_id, 0))).toEqual([1, 2]);
    expect(seqs(await readLog(storage, tails, run.run_id, 1, 10))).toEqual([2]);
    await sleep(STORE_DELAY * 3);
    expect(seqs(await storage.readFrames(run.run_id, 0))).toEqual([1, 2]);
    expect(tails.after(run.run_id, 0)).toEqual([]);
    expect(seqs(await readLog(storage, tails, run.run_id, 0))).toEqual([1, 2]);
  });

  it("renders one values frame per turn, after the turn's custom frames, however often values change", async () => {
    const { writer, bus } = writerWith(new LiveTails());
    const published: RunFrame[] = [];
    bus.subscribe(run.run_id, (frames) => published.push(...frames));
    let renders = 0;
    const render = () => {
      renders++;
      return '{"rebuild":"events"}';
    };
    for (let i = 0; i < 3; i++) {
      writer.custom(`{"n":${i}}`);
      writer.values(render);
      expect(writer.backlog()).toBeUndefined();
    }
    await turn();
    expect(published.map((f) => f.mode)).toEqual(["custom", "custom", "custom", "values"]);
    expect(renders).toBe(1);
  });

  it("publishes no second values frame for the event whose full batch carried one already", async () => {
    const { writer, bus } = writerWith(new LiveTails(), new LocalFrameBus(), 3);
    const published: RunFrame[] = [];
    bus.subscribe(run.run_id, (frames) => published.push(...frames));
    const render = () => '{"rebuild":"events"}';
    // As the executor reports them: each event's frame, then that its values changed.
    for (let i = 0; i < 3; i++) {
      writer.custom(`{"n":${i}}`);
      writer.values(render);
    }
    await turn();
    // The third event filled the batch: its values frame went with it, after it.
    expect(published.map((f) => f.mode)).toEqual(["custom", "custom", "custom", "values"]);
    // A later event that changes the values again gets one of its own.
    writer.custom('{"n":3}');
    writer.values(render);
    await turn();
    expect(published.map((f) => f.mode).slice(4)).toEqual(["custom", "values"]);
  });

  it("hands a full batch to storage at once and makes a producer ahead of it wait", async () => {
    const tails = new LiveTails();
    const { writer } = writerWith(tails, new LocalFrameBus(), 4);
    for (let i = 0; i < 4; i++) writer.custom(`{"n":${i}}`);
    const backlog = writer.backlog();
    expect(backlog).toBeInstanceOf(Promise);
    await backlog;
    expect(seqs(await storage.readFrames(run.run_id, 0))).toEqual([1, 2, 3, 4]);
    expect(writer.backlog()).toBeUndefined();
  });

  it("gives the run's end every frame not stored yet, the final frame last, and publishes the final frame once that end is stored", async () => {
    const tails = new LiveTails();
    const { writer, bus } = writerWith(tails);
    const published: RunFrame[] = [];
    bus.subscribe(run.run_id, (frames) => published.push(...frames));
    writer.custom('{"n":1}');
    writer.values(() => '{"rebuild":"events"}');
    const end = await writer.endFrames('{"final":true}');
    expect(end!.map((f) => [f.seq, f.mode])).toEqual([
      [1, "custom"],
      [2, "values"],
      [3, "final"],
    ]);
    // Not published before it is stored.
    expect(seqs(published)).toEqual([1, 2]);
    await storage.finishRun(run.run_id, { status: "success" }, { delete: true }, undefined, {
      frames: end!,
    });
    writer.endStored();
    expect(seqs(published)).toEqual([1, 2, 3]);
    expect(tails.size).toBe(0);
    expect(seqs(await storage.readFrames(run.run_id, 0))).toEqual([1, 2, 3]);
  });

  it("keeps the final frame's number when the end is then stored step by step", async () => {
    const tails = new LiveTails();
    const { writer } = writerWith(tails);
    writer.custom('{"n":1}');
    await writer.endFrames('{"first":true}');
    expect(await writer.final('{"second":true}')).toBe(true);
    const stored = await storage.readFrames(run.run_id, 0);
    expect(stored.map((f) => [f.seq, f.data])).toEqual([
      [1, '{"n":1}'],
      [2, '{"second":true}'],
    ]);
  });

  it("after a failed write publishes nothing more, and numbers the final frame after the last frame published", async () => {
    const tails = new LiveTails();
    const { writer, bus } = writerWith(tails);
    const published: RunFrame[] = [];
    bus.subscribe(run.run_id, (frames) => published.push(...frames));
    const failures: Error[] = [];
    writer.onFailure((err) => failures.push(err));
    // Frame 1 is stored already: the batch holding it again fails as a whole.
    await storage.appendFrames([{ run_id: run.run_id, seq: 1, mode: "custom", data: "{}" }]);
    writer.custom('{"n":1}');
    writer.custom('{"n":2}');
    await writer.flush();
    expect(failures).toHaveLength(1);
    writer.custom('{"n":3}');
    await turn();
    expect(seqs(published)).toEqual([1, 2]);
    expect(await writer.final('{"final":true}')).toBe(true);
    expect(seqs(published)).toEqual([1, 2, 3]);
    expect(seqs(await storage.readFrames(run.run_id, 0))).toEqual([1, 3]);
  });
});
