/**
 * JSON helpers both storage backends share: exact round-trip text for JSON columns, and one
 * canonical form (object keys sorted) so that both call the same values deep-equal.
 */
import { invalid } from "../util/errors.js";

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
