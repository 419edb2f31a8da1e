/**
 * JSON helpers for the PostgreSQL repositories: exact round-trip text for `json` columns, and the
 * per-entry digests that make containment search an indexable `text[] @>` (see 001-initial.sql).
 *
 * `canonicalJson` must agree with the SQLite backend's (src/storage/sqlite/json.ts) so both
 * backends call the same values deep-equal.
 */
import { createHash } from "node:crypto";
import { invalid } from "../../errors.js";

export function assertObject(
  value: unknown,
  what: string,
): asserts value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw invalid(`${what} must be a JSON object`);
  }
}

/** Serializes a value for a `json` column; `undefined` is stored as `null`. */
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

/**
 * One digest per top-level entry of an object: SHA-256 (base64url) of the key as a JSON string,
 * a colon, and the value's canonical JSON. A JSON string has no unescaped quote inside, so the
 * text is unambiguous, and SHA-256 makes an accidental (or crafted) equal digest impractical.
 * Anything but an object has no entries: it matches only the empty filter.
 */
export function entryDigests(value: unknown): string[] {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return [];
  const record = value as Record<string, unknown>;
  return Object.keys(record).map((key) =>
    createHash("sha256")
      .update(`${JSON.stringify(key)}:${canonicalJson(record[key])}`)
      .digest("base64url"),
  );
}
