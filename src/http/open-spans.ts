/**
 * What a stream of AG-UI events has opened and not closed yet: text and reasoning messages,
 * reasoning spans, tool calls, steps and subagents. A run the server stops midway (a client's
 * stop, a cancel) leaves some of them open; a client that verifies the event order refuses a
 * RUN_FINISHED while any is, so they are closed first, innermost first, each with the
 * attribution (`subagentRunId`) of the event that opened it.
 */
type Event = Record<string, unknown>;

interface Span {
  /** The event that closes it. */
  closer: Event;
}

/** Opening type → [the key naming the span, the closing type]. */
const PAIRS: Record<string, [string, string]> = {
  TEXT_MESSAGE_START: ["messageId", "TEXT_MESSAGE_END"],
  REASONING_MESSAGE_START: ["messageId", "REASONING_MESSAGE_END"],
  REASONING_START: ["messageId", "REASONING_END"],
  TOOL_CALL_START: ["toolCallId", "TOOL_CALL_END"],
  STEP_STARTED: ["stepName", "STEP_FINISHED"],
};
const CLOSING = new Map(Object.values(PAIRS).map(([key, type]) => [type, key]));

/** The order closers go out in: what sits inside what comes first. */
const CLOSE_ORDER = [
  "REASONING_MESSAGE_END",
  "REASONING_END",
  "TEXT_MESSAGE_END",
  "TOOL_CALL_END",
  "STEP_FINISHED",
];

export class OpenSpans {
  /** By closing type, then by `subagentRunId ?? ""` + name, in opening order. */
  readonly #open = new Map<string, Map<string, Span>>();
  /** Subagents started and not yet finished, in starting order. */
  readonly #subagents = new Map<string, Event>();

  observe(event: Event): void {
    const type = event.type as string;
    const pair = PAIRS[type];
    if (pair) {
      const [key, closingType] = pair;
      const name = event[key];
      if (typeof name !== "string") return;
      const closer: Event = { type: closingType, [key]: name };
      if (typeof event.subagentRunId === "string") closer.subagentRunId = event.subagentRunId;
      this.#lane(closingType).set(laneKey(event, name), { closer });
      return;
    }
    const closedKey = CLOSING.get(type);
    if (closedKey !== undefined) {
      const name = event[closedKey];
      if (typeof name === "string") this.#open.get(type)?.delete(laneKey(event, name));
      return;
    }
    if (type === "SUBAGENT_STARTED" && typeof event.subagentRunId === "string") {
      this.#subagents.set(event.subagentRunId, event);
    } else if (
      (type === "SUBAGENT_FINISHED" || type === "SUBAGENT_ERROR") &&
      typeof event.subagentRunId === "string"
    ) {
      this.#subagents.delete(event.subagentRunId);
    } else if (type === "RUN_STARTED" || type === "RUN_FINISHED" || type === "RUN_ERROR") {
      // Each run starts with nothing open; a run's own end closes what it left.
      this.#open.clear();
      this.#subagents.clear();
    }
  }

  /** Events that close everything still open, innermost first (then subagents, newest first). */
  closers(subagentMessage: string): Event[] {
    const out: Event[] = [];
    for (const type of CLOSE_ORDER) {
      for (const span of this.#open.get(type)?.values() ?? []) out.push(span.closer);
    }
    for (const id of [...this.#subagents.keys()].reverse()) {
      out.push({ type: "SUBAGENT_ERROR", subagentRunId: id, message: subagentMessage });
    }
    this.#open.clear();
    this.#subagents.clear();
    return out;
  }

  #lane(closingType: string): Map<string, Span> {
    let lane = this.#open.get(closingType);
    if (!lane) {
      lane = new Map();
      this.#open.set(closingType, lane);
    }
    return lane;
  }
}

function laneKey(event: Event, name: string): string {
  return `${typeof event.subagentRunId === "string" ? event.subagentRunId : ""}\u0000${name}`;
}
