/**
 * How AGNTCY's Python SDK (`agntcy-acp`) reads an ACP stream, rule for rule, so tests can check
 * that our SSE survives it: `agntcy_acp/server_side_events.py` (`sse_stream`) splits the body
 * into lines and builds events, and each event's data goes through
 * `StreamEventPayload.from_json` (`acp_v0/models/stream_event_payload.py`).
 *
 * Its rules, which differ from a WHATWG EventSource parser:
 * - lines are split as Python's `str.splitlines()` does: on \n, \r, \r\n and also \v, \f,
 *   \x1c–\x1e, \x85, U+2028 and U+2029; a chunk's last piece counts as a complete line only
 *   when it ends in \n or \r;
 * - every blank line dispatches an event, whatever came before it (a comment block included),
 *   with the type `agent_event` when none was given;
 * - a line starting with ":" is skipped; `data` replaces (not appends) the event's data; the
 *   value is stripped of all leading whitespace; `id`, `event` and `data` reset per event;
 * - the data of every event is parsed as JSON and must match exactly one of the four
 *   `StreamEventPayload` shapes, else a ValueError ends the stream.
 *
 * The SDK also re-reads all earlier lines on every chunk (its list of found lines is never
 * cleared), so it yields earlier events again; those parsed once already, so this changes
 * nothing about which streams survive, and the reader below yields each event once.
 */

export interface AgntcyEvent {
  eventType: string;
  eventData: string;
  lastEventId: string;
}

/** The break characters of Python's `str.splitlines()`. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: Python splits lines at \x1c–\x1e too.
const PY_LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/g;

function splitlinesKeepEnds(text: string): string[] {
  const lines: string[] = [];
  let start = 0;
  for (const match of text.matchAll(PY_LINE_BREAK)) {
    const end = match.index + match[0].length;
    lines.push(text.slice(start, end));
    start = end;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}

export class AgntcySseReader {
  private readonly decoder = new TextDecoder("utf-8", { fatal: true });
  private prevChunks: string[] = [];
  private eventType = "";
  private eventData = "";
  private lastEventId = "";

  /** One chunk of the response body as the socket delivered it; the events it completes. */
  feed(chunk: Uint8Array): AgntcyEvent[] {
    const decoded = this.decoder.decode(chunk, { stream: true });
    const chunkLines = splitlinesKeepEnds(decoded);
    // `chunk_lines[-1]` on an empty list: a chunk that decodes to nothing crashes the SDK.
    if (chunkLines.length === 0) throw new Error("IndexError: list index out of range");
    const found: string[] = [];
    if (chunkLines.length > 1) {
      found.push(this.prependPrevious(chunkLines[0]!));
      found.push(...chunkLines.slice(1, -1));
    }
    const last = chunkLines.at(-1)!;
    if (last.endsWith("\n") || last.endsWith("\r")) found.push(this.prependPrevious(last));
    else this.prevChunks.push(last);
    return this.parseLines(found);
  }

  private prependPrevious(line: string): string {
    const whole = this.prevChunks.join("") + line;
    this.prevChunks = [];
    return whole;
  }

  private parseLines(lines: string[]): AgntcyEvent[] {
    const events: AgntcyEvent[] = [];
    for (const raw of lines) {
      const line = raw.replace(/[\r\n]+$/, "");
      if (line === "") {
        events.push({
          eventType: this.eventType || "agent_event",
          eventData: this.eventData.replace(/\n+$/, ""),
          lastEventId: this.lastEventId,
        });
        this.eventType = "";
        this.eventData = "";
        this.lastEventId = "";
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const key = colon === -1 ? line : line.slice(0, colon);
      const value = colon === -1 ? "" : line.slice(colon + 1).trimStart();
      if (key === "event") this.eventType = value;
      else if (key === "data") this.eventData = value;
      else if (key === "id" && !value.includes("\u0000")) this.lastEventId = value;
    }
    return events;
  }
}

const RUN_STATUSES = new Set(["pending", "error", "success", "timeout", "interrupted"]);

type Shape = (data: Record<string, unknown>) => boolean;

const isString = (value: unknown): value is string => typeof value === "string";
const isDict = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const optional = (value: unknown, check: (v: unknown) => boolean) =>
  value === undefined || value === null || check(value);

/** `Message`: a string role; content a string or a list of blocks (a null content fails). */
function isMessage(value: unknown): boolean {
  if (!isDict(value) || !isString(value.role)) return false;
  const content = value.content;
  const contentOk =
    isString(content) ||
    (Array.isArray(content) && content.every((block) => isDict(block) && isString(block.type)));
  return contentOk && optional(value.id, isString) && optional(value.metadata, isDict);
}

/** The four models of the `StreamEventPayload` oneOf; pydantic ignores keys it does not know. */
const PAYLOAD_SHAPES: Record<string, Shape> = {
  ValueRunResultUpdate: (d) =>
    d.type === "values" &&
    isString(d.run_id) &&
    RUN_STATUSES.has(d.status as string) &&
    isDict(d.values) &&
    optional(d.messages, (m) => Array.isArray(m) && m.every(isMessage)),
  CustomRunResultUpdate: (d) =>
    d.type === "custom" &&
    optional(d.run_id, isString) &&
    RUN_STATUSES.has(d.status as string) &&
    isDict(d.update),
  ValueRunInterruptUpdate: (d) =>
    d.type === "interrupt" &&
    isDict(d.interrupt) &&
    isString(d.run_id) &&
    RUN_STATUSES.has(d.status as string),
  ValueRunErrorUpdate: (d) =>
    d.type === "error" &&
    isString(d.run_id) &&
    Number.isInteger(d.errcode) &&
    isString(d.description) &&
    RUN_STATUSES.has(d.status as string),
};

/** `StreamEventPayload.from_json`: the payload, or the ValueError the SDK raises. */
export function parseStreamEventPayload(data: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    parsed = undefined;
  }
  const matches = isDict(parsed)
    ? Object.entries(PAYLOAD_SHAPES).filter(([, shape]) => shape(parsed as Record<string, unknown>))
    : [];
  if (matches.length === 1) return parsed as Record<string, unknown>;
  throw new Error(
    `${matches.length === 0 ? "No match" : "Multiple matches"} found when deserializing the JSON string into StreamEventPayload (data: ${JSON.stringify(data.slice(0, 80))})`,
  );
}

/** What the SDK's streaming call yields for a whole body received as `chunks`; throws where it would. */
export function readLikeAgntcy(
  chunks: Uint8Array[],
): Array<{ id: string; event: string; data: Record<string, unknown> }> {
  const reader = new AgntcySseReader();
  return chunks.flatMap((chunk) =>
    reader.feed(chunk).map((event) => ({
      id: event.lastEventId,
      event: event.eventType,
      data: parseStreamEventPayload(event.eventData),
    })),
  );
}
