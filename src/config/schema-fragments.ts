/**
 * JSON Schema pieces shared by the config file's schema (schema.ts) and the adapters' option
 * schemas (src/adapters/*-options.ts). Data only: this file imports nothing, so an adapter's
 * options can use it without pulling in the config loader.
 *
 * `x-expected` is our own annotation: a human phrase for what a value must be, used by the
 * loader's error messages where Ajv's own wording would be unhelpful (patterns, `anyOf`).
 */

export const nonNegativeInteger = { type: "integer", minimum: 0 } as const;

export const positiveInteger = { type: "integer", minimum: 1 } as const;

export const envName = {
  type: "string",
  pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
  "x-expected": "an environment variable name (letters, digits, _)",
} as const;

export const httpUrl = {
  type: "string",
  format: "uri",
  pattern: "^https?://",
  "x-expected": "an http:// or https:// URL",
} as const;
