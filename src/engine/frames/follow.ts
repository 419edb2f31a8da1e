import type { RunFrame, RunRecord, Storage } from "../../storage/types.js";
import type { FrameBus } from "../frame-bus.js";
import {
  endsForGood,
  finalNeedsRunOutput,
  fullCustom,
  fullFinalData,
  type ReadFrame,
  ValuesRebuilder,
} from "./codec.js";
import { type LiveTails, readLog } from "./live-tails.js";

export interface RunStreamOptions {
  /** Frames with a larger seq are delivered (Last-Event-ID, or 0 for everything). */
  afterSeq: number;
  signal: AbortSignal;
  /**
   * What the caller reads:
   * - `all` (the default): every frame in full form, as a stream with `values` sends it;
   * - `without-values`: every frame but values frames, in full form (a stream without
   *   `values`): values frames are not rebuilt, so they cost the follower nothing;
   * - `events`: custom, subagent and final frames as stored (see frames/codec.ts `readUpdate`
   *   and `readFinal`), for `wait` and the AG-UI faces, which need the events and how the run
   *   ended, not the ACP envelope around them.
   */
  read?: "all" | "without-values" | "events";
  /**
   * With `all`: values frames are rendered when their `data` is first read, which must happen
   * before the next frame is asked for (see ValuesRebuilder.nextLazy). A reader that skips a
   * values frame does not pay for rendering it: megabytes for a long answer's state.
   */
  lazyValues?: boolean;
  /**
   * The run's end as this replica records it, when the run executes here (`RunEngine.endOf`):
   * a final frame stored by reference to the run's output is completed from it, with no read
   * of storage.
   */
  localEnd?: Promise<RunRecord | undefined>;
}

/**
 * A run's frames, replayed from storage and then followed live, with no gap and no duplicate.
 * Ends after the frame that ends the run (a `final` frame that is the run's last), or when
 * the signal aborts. Streams, `wait` and late joins are all this one mechanism.
 */
export async function* followRun(
  storage: Storage,
  bus: FrameBus,
  runId: string,
  options: RunStreamOptions,
  /** This replica's live tails: the frames of a run executing here that are not stored yet. */
  tails?: LiveTails,
): AsyncGenerator<RunFrame> {
  for await (const batch of followRunBatches(storage, bus, runId, options, tails)) yield* batch;
}

/**
 * `followRun`'s frames in the batches they come in: a page read from storage, or what the frame
 * writer published in one turn of the event loop. A stream of 10,000 small frames then passes a
 * few hundred batches through the generators instead of 10,000 frames: each step through an
 * async generator is a promise and a turn of the microtask queue.
 *
 * With `read: "all"`, a values frame is always the last of its batch: rendered lazily, it must
 * be read before the next frame is rebuilt (see ValuesRebuilder.nextLazy); rendered at once, a
 * batch holds at most one (each can be megabytes: a long answer's whole state).
 */
export async function* followRunBatches(
  storage: Storage,
  bus: FrameBus,
  runId: string,
  options: RunStreamOptions,
  tails?: LiveTails,
): AsyncGenerator<ReadFrame[]> {
  const read = options.read ?? "all";
  let runOutput: Record<string, unknown> | null | undefined;
  /** A final frame stored by reference, completed from the run's output (read once). */
  const fromRunOutput = async (frame: RunFrame): Promise<ReadFrame> => {
    if (runOutput === undefined && options.localEnd !== undefined) {
      // Recorded here: the output a result's final frame refers to is in hand. (A record of an
      // earlier segment's end, an interrupt, is not the result; storage has it then.)
      const output = (await options.localEnd)?.output;
      if (output?.type === "result") runOutput = output;
    }
    runOutput ??= (await storage.getRun(runId))?.output ?? null;
    return fullFinalData(frame, runOutput);
  };
  if (read !== "all") {
    for await (const batch of followStored(storage, bus, runId, options, tails)) {
      const out: ReadFrame[] = [];
      for (const frame of batch) {
        if (frame.mode === "values") continue;
        if (read === "events") out.push(frame);
        else if (finalNeedsRunOutput(frame)) out.push(await fromRunOutput(frame));
        else out.push(fullCustom(frame));
      }
      if (out.length > 0) yield out;
      if (options.signal.aborted) return;
    }
    return;
  }
  // Values frames are rebuilt from the log before them: a follower that joins late reads the
  // log from the start first (linear in the run's content, once per join).
  const rebuilder = new ValuesRebuilder();
  if (options.afterSeq > 0) await replayInto(rebuilder, storage, tails, runId, options.afterSeq);
  const arrived = { waiting: () => false };
  for await (const batch of followStored(storage, bus, runId, options, tails, arrived)) {
    let out: ReadFrame[] = [];
    for (let i = 0; i < batch.length; i++) {
      const frame = batch[i]!;
      // A lazy values frame says whether later frames of the log are here already: its values
      // are then not the newest, and a writer behind its client may skip it.
      const later = i < batch.length - 1;
      const full = options.lazyValues
        ? rebuilder.nextLazy(frame, () => later || arrived.waiting())
        : rebuilder.next(frame);
      if (full === undefined) continue;
      if (finalNeedsRunOutput(full)) out.push(await fromRunOutput(full));
      else out.push(fullCustom(full));
      if (full.mode === "values") {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
    if (options.signal.aborted) return;
  }
}

/** Feeds the rebuilder the stored log up to `lastSeq`, rendering nothing. */
async function replayInto(
  rebuilder: ValuesRebuilder,
  storage: Storage,
  tails: LiveTails | undefined,
  runId: string,
  lastSeq: number,
): Promise<void> {
  let after = 0;
  while (after < lastSeq) {
    const page = await readLog(storage, tails, runId, after, Math.min(1000, lastSeq - after));
    if (page.length === 0) return;
    for (const frame of page) {
      if (frame.seq > lastSeq) return;
      rebuilder.next(frame, false);
      after = frame.seq;
    }
  }
}

/**
 * A page of a run's stored frames after `afterSeq`, in full form (values frames rebuilt, final
 * frames completed): the log as a stream sends it, for reading it page by page (the inspector).
 */
export async function readFullFrames(
  storage: Storage,
  runId: string,
  afterSeq: number,
  limit?: number,
  tails?: LiveTails,
): Promise<RunFrame[]> {
  const rebuilder = new ValuesRebuilder();
  if (afterSeq > 0) await replayInto(rebuilder, storage, tails, runId, afterSeq);
  const page = await readLog(storage, tails, runId, afterSeq, limit);
  const out: RunFrame[] = [];
  let runOutput: Record<string, unknown> | null | undefined;
  for (const frame of page) {
    const full = rebuilder.next(frame);
    if (full === undefined) continue;
    if (finalNeedsRunOutput(full)) {
      runOutput ??= (await storage.getRun(runId))?.output ?? null;
      out.push(fullFinalData(full, runOutput));
    } else {
      out.push(fullCustom(full));
    }
  }
  return out;
}

/**
 * The run's frames as stored and published (see `followRun`), in batches: each in order and
 * not empty, the first frame of each following the last of the one before.
 */
async function* followStored(
  storage: Storage,
  bus: FrameBus,
  runId: string,
  options: RunStreamOptions,
  tails: LiveTails | undefined,
  /** Given the test "frames have arrived that were not yielded yet". */
  arrived?: { waiting: () => boolean },
): AsyncGenerator<RunFrame[]> {
  let lastSeq = options.afterSeq;
  let live: RunFrame[] = [];
  if (arrived) arrived.waiting = () => live.length > 0;
  let lastWasFinal = false;
  /** Whether we waited for frames and the wake has delivered none since. */
  let emptyWake = false;
  let wake: (() => void) | null = null;
  const notify = () => {
    const resolve = wake;
    wake = null;
    resolve?.();
  };
  // Subscribe before reading storage: a frame published in between is then buffered, not lost.
  const unsubscribe = bus.subscribe(runId, (frames) => {
    // A reader this far behind (a slow client) lets go of what it holds: every frame published
    // is stored or in this replica's live tail, read back in pages as it catches up, so it
    // misses nothing and holds at most this many frames, however big the run.
    if (live.length + frames.length > MAX_LIVE_FRAMES) live = [];
    live.push(...frames);
    notify();
  });
  options.signal.addEventListener("abort", notify, { once: true });

  try {
    while (!options.signal.aborted) {
      // Catch up from storage when the live buffer does not continue where we are.
      const first = live[0];
      if (first === undefined || first.seq > lastSeq + 1) {
        const stored = await readLog(storage, tails, runId, lastSeq, 1000);
        if (stored.length > 0) {
          const lastStored = stored[stored.length - 1]!;
          lastSeq = lastStored.seq;
          emptyWake = false;
          yield stored;
          lastWasFinal = lastStored.mode === "final";
          if (lastWasFinal && (endsForGood(lastStored) || (await endsRun(storage, runId, lastSeq))))
            return;
          continue;
        }
        // Nothing stored or in the live tail fills the hole before the live frames, and nothing
        // ever will: the run was deleted (rolled back) with its frames, or its writes failed;
        // what is published live is all there is.
        if (first !== undefined) lastSeq = first.seq - 1;
      }
      const batch = live;
      live = [];
      // What continues in order, up to a frame that ends the run.
      const next: RunFrame[] = [];
      let ended = false;
      for (const frame of batch) {
        if (frame.seq <= lastSeq) continue;
        if (frame.seq > lastSeq + 1) {
          // A hole (frames published before we subscribed): refill from storage next turn.
          live = batch.filter((f) => f.seq > lastSeq);
          break;
        }
        lastSeq = frame.seq;
        next.push(frame);
        lastWasFinal = frame.mode === "final";
        if (lastWasFinal && endsForGood(frame)) {
          ended = true;
          break;
        }
      }
      if (next.length > 0) {
        emptyWake = false;
        yield next;
      }
      if (ended) return;
      if (live.length === 0 && !options.signal.aborted) {
        // Idle after a final frame, or before any frame: the run may be over. (Every segment
        // ends with a final frame, so after any other frame there is no need to look...
        // (A run executing here is not over: its end comes with its final frame, on the bus.)
        if (
          tails?.get(runId) === undefined &&
          (lastWasFinal || lastSeq === options.afterSeq || emptyWake) &&
          (await endsRun(storage, runId, lastSeq, !lastWasFinal, () => live.length > 0))
        ) {
          return;
        }
        // ...unless a wake brought nothing: another replica's run that was rolled back is
        // deleted with its frames, and its final frame only ever reached that replica's bus.
        emptyWake = true;
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (live.length > 0 || options.signal.aborted) notify();
        });
      }
    }
  } finally {
    unsubscribe();
    options.signal.removeEventListener("abort", notify);
  }
}

/**
 * True when the stream has delivered everything the run will ever produce: the run is no
 * longer pending and nothing after `lastSeq` is stored. (An interrupted run that was resumed is
 * pending again, so its earlier `final` frame does not end a replay.)
 */
async function endsRun(
  storage: Storage,
  runId: string,
  lastSeq: number,
  finalUnseen = false,
  arrived: () => boolean = () => false,
): Promise<boolean> {
  const run = await storage.getRun(runId);
  if (!run) return true;
  if (run.status === "pending" || run.last_seq > lastSeq) return false;
  if (!finalUnseen) return true;
  // The run's outcome is written before its final frame: a follower that has not seen a final
  // frame at the end of the log may have come in between, and the final frame is on its way.
  // (Unless it could not be stored: it was then only published, so wait a little, not forever.)
  const at = lastSeq > 0 ? await storage.readFrames(runId, lastSeq - 1, 1) : [];
  if (at[0]?.mode === "final") return true;
  for (let i = 0; i < FINAL_FRAME_WAITS; i++) {
    await new Promise((resolve) => setTimeout(resolve, FINAL_FRAME_WAIT_MS));
    if (arrived()) return false;
    if ((await storage.readFrames(runId, lastSeq, 1)).length > 0) return false;
  }
  return true;
}

/** Frames a follower holds that its reader has not taken yet (see `followStored`). */
export const MAX_LIVE_FRAMES = 2000;

/** How long a follower waits for the final frame of a run whose outcome it has seen. */
const FINAL_FRAME_WAITS = 50;
const FINAL_FRAME_WAIT_MS = 20;
