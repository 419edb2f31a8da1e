import { describe, expect, it } from "vitest";
import { jsonAtLeast, jsonByteLength, jsonPieces } from "../src/util/json-pieces.js";
import { LongText } from "../src/util/long-text.js";

/** A small deterministic PRNG, so a failure can be replayed. */
function prng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// Characters that escape, that are one to four UTF-8 bytes, and surrogate halves.
const ALPHABET = [
  "a",
  "é",
  "€",
  "😀",
  '"',
  "\\",
  "\n",
  "\u0001",
  "\u2028",
  "\ud83d",
  "\ude00",
  " ",
];

function randomString(rand: () => number, max: number): string {
  let text = "";
  const length = Math.floor(rand() * max);
  for (let i = 0; i < length; i++) text += ALPHABET[Math.floor(rand() * ALPHABET.length)];
  return text;
}

function randomValue(rand: () => number, depth: number): unknown {
  const pick = Math.floor(rand() * (depth > 3 ? 6 : 9));
  switch (pick) {
    case 0:
      return null;
    case 1:
      return rand() < 0.5;
    case 2:
      return [0, -1.5, 1e21, Number.NaN, Number.POSITIVE_INFINITY, -0][Math.floor(rand() * 6)];
    case 3:
    case 4:
      return randomString(rand, 40);
    case 5:
      return [undefined, () => 1, Symbol("s")][Math.floor(rand() * 3)];
    case 6:
      return Array.from({ length: Math.floor(rand() * 5) }, () => randomValue(rand, depth + 1));
    default: {
      const object: Record<string, unknown> = {};
      for (let i = Math.floor(rand() * 5); i > 0; i--) {
        object[randomString(rand, 6)] = randomValue(rand, depth + 1);
      }
      return object;
    }
  }
}

const joined = (value: unknown, size?: number) => [...jsonPieces(value, size)].join("");

describe("jsonPieces", () => {
  it("joins to exactly JSON.stringify's text, whatever the piece size", () => {
    for (let seed = 1; seed <= 400; seed++) {
      const rand = prng(seed);
      const value = randomValue(rand, 0);
      const expected = JSON.stringify(value) ?? "null";
      for (const size of [1, 2, 3, 7, 64, 65536]) {
        expect(joined(value, size), `seed ${seed}, piece size ${size}`).toBe(expected);
      }
    }
  });

  it("splits a long string into pieces of about the piece size, never inside a surrogate pair", () => {
    const text = `${"😀".repeat(10)}a${"😀".repeat(10)}`;
    const pieces = [...jsonPieces({ text }, 4)];
    expect(pieces.join("")).toBe(JSON.stringify({ text }));
    expect(pieces.length).toBeGreaterThan(5);
    // Each piece alone is well-formed UTF-16: no lone halves that would turn into U+FFFD.
    for (const piece of pieces) expect(Buffer.from(piece, "utf8").toString("utf8")).toBe(piece);
  });

  it("calls toJSON once, with its key, as JSON.stringify does", () => {
    const keys: string[] = [];
    const seen = <T>(key: string, result: T): T => {
      keys.push(key);
      return result;
    };
    const value = {
      when: new Date(0),
      custom: { toJSON: (key: string) => seen(key, { nested: { toJSON: () => "once" } }) },
      list: [{ toJSON: (key: string) => seen(key, undefined) }],
      gone: { toJSON: () => undefined },
      boxed: [new String("s"), new Number(2), new Boolean(false)],
    };
    expect(joined(value, 3)).toBe(JSON.stringify(value));
    expect(keys).toEqual(["custom", "0", "custom", "0"]);
    // What a toJSON returns is not asked for its own toJSON, and any object is walked by its keys.
    class Point {
      constructor(
        readonly x: number,
        readonly y: number,
      ) {}
    }
    const odd = {
      date: { toJSON: () => new Date(0) },
      point: new Point(1, 2),
      map: new Map([["k", "v"]]),
      typed: new Uint8Array([1, 2]),
    };
    expect(joined(odd, 2)).toBe(JSON.stringify(odd));
  });

  it("stores an undefined value as null, and throws on a cycle as JSON.stringify does", () => {
    expect(joined(undefined)).toBe("null");
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = { back: cyclic };
    expect(() => joined(cyclic)).toThrow(TypeError);
    // A value seen twice but not inside itself is no cycle.
    const shared = { x: 1 };
    expect(joined({ a: shared, b: [shared, shared] }, 2)).toBe(
      JSON.stringify({ a: shared, b: [shared, shared] }),
    );
  });

  it("counts UTF-8 bytes as Buffer.byteLength does", () => {
    const value = { text: `é€😀"\n${"x".repeat(70_000)}` };
    expect(jsonByteLength(value)).toBe(Buffer.byteLength(JSON.stringify(value)));
  });
});

describe("jsonAtLeast", () => {
  it("is true only when the text is at least that long", () => {
    for (let seed = 1; seed <= 200; seed++) {
      const value = randomValue(prng(seed), 0);
      const length = (JSON.stringify(value) ?? "null").length;
      // Never a false positive: when it says long, the text is long.
      if (jsonAtLeast(value, 20)) expect(length, `seed ${seed}`).toBeGreaterThanOrEqual(20);
    }
    expect(jsonAtLeast({ messages: [{ content: "x".repeat(70_000) }] }, 65_536)).toBe(true);
    expect(jsonAtLeast({ messages: [{ content: "x".repeat(1_000) }] }, 65_536)).toBe(false);
    expect(
      jsonAtLeast(
        Array.from({ length: 40_000 }, () => "ab"),
        65_536,
      ),
    ).toBe(true);
    // Keys JSON.stringify leaves out count for nothing.
    expect(jsonAtLeast({ ["a".repeat(30)]: undefined, ["b".repeat(30)]: () => 1 }, 10)).toBe(false);
  });
});

describe("LongText", () => {
  it("is written as the string its deltas make, whatever the deltas split", () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rand = prng(seed);
      const deltas = Array.from({ length: Math.floor(rand() * 30) }, () => randomString(rand, 12));
      // Surrogate pairs split between two deltas, and lone halves at either end.
      if (seed % 3 === 0) deltas.push("a\ud83d", "\ude00b", "\ud83d");
      const text = new LongText(deltas[0] ?? "");
      for (const delta of deltas.slice(1)) text.append(delta);
      const whole = deltas.join("");
      const value = { role: "assistant", content: text, after: [text] };
      const expected = JSON.stringify({ role: "assistant", content: whole, after: [whole] });
      expect(joined(value, 3), `seed ${seed}`).toBe(expected);
      expect(JSON.stringify(value), `seed ${seed}`).toBe(expected);
      expect(text.toString()).toBe(whole);
      expect(text.length).toBe(whole.length);
    }
  });

  it("holds a long text in full pieces and counts toward jsonAtLeast", () => {
    const text = new LongText();
    const delta = `${"word ".repeat(39)}"\n`;
    let whole = "";
    for (let i = 0; i < 2_000; i++) {
      text.append(delta);
      whole += delta;
    }
    const pieces = [...text.jsonPieces()];
    expect(pieces.join("")).toBe(JSON.stringify(whole));
    // Quotes, full pieces of at least 64 K characters each, the rest.
    expect(pieces.length).toBeGreaterThan(4);
    for (const piece of pieces.slice(1, -2)) expect(piece.length).toBeGreaterThanOrEqual(65_536);
    expect(jsonAtLeast({ messages: [{ content: text }] }, 390_000)).toBe(true);
    expect(jsonAtLeast({ messages: [{ content: text }] }, 410_000)).toBe(false);
    expect(jsonAtLeast({ messages: [{ content: new LongText("short") }] }, 100)).toBe(false);
    expect(jsonByteLength({ content: text })).toBe(
      Buffer.byteLength(JSON.stringify({ content: whole })),
    );
  });
});
