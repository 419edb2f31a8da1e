import { constants, deflateRawSync, inflateRawSync } from "node:zlib";
import { jsonAtLeast, jsonPieces, PIECE_CHARS } from "../../util/json-pieces.js";
import { toJson } from "../json.js";

/**
 * A large JSON column value (a run's output, a thread's or checkpoint's values and messages:
 * megabytes for a long answer) is stored packed: a BLOB holding a format byte and the JSON
 * text's UTF-8 bytes compressed with raw DEFLATE. Smaller values stay JSON text, as every row
 * stored before this format is.
 *
 * Packing works piece by piece (json-pieces.ts): each piece of the text is compressed on its own
 * with a sync flush, which ends it on a byte boundary without ending the stream, and an empty
 * final block closes the whole. Concatenated, the pieces are one valid DEFLATE stream (RFC 1951:
 * a piece's back-references point only into itself), so the text is never whole in memory
 * while it is stored: a 10 MB output as one string, its UTF-8 copy, SQLite's bound copy and its
 * record cost 20 MB at the run's end (BENCH_ONLY=storage), and text compresses about 3 to 1.
 *
 * A run's output goes one step further: its packed bytes are stored in parts, rows of
 * `run_output_parts` (migration 008), and the column holds only a marker. SQLite copies a bound
 * BLOB, then copies it again into the row's record, so a 3 MB packed output was copied whole
 * twice more; parts of about PART_BYTES are copied a part at a time.
 */

/** Values whose JSON text is at least this long are packed. */
export const PACK_FROM_CHARS = PIECE_CHARS;

/** The first byte of a packed value: raw DEFLATE of UTF-8 JSON text. */
const DEFLATED_JSON = 0x01;

/** The whole column value of an output stored in parts (`run_output_parts`). */
export const IN_PARTS = Buffer.of(0x02);

/**
 * A thread's `values` and `messages` column value when they are those of its current checkpoint
 * (`checkpoint_id`), as after every run's end: stored once, in the checkpoint, and read from it
 * (threads.ts). A thread row repeated a trivial run's state (a quarter of a KB), and a long
 * conversation's whole history, packed, at every run.
 */
export const OF_CHECKPOINT = Buffer.of(0x03);

/** Whether a thread's column value is OF_CHECKPOINT. */
export function isOfCheckpoint(stored: string | Buffer): boolean {
  return typeof stored !== "string" && stored.length === 1 && stored[0] === 0x03;
}

/** Packed bytes per part, about (a piece's compressed bytes are never split). */
const PART_BYTES = 32 * 1024;

/** Speed over ratio: the run's end waits for it, and text still shrinks about 3 to 1. */
const LEVEL = 1;

/** The column value for `value`: JSON text, or a packed BLOB when the text is long. */
export function packJson(value: unknown): string | Buffer {
  const packed = packJsonParts(value);
  return typeof packed === "string" ? packed : Buffer.concat(packed);
}

/**
 * JSON text when short; otherwise the packed bytes in parts of about PART_BYTES, which joined
 * are what `packJson` stores as one BLOB.
 */
export function packJsonParts(value: unknown): string | Buffer[] {
  if (!jsonAtLeast(value, PACK_FROM_CHARS)) return toJson(value);
  const parts: Buffer[] = [];
  let part: Buffer[] = [Buffer.of(DEFLATED_JSON)];
  let partBytes = 1;
  const add = (bytes: Buffer) => {
    part.push(bytes);
    partBytes += bytes.length;
    if (partBytes >= PART_BYTES) {
      parts.push(Buffer.concat(part));
      part = [];
      partBytes = 0;
    }
  };
  // One buffer for every piece's bytes: a Buffer per piece would stay allocated until the next
  // garbage collection, megabytes of them by the end of a long output.
  let scratch = Buffer.allocUnsafe(PIECE_CHARS * 3);
  for (const piece of jsonPieces(value)) {
    if (piece.length * 3 > scratch.length) scratch = Buffer.allocUnsafe(piece.length * 3);
    const bytes = scratch.write(piece, 0, "utf8");
    add(
      deflateRawSync(scratch.subarray(0, bytes), {
        level: LEVEL,
        finishFlush: constants.Z_SYNC_FLUSH,
      }),
    );
  }
  part.push(deflateRawSync(Buffer.alloc(0)));
  parts.push(Buffer.concat(part));
  return parts;
}

/**
 * The value a column holds: JSON text, packed, or (a run's output) the IN_PARTS marker, whose
 * parts `parts` reads.
 */
export function unpackJson<T>(stored: string | Buffer, parts?: () => Buffer[]): T {
  if (typeof stored === "string") return JSON.parse(stored) as T;
  if (stored.equals(IN_PARTS)) {
    if (parts === undefined) throw new Error("stored JSON value is in parts, and none were read");
    return unpackJson(Buffer.concat(parts()));
  }
  if (stored[0] !== DEFLATED_JSON) {
    throw new Error(`stored JSON value has an unknown format (first byte ${stored[0]})`);
  }
  return JSON.parse(inflateRawSync(stored.subarray(1)).toString("utf8")) as T;
}
