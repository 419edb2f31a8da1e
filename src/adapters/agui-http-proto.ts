/**
 * The protobuf half of agui-http-decode.ts, in a module of its own: @ag-ui/proto brings zod
 * (every locale) and protobuf-es, about 6 MB of heap, so the adapter imports this only when a
 * remote answers `application/vnd.ag-ui.event+proto`.
 */
import { AGUIUnknownEventTypeError, decode } from "@ag-ui/proto";
import { AGUI_MEDIA_TYPE, type EventDecoder, quote, StreamFault } from "./agui-http-decode.js";

/**
 * `application/vnd.ag-ui.event+proto`: each event is a 4-byte big-endian length followed by
 * that many bytes of the protobuf `Event` envelope (the framing of @ag-ui/encoder's
 * `encodeProtobuf`), decoded by @ag-ui/proto. A frame of an event type this build predates is
 * dropped with a warning, the way the pipeline strips an unknown event off an SSE stream.
 * The size of a frame is bounded before its bytes reach this decoder (stream-bounds.ts).
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
 * `frame` is the frame's first bytes, its length prefix included.
 */
export function oversizedFrame(frame: Uint8Array, limit: number, key: string): string {
  const head = new TextDecoder("utf-8").decode(frame.subarray(0, 200));
  const printable = /^[\x20-\x7e\t\r\n]{4}/.test(head);
  const contentType = `the upstream's content-type says protobuf (${AGUI_MEDIA_TYPE})`;
  if (SSE_START.test(head)) return `sent what looks like SSE text (${quote(head)}); ${contentType}`;
  if (printable)
    return `sent what looks like text (${quote(head)}), not protobuf frames; ${contentType}`;
  const length = new DataView(frame.buffer, frame.byteOffset, 4).getUint32(0, false);
  return `sent a protobuf frame of ${length} bytes, more than the ${limit} allowed for one event (${key})`;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}
