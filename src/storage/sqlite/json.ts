/**
 * JSON helpers shared by the SQLite repositories: exact round-trip text for JSON columns and a
 * canonical form (object keys sorted) so that "deep-equal" becomes string equality.
 */

import { invalid } from "../../errors.js";

export function assertObject(
  value: unknown,
  what: string,
): asserts value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalid(`${what} must be a JSON object`);
  }
}

/** Serializes a value for a JSON column; `undefined` is stored as `null`. */
export function toJson(value: unknown): string {
  return JSON.stringify(value) ?? "null";
}

export function fromJson<T>(text: string): T {
  return JSON.parse(text) as T;
}

/**
 * Canonical JSON text: object keys sorted, no whitespace. Two JSON values are deep-equal exactly
 * when their canonical texts are equal. Built as a string (never through an object) so keys such
 * as `__proto__` stay ordinary data.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || value === undefined) return "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (typeof value === "object") {
    const keys = Object.keys(value).sort();
    const parts = keys.map(
      (key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`,
    );
    return `{${parts.join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The canonical form of each top-level entry of a filter object, computed once per query. */
export function canonicalEntries(filter: Record<string, unknown>): [string, string][] {
  return Object.keys(filter).map((key) => [key, canonicalJson(filter[key])]);
}

/**
 * True when `doc` (JSON text) is an object holding every key of the needle with a deep-equal
 * value. `needle` is JSON text of `[key, canonicalValue][]` (see `canonicalEntries`).
 */
export function makeContainsFunction(): (doc: string | null, needle: string) => number {
  let lastNeedleText = "";
  let lastNeedle: [string, string][] = [];
  return (doc, needleText) => {
    if (needleText !== lastNeedleText) {
      lastNeedle = JSON.parse(needleText) as [string, string][];
      lastNeedleText = needleText;
    }
    if (doc === null) return 0;
    const parsed: unknown = JSON.parse(doc);
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) return 0;
    for (const [key, canonical] of lastNeedle) {
      if (!Object.hasOwn(parsed, key)) return 0;
      if (canonicalJson((parsed as Record<string, unknown>)[key]) !== canonical) return 0;
    }
    return 1;
  };
}
