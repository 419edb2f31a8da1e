import { LongText } from "./long-text.js";

/**
 * JSON text of a large value, produced in pieces instead of one string.
 *
 * `JSON.stringify` of a run's 10 MB output makes a 10 MB string, and each consumer then makes
 * its own copy of it: the socket's UTF-8 bytes, SQLite's bound copy and its record. Produced in
 * pieces of about 64 K characters, the text is never whole in memory: each piece is encoded,
 * compressed or written, and dropped. Joined, the pieces are exactly `JSON.stringify(value)`
 * (a LongText in it is written as the string it stands for).
 */

/** Characters per piece (a piece can be longer: one short value is never split). */
export const PIECE_CHARS = 64 * 1024;

/**
 * `JSON.stringify(value)`, for a value that may hold LongText: a short value is stringified
 * at once, one that holds LongText is joined from its pieces (its text whole, once).
 */
export function jsonText(value: unknown, holdsLongText: boolean): string {
  return holdsLongText ? [...jsonPieces(value)].join("") : JSON.stringify(value);
}

/**
 * True when the value's JSON text is certainly at least `chars` long, judged from the lengths
 * of its strings and keys: a walk that stops as soon as it knows, without building any text.
 * Small values (nearly every answer) cost a walk over a few fields.
 */
export function jsonAtLeast(value: unknown, chars: number): boolean {
  let budget = chars;
  const visit = (node: unknown, depth: number): boolean => {
    if (typeof node === "string") {
      budget -= node.length + 2;
      return budget <= 0;
    }
    if (node instanceof LongText) {
      budget -= node.length + 2;
      return budget <= 0;
    }
    if (node === null || typeof node !== "object" || depth > 1000) return false;
    if (typeof (node as { toJSON?: unknown }).toJSON === "function") return false;
    if (Array.isArray(node)) {
      for (const item of node) if (visit(item, depth + 1)) return true;
      budget -= node.length + 1;
      return budget <= 0;
    }
    for (const key of Object.keys(node)) {
      const item = (node as Record<string, unknown>)[key];
      if (omitted(item)) continue;
      budget -= key.length + 3;
      if (visit(item, depth + 1)) return true;
    }
    return budget <= 0;
  };
  return visit(value, 0);
}

/**
 * The JSON text of `value` in pieces of about `pieceChars` characters; their concatenation is
 * exactly `JSON.stringify(value)` (an undefined value gives "null", as a JSON column stores it).
 * A cycle throws a TypeError, as `JSON.stringify` does.
 */
export function* jsonPieces(value: unknown, pieceChars = PIECE_CHARS): Generator<string> {
  const out = new PieceWriter(pieceChars);
  yield* writeValue(out, resolve(value, ""), new Set());
  if (out.text.length > 0) yield out.text;
}

/** Total UTF-8 bytes of the pieces. */
export function jsonByteLength(value: unknown): number {
  let bytes = 0;
  for (const piece of jsonPieces(value)) bytes += Buffer.byteLength(piece, "utf8");
  return bytes;
}

class PieceWriter {
  text = "";

  constructor(readonly size: number) {}

  *add(text: string): Generator<string> {
    this.text += text;
    if (this.text.length >= this.size) {
      const piece = this.text;
      this.text = "";
      yield piece;
    }
  }
}

/**
 * The value as JSON.stringify sees it: after its toJSON, called once with its key. LongText is
 * kept as it is: its pieces are written instead (see writeValue).
 */
function resolve(value: unknown, key: string): unknown {
  if (value !== null && typeof value === "object" && !(value instanceof LongText)) {
    const toJSON = (value as { toJSON?: unknown }).toJSON;
    if (typeof toJSON === "function") return (toJSON as (key: string) => unknown).call(value, key);
  }
  return value;
}

/** What `JSON.stringify` leaves out of an object (and writes as null in an array). */
function omitted(value: unknown): boolean {
  return value === undefined || typeof value === "function" || typeof value === "symbol";
}

function* writeValue(out: PieceWriter, value: unknown, ancestors: Set<object>): Generator<string> {
  if (typeof value === "string") {
    if (value.length < out.size) yield* out.add(JSON.stringify(value));
    else yield* writeLongString(out, value);
    return;
  }
  if (value instanceof LongText) {
    for (const piece of value.jsonPieces()) yield* out.add(piece);
    return;
  }
  if (value === null || typeof value !== "object" || isBoxedPrimitive(value)) {
    // Numbers, booleans, null, boxed primitives; undefined at the top is stored as null.
    yield* out.add(JSON.stringify(value) ?? "null");
    return;
  }
  if (ancestors.has(value)) throw new TypeError("Converting circular structure to JSON");
  ancestors.add(value);
  if (Array.isArray(value)) {
    yield* out.add("[");
    for (let i = 0; i < value.length; i++) {
      if (i > 0) yield* out.add(",");
      const item = resolve(value[i], String(i));
      if (omitted(item)) yield* out.add("null");
      else yield* writeValue(out, item, ancestors);
    }
    yield* out.add("]");
  } else {
    yield* out.add("{");
    let first = true;
    for (const name of Object.keys(value)) {
      const item = resolve((value as Record<string, unknown>)[name], name);
      if (omitted(item)) continue;
      yield* out.add(`${first ? "" : ","}${JSON.stringify(name)}:`);
      first = false;
      yield* writeValue(out, item, ancestors);
    }
    yield* out.add("}");
  }
  ancestors.delete(value);
}

/**
 * A String, Number, Boolean or BigInt object, which JSON.stringify writes as its primitive.
 * Every other object is walked by its own enumerable keys, as JSON.stringify walks it (its
 * toJSON already called once: JSON.stringify of a Date returned by a toJSON would call the
 * Date's toJSON again).
 */
function isBoxedPrimitive(value: object): boolean {
  return (
    value instanceof String ||
    value instanceof Number ||
    value instanceof Boolean ||
    value instanceof BigInt
  );
}

/** A long string, escaped slice by slice; a slice never ends between a surrogate pair's halves. */
function* writeLongString(out: PieceWriter, text: string): Generator<string> {
  yield* out.add('"');
  for (let start = 0; start < text.length; ) {
    let end = Math.min(start + out.size, text.length);
    if (isHigh(text.charCodeAt(end - 1)) && isLow(text.charCodeAt(end))) {
      end += end - 1 > start ? -1 : 1;
    }
    yield* out.add(JSON.stringify(text.slice(start, end)).slice(1, -1));
    start = end;
  }
  yield* out.add('"');
}

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number) => unit >= 0xdc00 && unit <= 0xdfff;
