import fc from "fast-check";

/** The sentinel every pollution attempt tries to plant on Object.prototype. */
export const POLLUTION_KEY = "polluted";

/** A request as the fuzzer builds it: everything a hostile client controls. */
export interface HostileRequest {
  /** Path parameter values, before encoding. */
  params: Record<string, string>;
  /** Whether to percent-encode the parameters (raw ones may not even be valid URLs). */
  encode: boolean;
  query: string;
  body: string | Buffer | undefined;
  headers: Record<string, string>;
  /** What was generated, for the failure message. */
  label: string;
}

/**
 * Text at the edges of Unicode and JSON: lone surrogates (no UTF-8 form), the line and paragraph
 * separators (JavaScript line ends JSON allows raw), NUL, emoji (surrogate pairs, joiners), a
 * byte order mark, a noncharacter and a direction override. Anything a client puts in a string.
 */
export const EDGE_TEXT = [
  "\ud800",
  "a\udc00b",
  "\udbff\udfff",
  "\u2028\u2029",
  "\u0000",
  "x\u0000y",
  "😀 👩‍👩‍👧",
  "\ufeff\uffff\u202e",
] as const;

const weird = [
  ...EDGE_TEXT,
  "",
  " ",
  "..",
  "../..",
  ".",
  "%",
  "%00",
  "%2F",
  "%ZZ",
  "null",
  "undefined",
  "NaN",
  "-1",
  "0",
  "1e999",
  "__proto__",
  "constructor",
  "prototype",
  "\u0000",
  "😀",
  "\u202e",
  "a/b",
  "a?b",
  "a#b",
  "<script>",
  "' OR 1=1 --",
  "00000000-0000-0000-0000-000000000000",
  "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
  "x".repeat(101),
  "x".repeat(5000),
];

/**
 * encodeURIComponent, except that a lone surrogate (which it refuses) is written as the three
 * bytes WTF-8 gives it: a percent-encoding that is no UTF-8, as a hostile client may send.
 */
export function encodeAny(text: string): string {
  return text.replace(
    /[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]|[^\ud800-\udfff]+/g,
    (piece) => {
      if (piece.length !== 1 || piece < "\ud800" || piece > "\udfff") {
        return encodeURIComponent(piece);
      }
      const unit = piece.charCodeAt(0);
      return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join("");
    },
  );
}

/** A path parameter: a known id, an unknown UUID, or something that is no id at all. */
export function pathParam(known: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...known) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: fc.constantFrom(...weird) },
    { weight: 2, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
    { weight: 1, arbitrary: fc.uuid().map((id) => id.toUpperCase()) },
  );
}

/** A query string: known keys with hostile values, unknown keys, pollution and broken encoding. */
export function queryString(knownKeys: readonly string[]): fc.Arbitrary<string> {
  const key = fc.oneof(
    fc.constantFrom(...knownKeys, "__proto__", "constructor", "a[b]", "__proto__[polluted]"),
    fc.string({ maxLength: 10 }),
  );
  const value = fc.oneof(
    fc.constantFrom(
      "1",
      "0",
      "-1",
      "1001",
      "true",
      "false",
      "yes",
      "interrupt",
      "rollback",
      "NaN",
      "1e400",
      "",
      "%ZZ",
      "polluted",
      "99999999999999999999",
    ),
    fc.string({ maxLength: 20 }),
    fc.uuid(),
    fc.constantFrom(...EDGE_TEXT),
  );
  const pair = fc
    .tuple(key, value, fc.boolean())
    .map(([k, v, encode]) => (encode ? `${encodeAny(k)}=${encodeAny(v)}` : `${k}=${v}`));
  return fc.oneof(
    { weight: 2, arbitrary: fc.constant("") },
    {
      weight: 5,
      arbitrary: fc.array(pair, { minLength: 1, maxLength: 4 }).map((p) => `?${p.join("&")}`),
    },
    { weight: 1, arbitrary: fc.constantFrom("?", "?&&", "?=", "?==&=", "?%", "?a=%E0%A4%A") },
  );
}

/** A value that tries to reach Object.prototype if anything merged it naively. */
export const pollution = fc.constantFrom<unknown>(
  JSON.parse(`{"__proto__": {"${POLLUTION_KEY}": "yes"}}`),
  { constructor: { prototype: { [POLLUTION_KEY]: "yes" } } },
  JSON.parse(`{"a": {"__proto__": {"${POLLUTION_KEY}": "yes"}}}`),
  { prototype: { [POLLUTION_KEY]: "yes" } },
  { constructor: { [POLLUTION_KEY]: "yes" } },
);

/** Serialises keeping `__proto__` as an own key (JSON.stringify already does). */
const json = (value: unknown) => JSON.stringify(value) ?? "null";

function mutate(template: Record<string, unknown>, keys: readonly string[]) {
  const anyValue = fc.oneof(
    { weight: 3, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
    { weight: 1, arbitrary: pollution },
    {
      weight: 1,
      arbitrary: fc.constantFrom<unknown>(
        null,
        -1,
        1e308,
        Number.MAX_SAFE_INTEGER,
        "",
        [],
        {},
        "x".repeat(2000),
        [null],
        { "": "" },
      ),
    },
    { weight: 1, arbitrary: fc.constantFrom<unknown>(...EDGE_TEXT) },
  );
  const edit = fc.oneof(
    fc.tuple(fc.constant("set" as const), fc.constantFrom(...keys), anyValue),
    fc.tuple(fc.constant("delete" as const), fc.constantFrom(...keys), fc.constant(null)),
    fc.tuple(fc.constant("add" as const), fc.string({ maxLength: 12 }), anyValue),
  );
  return fc.array(edit, { minLength: 1, maxLength: 3 }).map((edits) => {
    const copy: Record<string, unknown> = structuredClone(template);
    for (const [kind, key, value] of edits) {
      if (kind === "delete") delete copy[key];
      else
        Object.defineProperty(copy, key, {
          value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
    }
    return copy;
  });
}

/** Every path to a string (a value or an object key) inside `value`. */
function stringPaths(value: unknown, at: (string | number)[] = []): (string | number)[][] {
  if (typeof value === "string") return [at];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringPaths(item, [...at, i]));
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => [
      [...at, { key } as unknown as string],
      ...stringPaths(item, [...at, key]),
    ]);
  }
  return [];
}

/** `template` with one string (or one key) anywhere inside it replaced by edge text. */
function edgeTextIn(template: Record<string, unknown>): fc.Arbitrary<string> {
  const paths = stringPaths(template);
  if (paths.length === 0) return fc.constant(json(template));
  return fc.tuple(fc.constantFrom(...paths), fc.constantFrom(...EDGE_TEXT)).map(([path, edge]) => {
    const copy = structuredClone(template) as Record<string, unknown>;
    let parent: Record<string | number, unknown> = copy;
    for (const step of path.slice(0, -1)) parent = parent[step as string] as typeof parent;
    const last = path.at(-1)!;
    if (typeof last === "object") {
      const { key } = last as { key: string };
      const value = parent[key];
      delete parent[key];
      Object.defineProperty(parent, edge, {
        value,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      parent[last] = typeof parent[last] === "string" ? `${parent[last]}${edge}` : edge;
    }
    return json(copy);
  });
}

function nested(depth: number, leaf: unknown): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? { a: value } : [value];
  return value;
}

export interface BodyOptions {
  /** A valid body for the endpoint, to mutate. */
  template: Record<string, unknown>;
  /** Keys worth mutating (the template's and a few more). */
  keys: readonly string[];
  maxBodyBytes: number;
  maxStringLength: number;
}

/** A body: mutated valid ones, random JSON, broken JSON, hostile shapes, bad bytes. */
export function body(options: BodyOptions): fc.Arbitrary<string | Buffer | undefined> {
  const { template, keys } = options;
  const valid = json(template);
  return fc.oneof(
    { weight: 6, arbitrary: mutate(template, keys).map(json) },
    { weight: 2, arbitrary: edgeTextIn(template) },
    { weight: 2, arbitrary: fc.jsonValue({ maxDepth: 4 }).map(json) },
    { weight: 1, arbitrary: fc.object({ maxDepth: 3 }).map(json) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.nat({ max: valid.length }), fc.string({ maxLength: 5 }))
        .map(([cut, junk]) => valid.slice(0, cut) + junk),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        "",
        " ",
        "{",
        "}",
        "[",
        "nul",
        "{'a': 1}",
        '{"a":1,}',
        '{"a" 1}',
        "\u0000",
        "{}{}",
        '"\\ud800"',
        "NaN",
        "Infinity",
        '{"a":1e999999}',
        '{"__proto__":{"polluted":"yes"}}',
        '{"\\u005f_proto__":{"polluted":"yes"}}',
        '{"metadata":{"constr\\u0075ctor":{"prototype":{"polluted":"yes"}}}}',
      ),
    },
    {
      weight: 2,
      arbitrary: pollution.map((p) =>
        json({ ...template, metadata: p, input: { state: p }, values: p }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 60, max: 3000 })
        .map((depth) => json({ ...template, metadata: nested(depth, 1) })),
    },
    {
      weight: 1,
      arbitrary: fc
        .integer({ min: 100, max: 200_000 })
        .map((n) => `${"[".repeat(n)}${"]".repeat(n)}`),
    },
    {
      weight: 1,
      arbitrary: fc.constant(
        json({ ...template, metadata: { long: "y".repeat(options.maxStringLength + 1) } }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc.constant(
        json({ ...template, metadata: { big: "z".repeat(options.maxBodyBytes) } }),
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .uint8Array({ minLength: 1, maxLength: 64 })
        .map((bytes) =>
          Buffer.concat([
            Buffer.from('{"metadata":{"a":"'),
            Buffer.from([0xc3, 0x28, 0xff, ...bytes]),
            Buffer.from('"}}'),
          ]),
        ),
    },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

/** Content types: mostly JSON (so bodies reach the parser), and everything else. */
export const contentType = fc.oneof(
  { weight: 10, arbitrary: fc.constant("application/json") },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8",
      "APPLICATION/JSON",
      "application/json; charset=latin1",
      "text/plain",
      "text/html",
      "application/xml",
      "application/x-www-form-urlencoded",
      "multipart/form-data; boundary=x",
      "application/jsonx",
      "application/vnd.api+json",
      "application/octet-stream",
      "*/*",
      ";",
      "",
    ),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 30 }) },
);

/** Headers the server reads: Accept, Last-Event-ID, and the API key headers. */
export function headers(
  goodKey: string,
  restrictedKey: string,
): fc.Arbitrary<Record<string, string>> {
  const auth = fc.oneof(
    { weight: 12, arbitrary: fc.constant({ authorization: `Bearer ${goodKey}` }) },
    { weight: 3, arbitrary: fc.constant({ "x-api-key": restrictedKey }) },
    {
      weight: 3,
      arbitrary: fc.oneof(
        fc.constant({}),
        fc.string({ maxLength: 80 }).map((s) => ({ authorization: s })),
        fc.string({ maxLength: 80 }).map((s) => ({ "x-api-key": s })),
        fc.constant({ authorization: "Bearer" }),
        fc.constant({ authorization: `Basic ${Buffer.from("a:b").toString("base64")}` }),
        fc.constant({ authorization: `Bearer ${goodKey}x` }),
        fc.constant({ authorization: `Bearer ${goodKey.slice(1)}` }),
      ),
    },
  );
  const extra = fc.record(
    {
      accept: fc.oneof(
        fc.constantFrom(
          "application/json",
          "text/event-stream",
          "application/vnd.ag-ui.event+proto",
          "application/vnd.ag-ui.event+proto;q=0",
          "*/*",
          "",
        ),
        fc.string({ maxLength: 40 }),
      ),
      "last-event-id": fc.oneof(
        fc.constantFrom("0", "1", "-1", "1.5", "abc", "99999999999999999999", ""),
        fc.string({ maxLength: 10 }),
      ),
    },
    { requiredKeys: [] },
  );
  // Header values may not hold line breaks or other control characters: a client could not send them.
  const printable = (value: string) => [...value].filter((c) => c >= " " && c <= "~").join("");
  const clean = (record: Record<string, string>) =>
    Object.fromEntries(Object.entries(record).map(([k, v]) => [k, printable(v)]));
  return fc.tuple(auth, extra).map(([a, e]) => clean({ ...a, ...e }));
}
