/**
 * The two AG-UI wire formats a remote agent may answer in, as push decoders: bytes in,
 * decoded events out. They know nothing of HTTP; a fault throws a {@link StreamFault} whose
 * message the adapter prefixes with the agent's URL.
 */
import { AGUI_MEDIA_TYPE, AGUIUnknownEventTypeError, decode } from "@ag-ui/proto";
import { createParser, type EventSourceMessage } from "eventsource-parser";

export { AGUI_MEDIA_TYPE };
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

/** Larger frames are refused rather than buffered (the AG-UI client's own limit is 10 MiB). */
export const MAX_PROTO_FRAME = 16 * 1024 * 1024;

/**
 * `application/vnd.ag-ui.event+proto`: each event is a 4-byte big-endian length followed by
 * that many bytes of the protobuf `Event` envelope (the framing of @ag-ui/encoder's
 * `encodeProtobuf`), decoded by @ag-ui/proto. A frame of an event type this build predates is
 * dropped with a warning, the way the pipeline strips an unknown event off an SSE stream.
 */
export class ProtoDecoder implements EventDecoder {
  private buffer: Uint8Array = new Uint8Array(0);

  constructor(private readonly onUnknownEvent: () => void) {}

  push(chunk: Uint8Array): unknown[] {
    this.buffer = this.buffer.length === 0 ? chunk : concat(this.buffer, chunk);
    const events: unknown[] = [];
    while (this.buffer.length >= 4) {
      const view = new DataView(this.buffer.buffer, this.buffer.byteOffset, 4);
      const length = view.getUint32(0, false);
      if (length > MAX_PROTO_FRAME) throw new StreamFault(oversizedFrame(this.buffer, length));
      if (this.buffer.length < 4 + length) break;
      const frame = this.buffer.subarray(4, 4 + length);
      this.buffer = this.buffer.subarray(4 + length);
      try {
        events.push(decode(frame));
      } catch (err) {
        if (err instanceof AGUIUnknownEventTypeError) {
          this.onUnknownEvent();
          continue;
        }
        throw new StreamFault(
          `sent a protobuf frame that does not decode: ${(err as Error).message}`,
        );
      }
    }
    return events;
  }

  end(): unknown[] {
    return [];
  }

  /** Bytes of an unfinished frame left when the stream ended. */
  get pending(): number {
    return this.buffer.length;
  }
}

/** Lines an SSE stream starts with (a field name and its colon, or a comment). */
const SSE_START = /^(?:data|event|id|retry):|^:/;

/**
 * Why a frame's length is out of bounds. Text read as a protobuf length is always huge (a
 * printable first byte, even a tab, makes it at least 150 MB): an upstream that
 * answers SSE, or anything textual, under the protobuf content type is said to have done so,
 * rather than to have sent "a frame of 1684108385 bytes" (the bytes of "data").
 */
function oversizedFrame(buffer: Uint8Array, length: number): string {
  const head = new TextDecoder("utf-8").decode(buffer.subarray(0, 200));
  const printable = /^[\x20-\x7e\t\r\n]{4}/.test(head);
  const contentType = `the upstream's content-type says protobuf (${AGUI_MEDIA_TYPE})`;
  if (SSE_START.test(head)) return `sent what looks like SSE text (${quote(head)}); ${contentType}`;
  if (printable)
    return `sent what looks like text (${quote(head)}), not protobuf frames; ${contentType}`;
  return `sent a protobuf frame of ${length} bytes, more than the ${MAX_PROTO_FRAME} allowed`;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > QUOTE_LIMIT ? `${flat.slice(0, QUOTE_LIMIT)}…` : flat);
}
