/**
 * The two AG-UI wire formats a remote agent may answer in, as push decoders: bytes in,
 * decoded events out. They know nothing of HTTP; a fault throws a {@link StreamFault} whose
 * message the adapter prefixes with the agent's URL.
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";

/**
 * @ag-ui/proto's `AGUI_MEDIA_TYPE`, spelt out: that package (with zod and protobuf, several MB
 * of heap) loads only when a remote answers in protobuf (agui-http-proto.ts).
 */
export const AGUI_MEDIA_TYPE = "application/vnd.ag-ui.event+proto";
export const SSE_MEDIA_TYPE = "text/event-stream";

/** A malformed stream: what was wrong with it, in words that follow the agent's URL. */
export class StreamFault extends Error {
  override readonly name = "StreamFault";
}

export interface EventDecoder {
  /** Decodes what `chunk` completes; keeps any partial frame for the next call. */
  push(chunk: Uint8Array): unknown[];
  /** The stream ended: decodes what is left. */
  end(): unknown[];
}

/** How much of a bad `data:` line a fault quotes. */
const QUOTE_LIMIT = 120;

/**
 * `text/event-stream`: one JSON event per SSE event's `data` (several `data:` lines joined by
 * newlines, as the SSE spec says). Framing (LF, CRLF or CR line ends; comments; `id:`,
 * `event:`, `retry:` fields) is eventsource-parser's. An event of whitespace only is skipped.
 */
export class SseDecoder implements EventDecoder {
  private readonly text = new TextDecoder("utf-8");
  private readonly messages: EventSourceMessage[] = [];
  private readonly parser = createParser({ onEvent: (message) => this.messages.push(message) });

  /**
   * `depth`: the deepest nesting a `data:` may hold, checked on the text before it is parsed
   * (a deep document costs far more parsed than as text); `key` is the config key named.
   */
  constructor(private readonly depth?: { maxDepth: number; key: string }) {}

  push(chunk: Uint8Array): unknown[] {
    this.parser.feed(this.text.decode(chunk, { stream: true }));
    return this.drain();
  }

  end(): unknown[] {
    // An SSE stream's last event should end with a blank line; a producer that closes right
    // after the final `data:` line would otherwise lose its terminal event, so finish it.
    this.parser.feed(`${this.text.decode()}\n\n`);
    return this.drain();
  }

  private drain(): unknown[] {
    const events: unknown[] = [];
    for (const { data } of this.messages.splice(0)) {
      if (data.trim() === "") continue;
      if (this.depth && nestedDeeperThan(data, this.depth.maxDepth)) {
        throw new StreamFault(
          `sent an event nested deeper than ${this.depth.maxDepth} levels (${this.depth.key})`,
        );
      }
      try {
        events.push(JSON.parse(data));
      } catch (err) {
        throw new StreamFault(
          `sent malformed JSON in a data: line (${(err as Error).message}): ${quote(data)}`,
        );
      }
    }
    return events;
  }
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** Whether JSON text nests objects and arrays deeper than `max` (strings skipped). */
export function nestedDeeperThan(text: string, max: number): boolean {
  // Cheap exit: fewer openers than the limit cannot nest past it.
  if (text.length <= max * 2) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > max) return true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) depth--;
  }
  return false;
}

export function quote(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > QUOTE_LIMIT ? `${flat.slice(0, QUOTE_LIMIT)}…` : flat);
}
