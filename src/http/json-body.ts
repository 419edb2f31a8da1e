import { isUtf8 } from "node:buffer";
import type { FastifyInstance } from "fastify";

class BadJson extends Error {
  readonly statusCode = 400;
}

class OverLimit extends Error {
  readonly statusCode = 422;
}

export interface JsonLimits {
  /** Deepest nesting of objects and arrays. */
  maxJsonDepth: number;
  /** Longest string, value or key, in characters. */
  maxStringLength: number;
}

/** Keys that would reach an object's prototype if some later code merged the body with `=`. */
function rejectPrototypeKeys(key: string, value: unknown): unknown {
  if (key === "__proto__") throw new BadJson('body contains the forbidden key "__proto__"');
  if (
    key === "constructor" &&
    typeof value === "object" &&
    value !== null &&
    "prototype" in value
  ) {
    throw new BadJson('body contains a forbidden "constructor.prototype" key');
  }
  return value;
}

const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** True when `text` holds more than `limit` opening brackets (counted natively, stops early). */
function moreBracketsThan(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of ["{", "["]) {
    let at = text.indexOf(bracket);
    while (at !== -1) {
      if (++count > limit) return true;
      at = text.indexOf(bracket, at + 1);
    }
  }
  return false;
}

/**
 * One pass over the raw text: nesting depth and string lengths, brackets inside strings
 * ignored. Runs before `JSON.parse`, so a hostile body never reaches the recursive code that
 * follows (Ajv, JSON.stringify) nested deeper than the limit.
 */
function checkShape(text: string, limits: JsonLimits): void {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const start = i;
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
      // Escapes make the raw form longer than the string; decode only a suspect one.
      if (
        i - start - 1 > limits.maxStringLength &&
        decodedLength(text.slice(start, i + 1)) > limits.maxStringLength
      ) {
        throw new OverLimit(
          `body holds a string longer than ${limits.maxStringLength} characters (server.limits.maxStringLength)`,
        );
      }
    } else if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (++depth > limits.maxJsonDepth) {
        throw new OverLimit(
          `body is nested deeper than ${limits.maxJsonDepth} levels (server.limits.maxJsonDepth)`,
        );
      }
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      depth--;
    }
  }
}

function decodedLength(literal: string): number {
  try {
    return (JSON.parse(literal) as string).length;
  } catch {
    // Malformed: JSON.parse of the whole body reports it.
    return 0;
  }
}

/**
 * Our JSON body parser: clear messages for empty, malformed and non-UTF-8 bodies,
 * prototype-pollution keys refused, and depth and string length bounded. The costly checks
 * only run when the raw body could break them: the shape scan when the body is longer than the
 * longest allowed string or holds more brackets than the depth allows, the reviver (slow) when
 * the body mentions a prototype key.
 */
export function registerJsonBodyParser(
  app: FastifyInstance,
  limits: JsonLimits,
  /**
   * `allowEmpty`: an empty body is no body (CopilotKit's stop sends a JSON type and nothing).
   * `contentType`: the media type parsed (default `application/json`; A2A adds its own).
   */
  options: { allowEmpty?: boolean; contentType?: string } = {},
): void {
  const contentType = options.contentType ?? "application/json";
  if (app.hasContentTypeParser(contentType)) app.removeContentTypeParser(contentType);
  app.addContentTypeParser(contentType, { parseAs: "buffer" }, (_request, body, done) => {
    const bytes = body as Buffer;
    // JSON is UTF-8 (RFC 8259); decoding would silently turn bad bytes into U+FFFD.
    if (!isUtf8(bytes)) {
      done(new BadJson("body is not valid UTF-8"), undefined);
      return;
    }
    const text = bytes.toString("utf8");
    if (text.trim() === "") {
      if (options.allowEmpty) done(null, undefined);
      else done(new BadJson("body is empty: send a JSON object"), undefined);
      return;
    }
    try {
      if (text.length > limits.maxStringLength || moreBracketsThan(text, limits.maxJsonDepth)) {
        checkShape(text, limits);
      }
      // A key may be spelt with escapes ("\u005f_proto__"), so any escape is suspect too.
      const suspicious =
        text.includes("__proto__") || text.includes("constructor") || text.includes("\\u");
      done(null, suspicious ? JSON.parse(text, rejectPrototypeKeys) : JSON.parse(text));
    } catch (err) {
      if (err instanceof BadJson || err instanceof OverLimit) done(err, undefined);
      else done(new BadJson(`body is not valid JSON: ${(err as Error).message}`), undefined);
    }
  });
}
