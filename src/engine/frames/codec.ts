import { aguiToAcpMessages } from "../../bridge/acp/messages.js";
import { asValues } from "../../bridge/acp/values.js";
import { Accumulator, type AgUiMessage, type EventRecord } from "../../pipeline/index.js";
import type { RunFrame, RunStatus } from "../../storage/types.js";
import { jsonText } from "../../util/json-pieces.js";
import { LONG_TEXT_CHARS, LongText } from "../../util/long-text.js";

/**
 * The run frame format: the only module that writes a frame's `data` or reads it back.
 *
 * Clients get a frame's data as the ACP `RunOutputStream` item, byte for byte ("full form"):
 * - custom / subagent: `{"type":"custom","run_id":…,"status":"pending","update":<AG-UI event>}`
 * - values: `{"type":"values","run_id":…,"status":"pending","values":…,"messages":…}`
 * - final: `{"type":"values","run_id":…,"status":<run status>,"values":…,"messages":…,"output":…}`
 *   where the output of a result is `{"type":"result"}` alone: its values and messages are the
 *   frame's own (`RunResult` requires neither), so that a long answer is not sent twice.
 *
 * What is stored (and published on the bus) is smaller, so that a run stores what its agent
 * produced about once rather than once per values frame (a values frame repeats the whole state
 * and messages so far, which grows with the square of a long message):
 * - custom / subagent frames are stored as their AG-UI event alone: they are the segment's
 *   events, and the values are rebuilt from them. The envelope around it is the same for every
 *   frame of the run (its run id and "pending"), so it is added when the frame is read
 *   (`fullCustom`) instead of being stored 50,000 times for a long answer: about 90 bytes per
 *   frame, a third of a token-sized frame's row.
 * - values frames carry no values. A segment's first values frame (its keyframe) carries the
 *   AG-UI state and messages the segment started from: `{"rebuild":"events","state":…,
 *   "messages":…}`; the later ones are `{"rebuild":"events"}`. A values frame's full form is
 *   the segment's start with every event of the segment stored before it applied by the
 *   pipeline's accumulator, then mapped to ACP as the executor did: `ValuesRebuilder` reads
 *   the log in order and does exactly that. Every follower, live or late, replica-local or
 *   not, gets values frames from it, so they all get the same bytes.
 * - a final frame whose output is a result stores no values, messages or output:
 *   `{"type":"values","run_id":…,"status":…,"output":"run"}`. The run's stored output (written
 *   before the final frame, and never changed after a result) holds them all, and the full
 *   form is rebuilt from it (`fullFinalData`). Any other final frame (error, timeout,
 *   interrupt, cancel) is stored in full form, so every final frame is readable on its own
 *   with its run record: a log compacted down to its final frame stays readable.
 * - frames written before this format (full-form custom, values and final frames) are read
 *   as they are.
 *
 * The key order of a final frame is part of the format: `endsForGood` reads its status from
 * its first bytes instead of parsing frames that can be megabytes long.
 */

/** A custom or subagent frame's stored data: its AG-UI event. */
export function customFrameData(event: unknown): string {
  return JSON.stringify(event);
}

/**
 * How a custom frame's full form begins. An AG-UI event's type is upper case (`CUSTOM`), so a
 * stored event never begins so: what does is a frame stored in full form before this format.
 */
const FULL_CUSTOM_PREFIX = '{"type":"custom","run_id":"';

/**
 * A custom or subagent frame in full form, as clients get it; any other frame as it is. Run ids
 * are UUIDs, written without escaping.
 */
export function fullCustom(frame: RunFrame): RunFrame {
  if (frame.mode !== "custom" && frame.mode !== "subagent") return frame;
  if (frame.data.startsWith(FULL_CUSTOM_PREFIX)) return frame;
  const data = `{"type":"custom","run_id":"${frame.run_id}","status":"pending","update":${frame.data}}`;
  return { ...frame, data };
}

/** The stored data of a segment's first values frame: the AG-UI state and messages it started from. */
export function valuesKeyframeData(
  initialState: unknown,
  initialMessages: readonly unknown[],
): string {
  return JSON.stringify({ rebuild: "events", state: initialState, messages: initialMessages });
}

/** The stored data of a segment's later values frames: rebuilt from the events before them. */
export const VALUES_DELTA_DATA = '{"rebuild":"events"}';

/**
 * A frame as a reader gets it, which may also carry the value its `data` is the JSON text of.
 * A frame that repeats a long answer's whole state (a values frame, a final frame completed
 * from the run's output) can be megabytes: a writer then writes its text piece by piece from
 * `value()` (json-pieces.ts) as the socket takes it, instead of the whole text at once, so the
 * text never exists in memory whole (nor its UTF-8 copy, nor a socket buffer holding both).
 */
export type ReadFrame = RunFrame & {
  /**
   * The value whose JSON text (`jsonPieces`) is `data`; valid as long as `data` is (see
   * nextLazy). A long text in it may be a LongText, which is written as its pieces.
   */
  readonly value?: () => unknown;
  /**
   * For a values frame: true when later frames of the log have reached the reader already, so
   * that its values are not the newest (the next values frame or the final frame supersedes
   * them). A writer behind its client may skip it.
   */
  readonly superseded?: () => boolean;
};

/** A values frame's full form: the run's state and messages so far. */
function valuesFrameValue(runId: string, values: unknown, messages: unknown) {
  return { type: "values", run_id: runId, status: "pending", values, messages };
}

/** Stored final frames whose full form comes from the run's stored output. */
const FINAL_FROM_RUN = /^\{"type":"values","run_id":"[^"\\]*","status":"[a-z]+","output":"run"\}$/;

/**
 * A final frame's stored data: how the run (segment) ended. A result is stored by reference to
 * the run's output (which repeats values and messages); anything else in full.
 */
export function finalFrameData(
  runId: string,
  status: RunStatus,
  values: unknown,
  messages: unknown,
  output: Record<string, unknown>,
): string {
  if (output.type === "result") return finalFrameFromRun(runId, status);
  return fullFinal(runId, status, values, messages, output);
}

/** A final frame's full form, as clients get it. */
function fullFinal(
  runId: string,
  status: RunStatus,
  values: unknown,
  messages: unknown,
  output: unknown,
): string {
  return JSON.stringify({ type: "values", run_id: runId, status, values, messages, output });
}

/** A final frame stored by reference to the run's output (its status first, as always). */
function finalFrameFromRun(runId: string, status: RunStatus): string {
  return `{"type":"values","run_id":"${runId}","status":"${status}","output":"run"}`;
}

/**
 * True for a final frame whose full form needs the run's stored output (`fullFinalData`);
 * false for one that is complete as stored.
 */
export function finalNeedsRunOutput(frame: RunFrame): boolean {
  return frame.mode === "final" && FINAL_FROM_RUN.test(frame.data);
}

/**
 * The full form of a final frame stored by reference (see `finalNeedsRunOutput`), from the
 * run's stored output. A run that is gone (deleted) or whose output is no longer a result
 * leaves the frame saying how the run ended with what is known.
 */
export function fullFinalData(
  frame: RunFrame,
  runOutput: Record<string, unknown> | null,
): ReadFrame {
  const { run_id, status } = JSON.parse(frame.data) as { run_id: string; status: RunStatus };
  const output = runOutput?.type === "result" ? runOutput : null;
  const value = () => fullFinalValue(run_id, status, output);
  let data: string | undefined;
  // Rendered when first read: a writer that writes it in pieces never renders it whole.
  return {
    run_id: frame.run_id,
    seq: frame.seq,
    mode: frame.mode,
    get data() {
      data ??= JSON.stringify(value());
      return data;
    },
    value,
  };
}

function fullFinalValue(
  runId: string,
  status: RunStatus,
  output: Record<string, unknown> | null,
): Record<string, unknown> {
  const values = output?.values ?? {};
  const messages = output?.messages ?? [];
  // The result's values and messages are the frame's own: not repeated in its output.
  const result = output === null ? null : SLIM_RESULT;
  return { type: "values", run_id: runId, status, values, messages, output: result };
}

/** A result's output in a final frame's full form (see `fullFinalValue`). */
const SLIM_RESULT = Object.freeze({ type: "result" });

/** True for a result's output as a final frame in full form carries it: without its values and messages. */
function isSlimResult(output: unknown): boolean {
  return (
    typeof output === "object" &&
    output !== null &&
    (output as { type?: unknown }).type === "result" &&
    !("values" in output) &&
    !("messages" in output)
  );
}

/** A final frame's status prefix, as `finalFrameData` writes it. */
const FINAL_STATUS = /^\{"type":"values","run_id":"[^"\\]*","status":"(success|error|timeout)"/;

/**
 * True for a final frame that ends the run for good: a terminal status (success, error,
 * timeout) is never followed by another segment or frame. An `interrupted` final frame (or one
 * not in this format) is left to the caller to decide.
 */
export function endsForGood(frame: RunFrame): boolean {
  return frame.mode === "final" && FINAL_STATUS.test(frame.data);
}

/** What a final frame says of the run's end. */
export interface FinalFrame {
  status: RunStatus;
  /** The run's output; null for a result stored by reference (it is the run's stored output). */
  output: Record<string, unknown> | null;
}

/** A final frame's status and output; `undefined` for any other frame. */
export function readFinal(frame: RunFrame): FinalFrame | undefined {
  if (frame.mode !== "final") return undefined;
  const data = JSON.parse(frame.data) as {
    status: RunStatus;
    output?: unknown;
    values?: unknown;
    messages?: unknown;
  };
  if (isSlimResult(data.output)) {
    // A result in full form: its values and messages are the frame's own.
    const output = { type: "result", values: data.values ?? {}, messages: data.messages ?? [] };
    return { status: data.status, output };
  }
  const output = typeof data.output === "object" ? (data.output as FinalFrame["output"]) : null;
  return { status: data.status, output };
}

/** The AG-UI event a custom or subagent frame carries; `undefined` for any other frame. */
export function readUpdate(frame: RunFrame): Record<string, unknown> | undefined {
  if (frame.mode !== "custom" && frame.mode !== "subagent") return undefined;
  if (!frame.data.startsWith(FULL_CUSTOM_PREFIX)) {
    return JSON.parse(frame.data) as Record<string, unknown>;
  }
  const data = JSON.parse(frame.data) as { update?: Record<string, unknown> };
  return data.update ?? undefined;
}

/**
 * The AG-UI event a custom or subagent frame stores, as its JSON text, when that event is of one
 * of `types` (given as `typePrefixes`): only for a frame stored in the current format whose JSON
 * begins with the type (as events serialized with their type first do). Undefined otherwise:
 * the caller parses the frame instead (`readUpdate`).
 */
export function storedEventJson(
  frame: RunFrame,
  typePrefixes: readonly string[],
): string | undefined {
  if (frame.mode !== "custom" && frame.mode !== "subagent") return undefined;
  const data = frame.data;
  for (const prefix of typePrefixes) if (data.startsWith(prefix)) return data;
  return undefined;
}

/** How the JSON of an event of this type begins when its type comes first. */
export const eventTypePrefix = (type: string): string => `{"type":"${type}",`;

const IGNORE_WARNING = () => {};

/**
 * Rebuilds values frames from a run's log, fed every frame in order from the run's start (or
 * from a segment's start: right after a final frame). Linear in the run's content: each event
 * is parsed and applied once, and a values frame is rendered only when asked for.
 *
 * A message's text that grows long is kept as its JSON text in pieces (LongText) instead of one
 * string: a values frame holds that text whole, and a string built delta by delta would be
 * copied whole (flattened) each time a frame is rendered. Written piece by piece, a values
 * frame of a long answer then costs no copy of the answer.
 */
export class ValuesRebuilder {
  /** The current segment's values, once its keyframe is read. */
  private acc: Accumulator | undefined;
  /** The long texts of the current segment's messages (their `content` is then stale). */
  private texts = new WeakMap<object, LongText>();
  /** The current segment's events before its keyframe. */
  private before: EventRecord[] = [];
  /** Counts the frames taken: a lazy values frame renders only while it is the last one. */
  private generation = 0;

  /**
   * Takes the next frame of the log. For a values frame, returns its full form (when `render`)
   * or the frame itself (when not); `undefined` when it cannot be rebuilt (the log before it
   * is missing). Other frames come back as they are.
   */
  next(frame: RunFrame, render = true): RunFrame | undefined {
    this.generation++;
    switch (frame.mode) {
      case "custom":
      case "subagent": {
        const event = readUpdate(frame) as EventRecord | undefined;
        if (event === undefined) return frame;
        if (this.acc) this.acc.apply(event, IGNORE_WARNING);
        else this.before.push(event);
        return frame;
      }
      case "values": {
        if (!frame.data.startsWith('{"rebuild":')) return frame; // full form (older logs)
        if (frame.data !== VALUES_DELTA_DATA) this.keyframe(frame.data);
        if (!this.acc) return undefined;
        return render ? this.render(frame, this.acc) : frame;
      }
      case "final":
        // The segment is over: the next one starts from its own keyframe.
        this.acc = undefined;
        this.before = [];
        return frame;
    }
  }

  /**
   * As `next`, but a values frame to rebuild comes back unrendered: its `data` is rendered when
   * it is first read (or its `value()` taken, to be written in pieces), which must be before
   * the next call (the values move on with the log). A reader that skips a values frame (a
   * client that cannot keep up) then never renders it. `superseded` is handed on as the frame's
   * (see ReadFrame).
   */
  nextLazy(frame: RunFrame, superseded?: () => boolean): ReadFrame | undefined {
    const taken = this.next(frame, false);
    if (taken === undefined || taken.mode !== "values" || !taken.data.startsWith('{"rebuild":')) {
      return taken;
    }
    const acc = this.acc!;
    // `next` counted this frame: the next frame taken makes the two differ.
    const generation = this.generation;
    let data: string | undefined;
    const value = () => {
      if (generation !== this.generation) {
        throw new Error(`values frame ${frame.seq} was read after the log moved on`);
      }
      return this.valueOf(frame, acc);
    };
    const text = () => {
      if (generation !== this.generation) {
        throw new Error(`values frame ${frame.seq} was read after the log moved on`);
      }
      return this.textOf(frame, acc);
    };
    return {
      run_id: frame.run_id,
      seq: frame.seq,
      mode: "values",
      get data() {
        data ??= text();
        return data;
      },
      value,
      superseded,
    };
  }

  private render(frame: RunFrame, acc: Accumulator): RunFrame {
    return { ...frame, data: this.textOf(frame, acc) };
  }

  /** The values frame's full form as a value; it shares the accumulator's strings. */
  private valueOf(frame: RunFrame, acc: Accumulator) {
    const list = acc.messages;
    const messages = aguiToAcpMessages(list as unknown as readonly AgUiMessage[]);
    for (let i = 0; i < list.length; i++) {
      const text = this.texts.get(list[i]!);
      // A text message's content is its text, a string in ACP form: the LongText stands for it.
      if (text !== undefined) messages[i]!.content = text as unknown as string;
    }
    return valuesFrameValue(frame.run_id, asValues(acc.state), messages);
  }

  /** The values frame's full form as JSON text. */
  private textOf(frame: RunFrame, acc: Accumulator): string {
    const holdsLongText = acc.messages.some((message) => this.texts.has(message));
    return jsonText(this.valueOf(frame, acc), holdsLongText);
  }

  /** Takes a delta of a text that is (or grows) long: it goes on as a LongText. */
  private readonly takeText = (message: Record<string, unknown>, delta: string): boolean => {
    let text = this.texts.get(message);
    if (text === undefined) {
      const content = typeof message.content === "string" ? message.content : "";
      if (content.length + delta.length < LONG_TEXT_CHARS) return false;
      text = new LongText(content);
      this.texts.set(message, text);
      message.content = "";
    }
    text.append(delta);
    return true;
  };

  private keyframe(data: string): void {
    const start = JSON.parse(data) as { state?: unknown; messages?: unknown[] };
    this.texts = new WeakMap();
    this.acc = new Accumulator(
      start.state === undefined ? {} : start.state,
      start.messages ?? [],
      undefined,
      this.takeText,
    );
    for (const event of this.before) this.acc.apply(event, IGNORE_WARNING);
    this.before = [];
  }
}
