/**
 * A long string that grows at its end (an answer's text, delta by delta), held as its JSON text
 * in pieces, so that the JSON text of a value holding it is written piece by piece
 * (json-pieces.ts) without a copy of the whole.
 *
 * V8 keeps a string built by `+=` as a tree of its parts, and flattens it (copies all of it
 * into one new string) the first time it is sliced or serialized after it grew. A stream that
 * rebuilds values frames of a 10 MB answer (frames/codec.ts) would copy the answer once per
 * frame it renders.
 */

/** Strings at least this long are worth holding in pieces. */
export const LONG_TEXT_CHARS = 64 * 1024;

/** Characters JSON.stringify escapes in a string (lone surrogates, quote, backslash, controls). */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds.
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

const isHigh = (unit: number) => unit >= 0xd800 && unit <= 0xdbff;

/**
 * A string held as its JSON text in pieces of about LONG_TEXT_CHARS characters. Each piece is
 * flattened once when it is full, so that it holds only its own characters, not the deltas it
 * was built from. Where it stands for a string in a value, `jsonPieces` writes its pieces as
 * they are; `JSON.stringify` (through `toJSON`) writes the string itself, joined first.
 */
export class LongText {
  /** Full pieces of the JSON text (escaped, without the quotes). */
  private readonly full: string[] = [];
  private fullChars = 0;
  /** The text after them, escaped. */
  private tail = "";
  /**
   * A high surrogate the text ends with, held back unescaped: with a low surrogate at the start
   * of the next delta it is one character, which JSON.stringify leaves as it is, and alone it
   * is escaped (`\udXXX`). Escaping each delta on its own would escape both halves.
   */
  private high = "";
  /** Characters of the string. */
  length = 0;

  constructor(initial = "") {
    this.append(initial);
  }

  append(delta: string): void {
    if (delta === "") return;
    this.length += delta.length;
    let text = this.high === "" ? delta : this.high + delta;
    this.high = "";
    if (isHigh(text.charCodeAt(text.length - 1))) {
      this.high = text.slice(-1);
      text = text.slice(0, -1);
    }
    this.tail += NEEDS_ESCAPE.test(text) ? JSON.stringify(text).slice(1, -1) : text;
    if (this.tail.length >= LONG_TEXT_CHARS) {
      // Reading a character flattens the string: the piece no longer holds the deltas.
      this.tail.charCodeAt(0);
      this.full.push(this.tail);
      this.fullChars += this.tail.length;
      this.tail = "";
    }
  }

  /** Its JSON text in pieces, quotes included (joined: `JSON.stringify` of the string). */
  *jsonPieces(): Generator<string> {
    yield '"';
    yield* this.full;
    if (this.tail !== "") yield this.tail;
    if (this.high !== "") yield JSON.stringify(this.high).slice(1, -1);
    yield '"';
  }

  toString(): string {
    return JSON.parse([...this.jsonPieces()].join("")) as string;
  }

  toJSON(): string {
    return this.toString();
  }
}
