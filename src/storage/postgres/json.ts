/**
 * JSON helpers for the PostgreSQL repositories: exact round-trip text for `json` columns, and the
 * per-entry digests that make containment search an indexable `text[] @>` (see 001-initial.sql).
 *
 * `canonicalJson` is shared with the SQLite backend (src/storage/json.ts), so both backends
 * call the same values deep-equal.
 */
import { createHash } from "node:crypto";
import { canonicalJson } from "../json.js";

export { assertObject, canonicalJson, toJson } from "../json.js";

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
