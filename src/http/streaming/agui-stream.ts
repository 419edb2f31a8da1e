import type { FastifyReply, FastifyRequest } from "fastify";
import { SSE_KEEP_ALIVE } from "./sse-keep-alive.js";
import { StreamWriter } from "./stream-writer.js";

const PROTO_MEDIA_TYPE = "application/vnd.ag-ui.event+proto";

/** Only an Accept header that names the protobuf media type explicitly gets protobuf. */
export function wantsProtobuf(accept: string | undefined): boolean {
  if (!accept) return false;
  return accept.split(",").some((part) => {
    const [type, ...params] = part.trim().split(";");
    if (type?.trim().toLowerCase() !== PROTO_MEDIA_TYPE) return false;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    return q === undefined || Number(q.slice(2)) > 0;
  });
}

/** An open stream of AG-UI events to one client, in the encoding it asked for. */
export interface AguiEventStream {
  /** Writes one event; resolves when the client can take more (or is gone). */
  write(event: Record<string, unknown>): Promise<void>;
  /** On an SSE stream: an event's SSE text, as `write` sends it. Undefined on protobuf. */
  sseText?: (event: Record<string, unknown>) => string;
  /**
   * On an SSE stream: writes SSE text in one write: events from `sseText`, or an event given
   * as the JSON `encodeSSE` would make of it (no null field: the encoder leaves optional nulls
   * out) as `data: <json>\n\n`, without parsing it. Undefined on protobuf.
   */
  writeSse?: (text: string) => Promise<void>;
  end(): void;
  /** Aborts when the response closes before the stream ended. */
  closed: AbortSignal;
  /** Whether `closed` aborted because the client went away (not the server at shutdown). */
  readonly clientWentAway: boolean;
}

export interface AguiStreamOptions {
  /** Seconds between keep-alives on an SSE stream; 0 = none. */
  keepAliveSeconds: number;
  headers?: Record<string, string>;
}

/**
 * Opens an AG-UI event stream: SSE, or length-prefixed protobuf for a client that asked for it
 * (both encoded by `@ag-ui/encoder`, as AG-UI's own servers do).
 *
 * Keep-alives go on SSE streams only. The protobuf encoding has no frame that means nothing: a
 * frame is a 4-byte length and an `Event` message, and `@ag-ui/client` fails the whole stream
 * on one it cannot decode (a zero-length frame is "Invalid event"); a comment line would be read
 * as a length prefix. A binary stream therefore stays silent while its run is.
 */
export async function openAguiStream(
  request: FastifyRequest,
  reply: FastifyReply,
  options: AguiStreamOptions,
): Promise<AguiEventStream> {
  const protobuf = wantsProtobuf(request.headers.accept);
  const { EventEncoder } = await loadEncoder();
  const encoder = new EventEncoder({ accept: protobuf ? PROTO_MEDIA_TYPE : "text/event-stream" });
  const writer = new StreamWriter(request, reply, {
    contentType: encoder.getContentType(),
    headers: options.headers,
    keepAliveSeconds: options.keepAliveSeconds,
    keepAlive: protobuf ? undefined : SSE_KEEP_ALIVE,
  });
  writer.open();
  return {
    closed: writer.closed,
    get clientWentAway() {
      return writer.clientWentAway;
    },
    // SSE as the encoder's text, written as it is: `encodeBinary` would copy every event into
    // a fresh TextEncoder's Uint8Array first, and the socket encodes a short string itself.
    write: protobuf
      ? (event) => writer.send(encoder.encodeBinary(event as never))
      : (event) => writer.send(encoder.encodeSSE(event as never)),
    sseText: protobuf ? undefined : (event) => encoder.encodeSSE(event as never),
    writeSse: protobuf ? undefined : (text) => writer.send(text),
    end: () => writer.end(),
  };
}

/**
 * The encoder (with protobufjs and zod behind it) costs about 13 MB of memory, so it is loaded
 * by the first AG-UI request rather than at start: an ACP-only deployment never pays for it.
 */
let encoderModule: Promise<typeof import("@ag-ui/encoder")> | undefined;
function loadEncoder(): Promise<typeof import("@ag-ui/encoder")> {
  encoderModule ??= import("@ag-ui/encoder");
  return encoderModule;
}
