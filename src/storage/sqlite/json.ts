/**
 * JSON helpers shared by the SQLite repositories: exact round-trip text for JSON columns and a
 * canonical form (object keys sorted) so that "deep-equal" becomes string equality.
 */

import { canonicalJson } from "../json.js";
import { unpackJson } from "./packed-json.js";

export { assertObject, canonicalJson, toJson } from "../json.js";

export function fromJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

/** The canonical form of each top-level entry of a filter object, computed once per query. */
export function canonicalEntries(filter: Record<string, unknown>): [string, string][] {
  return Object.keys(filter).map((key) => [key, canonicalJson(filter[key])]);
}

/**
 * True when `doc` (JSON text) is an object holding every key of the needle with a deep-equal
 * value. `needle` is JSON text of `[key, canonicalValue][]` (see `canonicalEntries`).
 */
export function makeContainsFunction(): (doc: string | Buffer | null, needle: string) => number {
  let lastNeedleText = "";
  let lastNeedle: [string, string][] = [];
  return (doc, needleText) => {
    if (needleText !== lastNeedleText) {
      lastNeedle = JSON.parse(needleText) as [string, string][];
      lastNeedleText = needleText;
    }
    if (doc === null) return 0;
    // A thread's values are JSON text, or packed when long (packed-json.ts).
    const parsed: unknown = unpackJson(doc);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return 0;
    for (const [key, canonical] of lastNeedle) {
      if (!Object.hasOwn(parsed, key)) return 0;
      if (canonicalJson((parsed as Record<string, unknown>)[key]) !== canonical) return 0;
    }
    return 1;
  };
}
