import { ERRCODE } from "../../bridge/acp/outcomes.js";
import {
  eventTypePrefix,
  readFinal,
  readUpdate,
  storedEventJson,
} from "../../engine/frames/codec.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunRecord } from "../../storage/types.js";
import { OpenSpans } from "../open-spans.js";

type Event = Record<string, unknown>;

/**
 * How a stream ends a run the server ended itself (a cancel or stop, the time limit, a
 * protocol fault) rather than the agent:
 * - `run-error`: one RUN_ERROR naming why (the AG-UI face).
 * - `close-then-end`: what the run left open is closed first (messages, tool calls, steps…),
 *   then a stopped run ends with RUN_FINISHED and any other with RUN_ERROR: what CopilotKit's
 *   own runtime sends, so that its client keeps the partial reply and takes the next run.
 */
export type ServerEnding = "run-error" | "close-then-end";

export interface RunEventsOptions {
  /** Stored frames after this seq (0: the whole run). */
  afterSeq: number;
  signal: AbortSignal;
  ending: ServerEnding;
  /**
   * Say nothing of a segment that ended before its agent streamed anything (a run cancelled
   * while queued). A stream answering a request reports it; a replay of history leaves it out.
   */
  quietWhenUnstarted?: boolean;
  /**
   * Yield content events (text, tool call arguments, reasoning) as the JSON they were stored
   * as, unparsed ({@link StoredEventJson}), when that JSON holds no `null`: a face that writes
   * events as JSON then writes those bytes as they are. The streaming path of a token.
   */
  storedJson?: boolean;
}

/**
 * An event as the JSON text it was stored as: one that opens, closes or ends nothing (so no
 * state here needs its fields) and holds no `null` (so that an encoder leaving optional nulls
 * out would write the very same text).
 */
export class StoredEventJson {
  constructor(readonly json: string) {}
}

/** Events that only add content to what an earlier event opened. */
const CONTENT_PREFIXES = [
  "TEXT_MESSAGE_CONTENT",
  "TOOL_CALL_ARGS",
  "REASONING_MESSAGE_CONTENT",
].map(eventTypePrefix);

/** Told to the client when the server stopped a subagent along with its run. */
const SUBAGENT_STOPPED = "the run was stopped before the subagent finished";

/**
 * A run's AG-UI events: its stored custom frames in order, then live ones until the run ends,
 * with an ending of the server's own when the agent did not end a segment itself. Run-scoped
 * events keep the ids the engine gave them; each face sets the ids its client knows.
 */
export function runEvents(
  runs: RunService,
  run: RunRecord,
  options: RunEventsOptions & { storedJson: true },
): AsyncGenerator<Event | StoredEventJson>;
export function runEvents(
  runs: RunService,
  run: RunRecord,
  options: RunEventsOptions & { storedJson?: false },
): AsyncGenerator<Event>;
export async function* runEvents(
  runs: RunService,
  run: RunRecord,
  options: RunEventsOptions,
): AsyncGenerator<Event | StoredEventJson> {
  for await (const batch of runEventBatches(runs, run, options)) yield* batch;
}

/**
 * `runEvents` in the batches the run's frames come in (a page of storage, or what the agent
 * produced in one turn of the event loop), never empty: a face that writes a whole batch at
 * once passes each token through no generator step and no socket write of its own.
 */
export async function* runEventBatches(
  runs: RunService,
  run: RunRecord,
  options: RunEventsOptions,
): AsyncGenerator<Array<Event | StoredEventJson>> {
  const spans = new OpenSpans();
  /** Whether the current segment has ended with the agent's own terminal event. */
  let terminal = false;
  let started = false;
  const batches = runs.followBatches(run.run_id, {
    afterSeq: options.afterSeq,
    signal: options.signal,
    read: "events",
  });
  for await (const frames of batches) {
    const out: Array<Event | StoredEventJson> = [];
    for (const frame of frames) {
      if (options.storedJson) {
        const json = storedEventJson(frame, CONTENT_PREFIXES);
        if (json !== undefined && !json.includes("null")) {
          out.push(new StoredEventJson(json));
          continue;
        }
      }
      const event = readUpdate(frame);
      if (event) {
        if (event.type === "RUN_STARTED") {
          // A resumed segment starts a new AG-UI run after the interrupted one.
          terminal = false;
          started = true;
        }
        if (event.type === "RUN_FINISHED" || event.type === "RUN_ERROR") terminal = true;
        spans.observe(event);
        out.push(event);
      } else if (frame.mode === "final" && !terminal) {
        if (!started && options.quietWhenUnstarted) continue;
        const output = readFinal(frame)?.output ?? {};
        out.push(...serverEnding(run, output, spans, started, options.ending));
        terminal = true;
      }
    }
    if (out.length > 0) yield out;
  }
}

function* serverEnding(
  run: RunRecord,
  output: Record<string, unknown>,
  spans: OpenSpans,
  started: boolean,
  ending: ServerEnding,
): Generator<Event> {
  const runError = {
    type: "RUN_ERROR",
    message: String(output.description ?? "the run ended without a result"),
    code: String(output.errcode ?? "error"),
  };
  if (ending === "run-error") {
    // The server ended the run (timeout, cancel, a protocol fault): tell the client why.
    yield runError;
    return;
  }
  const ids = {
    threadId: run.thread_id ?? "",
    runId: run.segments.at(-1)?.agui_run_id ?? run.run_id,
  };
  // A run stopped before its agent began still opens and ends, as a run the client asked for.
  if (!started) yield { type: "RUN_STARTED", ...ids };
  yield* spans.closers(SUBAGENT_STOPPED);
  yield output.errcode === ERRCODE.cancelled ? { type: "RUN_FINISHED", ...ids } : runError;
}
