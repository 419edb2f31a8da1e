import { constants, deflateRawSync, inflateRawSync } from "node:zlib";
import { jsonAtLeast, jsonPieces, PIECE_CHARS } from "../../json-pieces.js";
import { toJson } from "../json.js";

/**
 * A large JSON column value (a run's output, a thread's or checkpoint's values and messages:
 * megabytes for a long answer) is stored packed: a
 * BLOB holding a format byte and the JSON text's UTF-8 bytes compressed with raw DEFLATE.
 * Smaller values stay JSON text, as every row stored before this format is.
 *
 * Packing works piece by piece (json-pieces.ts): each piece of the text is compressed on its own
 * with a sync flush, which ends it on a byte boundary without ending the stream, and an empty
 * final block closes the whole. Concatenated, the pieces are one valid DEFLATE stream (RFC 1951:
 * a piece's back-references point only into itself), so the text is never whole in memory
 * while it is stored: a 10 MB output as one string, its UTF-8 copy, SQLite's bound copy and its
 * record cost 20 MB at the run's end (BENCH_ONLY=storage), and text compresses about 3 to 1.
 */

/** Values whose JSON text is at least this long are packed. */
export const PACK_FROM_CHARS = PIECE_CHARS;

/** The first byte of a packed value: raw DEFLATE of UTF-8 JSON text. */
const DEFLATED_JSON = 0x01;

/** Speed over ratio: the run's end waits for it, and text still shrinks about 3 to 1. */
const LEVEL = 1;

/** The column value for `value`: JSON text, or a packed BLOB when the text is long. */
export function packJson(value: unknown): string | Buffer {
  if (!jsonAtLeast(value, PACK_FROM_CHARS)) return toJson(value);
  const parts: Buffer[] = [Buffer.of(DEFLATED_JSON)];
  // One buffer for every piece's bytes: a Buffer per piece would stay allocated until the next
  // garbage collection, megabytes of them by the end of a long output.
  let scratch = Buffer.allocUnsafe(PIECE_CHARS * 3);
  for (const piece of jsonPieces(value)) {
    if (piece.length * 3 > scratch.length) scratch = Buffer.allocUnsafe(piece.length * 3);
    const bytes = scratch.write(piece, 0, "utf8");
    parts.push(
      deflateRawSync(scratch.subarray(0, bytes), {
        level: LEVEL,
        finishFlush: constants.Z_SYNC_FLUSH,
      }),
    );
  }
  parts.push(deflateRawSync(Buffer.alloc(0)));
  return Buffer.concat(parts);
}

/** The value a column holds, JSON text or packed. */
export function unpackJson<T>(stored: string | Buffer): T {
  if (typeof stored === "string") return JSON.parse(stored) as T;
  if (stored[0] !== DEFLATED_JSON) {
    throw new Error(`stored JSON value has an unknown format (first byte ${stored[0]})`);
  }
  return JSON.parse(inflateRawSync(stored.subarray(1)).toString("utf8")) as T;
}
