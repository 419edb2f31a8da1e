import type { FastifyReply, FastifyRequest } from "fastify";
import { SYSTEM } from "../../auth/principal.js";
import {
  METHOD_CHANNEL,
  THREAD_CHANNELS,
  type ThreadChannel,
  type ThreadEvent,
  ThreadEventMapper,
} from "../../bridge/langgraph/thread-events.js";
import type { RunService } from "../../engine/run-service.js";
import type { ThreadService } from "../../engine/thread-service.js";
import type { RunRecord } from "../../storage/types.js";
import { invalid } from "../../util/errors.js";
import { SSE_KEEP_ALIVE } from "../streaming/sse-keep-alive.js";
import { StreamWriter } from "../streaming/stream-writer.js";
import { logItem } from "./run-stream.js";
import { objectBody } from "./threads.js";

/**
 * A thread event's `seq` is where it comes from in our frame log: the run (its place among the
 * thread's runs, oldest first), the frame, and the event's place among those the frame gives.
 * So `since` replays from the log on any replica, and a resumed run's events follow its first.
 */
const RUN_SPAN = 1_000_000_000;
const FRAME_SPAN = 1000;
const seqOf = (ordinal: number, frameSeq: number, index: number) =>
  ordinal * RUN_SPAN + frameSeq * FRAME_SPAN + Math.min(index, FRAME_SPAN - 1);
/** How long a stream waits before looking for the thread's next run (no thread-wide bus). */
const POLL_MS = 200;
/** The thread runs a stream orders by (their ordinal is their place among these). */
const RUNS_READ = 1000;

export interface EventStreamRequest {
  channels: Set<ThreadChannel>;
  since: number | undefined;
}

/** The body of `POST /threads/{id}/stream/events`, or a 422 naming what is wrong. */
export function parseEventStreamRequest(body: unknown): EventStreamRequest {
  const rec = objectBody(body);
  const given = rec.channels;
  if (!Array.isArray(given) || given.length === 0) {
    throw invalid("channels must be a non-empty list of channel names");
  }
  const channels = new Set<ThreadChannel>();
  for (const channel of given) {
    const base = typeof channel === "string" ? channel.split(":", 1)[0] : undefined;
    if (!THREAD_CHANNELS.includes(base as ThreadChannel)) {
      throw invalid(
        `channel ${JSON.stringify(channel)} is not served; channels: ${THREAD_CHANNELS.join(", ")}`,
      );
    }
    channels.add(base as ThreadChannel);
  }
  const since = rec.since;
  if (since !== undefined && (!Number.isSafeInteger(since) || (since as number) < 0)) {
    throw invalid("since must be a non-negative integer (the seq of an event)");
  }
  return { channels, since: since as number | undefined };
}

/** Where a stream is in one run's log. */
interface Followed {
  ordinal: number;
  /** Frames up to this one are done (sent, or before the stream's start). */
  frameSeq: number;
  /**
   * The run's history replayed at connect, up to this frame: held back, and dropped at each
   * interrupt a later segment answered, so the replay is the run's current segment only.
   */
  replayUntil: number;
  /** In progress at connect: an interrupt in its history has been answered, even its last. */
  resumed: boolean;
  held: string;
  mapper: ThreadEventMapper;
}

/**
 * Streams a thread's events (`POST /threads/{id}/stream/events`) until the client goes away:
 * the thread's newest run (see startFrame) and every run started later, or with `since` every
 * event after it, replayed from the frame log. Each SSE event is `{type: "event", seq,
 * event_id, method, params}` with `id: <seq>`.
 */
export async function streamThreadEvents(
  deps: { runs: RunService; threads: ThreadService; keepAliveSeconds: number },
  request: FastifyRequest,
  reply: FastifyReply,
  threadId: string,
  agentNameOf: (run: RunRecord) => string,
): Promise<void> {
  const wanted = parseEventStreamRequest(request.body);
  await deps.threads.get(request.caller, threadId);
  const writer = new StreamWriter(request, reply, {
    contentType: "text/event-stream; charset=utf-8",
    headers: { "cache-control": "no-store" },
    keepAliveSeconds: deps.keepAliveSeconds,
    keepAlive: SSE_KEEP_ALIVE,
  });
  writer.open();
  const followed = new Map<string, Followed>();
  let first = true;
  try {
    while (!writer.closed.aborted) {
      const runs = await threadRuns(deps.runs, threadId);
      let progressed = false;
      for (const [ordinal, run] of runs.entries()) {
        let state = followed.get(run.run_id);
        if (!state) {
          const frameSeq = startFrame(run, ordinal, runs.length, first, wanted.since);
          state = {
            ordinal,
            frameSeq,
            replayUntil: first && wanted.since === undefined && frameSeq === 0 ? run.last_seq : 0,
            resumed: run.status === "pending",
            held: "",
            mapper: new ThreadEventMapper({
              runId: run.run_id,
              threadId,
              agentName: agentNameOf(run),
              runMetadata: run.metadata,
            }),
          };
          followed.set(run.run_id, state);
        }
        if (run.last_seq <= state.frameSeq && run.status !== "pending") continue;
        progressed = (await followRun(deps.runs, writer, run, state, wanted)) || progressed;
        if (writer.closed.aborted) return;
      }
      first = false;
      if (!progressed) await pause(writer.closed);
    }
  } finally {
    writer.end();
  }
}

/** The thread's stateful runs, oldest first. */
async function threadRuns(runs: RunService, threadId: string): Promise<RunRecord[]> {
  const found = await runs.search(SYSTEM, {
    thread_id: threadId,
    kind: "stateful",
    limit: RUNS_READ,
    offset: 0,
  });
  return found.reverse();
}

/**
 * The frame a run is followed after. With `since`: from its start when the run follows the
 * event `since` names (events at or before it are skipped as they are mapped, so the mapper
 * sees the whole run). Without: the thread's newest run at connect is replayed from its start,
 * as LangGraph's server does (the SDK sends `run.start` before it opens the stream, and drops
 * events it has by `event_id`); older runs are not; runs started later from their start.
 */
function startFrame(
  run: RunRecord,
  ordinal: number,
  count: number,
  atConnect: boolean,
  since: number | undefined,
): number {
  if (since !== undefined) return ordinal >= Math.floor(since / RUN_SPAN) ? 0 : run.last_seq;
  if (atConnect && ordinal < count - 1) return run.last_seq;
  return 0;
}

/** Sends a run's events after `state.frameSeq` until it stops; whether any frame was read. */
async function followRun(
  runs: RunService,
  writer: StreamWriter,
  run: RunRecord,
  state: Followed,
  wanted: EventStreamRequest,
): Promise<boolean> {
  let read = false;
  const batches = runs.followBatches(run.run_id, {
    afterSeq: state.frameSeq,
    signal: writer.closed,
    // Always with values: what a frame maps to (and so each event's seq) must not depend on the
    // channels a stream asked for, or two streams would give one event different ids.
    read: "all",
  });
  for await (const frames of batches) {
    let text = "";
    for (const frame of frames) {
      read = true;
      state.frameSeq = Math.max(state.frameSeq, frame.seq);
      const item = logItem(frame);
      if (!item) continue;
      let frameText = "";
      state.mapper.map(item).forEach((event, index) => {
        const seq = seqOf(state.ordinal, frame.seq, index);
        if (wanted.since !== undefined && seq <= wanted.since) return;
        if (!wanted.channels.has(METHOD_CHANNEL[event.method]!)) return;
        frameText += sseEvent(event, seq);
      });
      if (frame.seq > state.replayUntil) {
        text += frameText;
      } else if (item.kind === "final" && (frame.seq < state.replayUntil || state.resumed)) {
        state.held = ""; // a segment whose interrupt was answered: not the run's current one
      } else {
        state.held += frameText;
      }
    }
    if (state.frameSeq >= state.replayUntil && state.held !== "") {
      text = state.held + text;
      state.held = "";
    }
    if (text !== "") await writer.send(text);
  }
  return read;
}

function sseEvent(event: ThreadEvent, seq: number): string {
  const data = { type: "event", seq, event_id: String(seq), ...event };
  return `id: ${seq}\nevent: ${event.method}\ndata: ${JSON.stringify(data)}\n\n`;
}

function pause(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, POLL_MS);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
