import { Readable } from "node:stream";
import { jsonAtLeast, jsonByteLength, jsonPieces } from "../util/json-pieces.js";

/**
 * Strings at least this long go to the socket as their UTF-8 bytes instead.
 *
 * Node writes a string to a socket through a buffer sized for the worst case, three bytes per
 * UTF-16 unit: a 10 MB answer held 29 MB of buffers while it was sent (measured with
 * `process.memoryUsage().arrayBuffers`), against 10 MB for the same answer written as a
 * Buffer. Encoding it ourselves costs one pass over the string, which only pays off when the
 * string is large; short ones are written as they are.
 */
const ENCODE_FROM_CHARS = 64 * 1024;

/** The chunk as it is best written to a socket: its bytes when it is a long string. */
export function wireChunk<T extends string | Uint8Array>(chunk: T): T | Buffer {
  return typeof chunk === "string" && chunk.length >= ENCODE_FROM_CHARS
    ? Buffer.from(chunk, "utf8")
    : chunk;
}

/** A long JSON answer, streamed piece by piece; its length is known before it is sent. */
export type JsonBody = Readable & { readonly contentLength: number };

/**
 * A JSON answer's payload: its text, or for a long answer (a run's 10 MB output) a stream of
 * its pieces (json-pieces.ts), so that neither the whole text nor its whole UTF-8 copy is ever
 * in memory. The socket pulls pieces as it drains. The length is counted in a first pass over
 * the same pieces, so the answer keeps its Content-Length.
 *
 * The pieces go to the socket as strings, in object mode (a byte-mode stream would turn each
 * into a Buffer): the socket encodes a string into memory it frees as soon as it is written,
 * where a Buffer per piece stays allocated until the next garbage collection, which made the
 * 10 MB answer's pieces pile up to 10 MB.
 */
export function jsonAnswer(data: unknown): string | JsonBody {
  if (!jsonAtLeast(data, ENCODE_FROM_CHARS)) return JSON.stringify(data);
  const contentLength = jsonByteLength(data);
  // One piece at a time: the socket's own buffer is the queue.
  const body = Readable.from(piecesOfLength(data, contentLength), {
    objectMode: true,
    highWaterMark: 1,
  });
  return Object.assign(body, { contentLength });
}

/**
 * The pieces again, checked against the length announced: the value is walked a second time as
 * the socket drains, and an answer that changed in between (or a toJSON that answers
 * differently) would otherwise break the connection's framing. Such an answer is cut off, and
 * Fastify destroys the connection.
 */
function* piecesOfLength(data: unknown, contentLength: number): Generator<string> {
  let sent = 0;
  for (const piece of jsonPieces(data)) {
    sent += Buffer.byteLength(piece, "utf8");
    if (sent > contentLength) break;
    yield piece;
  }
  if (sent !== contentLength) {
    throw new Error(`the answer changed while it was sent (${sent} of ${contentLength} bytes)`);
  }
}

export function isJsonBody(payload: unknown): payload is JsonBody {
  return (
    payload instanceof Readable && typeof (payload as Partial<JsonBody>).contentLength === "number"
  );
}
