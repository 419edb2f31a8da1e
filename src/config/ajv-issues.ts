import type { ErrorObject } from "ajv";
import type { ConfigIssue } from "./errors.js";
import type { KeyPath, LoadedConfig } from "./schema.js";

export interface RenderOptions {
  /** Prepended to every error's path (e.g. the key of a user schema inside the config). */
  prefix?: KeyPath;
  locate: LoadedConfig["locate"];
  /** Add a "quote it" hint when YAML read a number or boolean where a string was wanted. */
  yaml?: boolean;
}

type SchemaWithHints = {
  "x-expected"?: string;
  "x-moved"?: Record<string, string>;
  properties?: Record<string, unknown>;
};

/**
 * Turns Ajv errors (compiled with `allErrors` and `verbose`) into readable issues:
 * `if` noise is dropped, `anyOf` branches collapse to the one branch whose type matched (or to
 * one "must be …" line), and each message names the key path and shows the offending value.
 */
export function ajvIssues(
  errors: readonly ErrorObject[],
  data: unknown,
  options: RenderOptions,
): ConfigIssue[] {
  const prefix = options.prefix ?? [];
  const issues: ConfigIssue[] = [];
  const seen = new Set<string>();
  for (const error of pruneAlternatives(errors.filter((e) => e.keyword !== "if"))) {
    const base = [...prefix, ...toKeyPath(error.instancePath, data)];
    const rendered = render(error, options.yaml ?? false);
    const path = rendered.child === undefined ? base : [...base, rendered.child];
    const key = `${path.join("\u0000")}\u0001${rendered.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const position =
      rendered.child === undefined || error.keyword === "required"
        ? options.locate(base)
        : options.locate(path, "key");
    issues.push({ path, message: rendered.message, position });
  }
  return issues;
}

function pruneAlternatives(errors: ErrorObject[]): ErrorObject[] {
  const dropped = new Set<ErrorObject>();
  const alternatives = errors
    .filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf")
    .sort((a, b) => a.schemaPath.length - b.schemaPath.length);
  for (const alt of alternatives) {
    if (dropped.has(alt)) continue;
    const prefix = `${alt.schemaPath}/`;
    const branches = new Map<string, ErrorObject[]>();
    for (const child of errors) {
      if (child === alt || dropped.has(child) || !child.schemaPath.startsWith(prefix)) continue;
      // Several values may fail the same anyOf: keep only this value's branch errors.
      const inside =
        child.instancePath === alt.instancePath ||
        child.instancePath.startsWith(`${alt.instancePath}/`);
      if (!inside) continue;
      const branch = child.schemaPath.slice(prefix.length).split("/")[0]!;
      branches.set(branch, [...(branches.get(branch) ?? []), child]);
    }
    if (branches.size === 0) continue;
    const typeMatched = [...branches.values()].filter(
      (errs) => !errs.some((c) => c.instancePath === alt.instancePath && c.keyword === "type"),
    );
    if (typeMatched.length === 1) {
      // Exactly one alternative had the right shape: its errors are the useful ones.
      dropped.add(alt);
      for (const errs of branches.values()) {
        if (errs !== typeMatched[0]) for (const e of errs) dropped.add(e);
      }
    } else {
      for (const errs of branches.values()) for (const e of errs) dropped.add(e);
    }
  }
  return errors.filter((e) => !dropped.has(e));
}

function render(error: ErrorObject, yaml: boolean): { message: string; child?: string } {
  const params = error.params as Record<string, unknown>;
  const parent = (error.parentSchema ?? {}) as SchemaWithHints;
  switch (error.keyword) {
    case "required":
      return { message: "is required", child: String(params.missingProperty) };
    case "additionalProperties": {
      const key = String(params.additionalProperty);
      return { message: `is not a known key${knownKeysHint(key, parent)}`, child: key };
    }
    case "minItems":
      return {
        message:
          params.limit === 1 ? "must not be empty" : `must have at least ${params.limit} items`,
      };
  }
  const got = ` (got ${preview(error.data)}${yaml ? quoteHint(error) : ""})`;
  const expected = parent["x-expected"];
  if (expected !== undefined && error.keyword !== "enum" && error.keyword !== "const") {
    return { message: `must be ${expected}${got}` };
  }
  switch (error.keyword) {
    case "type":
      return { message: `must be ${withArticle(String(params.type))}${got}` };
    case "enum":
      return {
        message: `must be one of ${(params.allowedValues as unknown[]).map(show).join(", ")}${got}`,
      };
    case "const":
      return { message: `must be ${show(params.allowedValue)}${got}` };
    case "minLength":
      return { message: params.limit === 1 ? "must not be empty" : `${error.message}${got}` };
    case "anyOf":
    case "oneOf":
      return { message: `must be one of the allowed forms${got}` };
    default:
      return { message: `${error.message ?? "is invalid"}${got}` };
  }
}

function knownKeysHint(key: string, parent: SchemaWithHints): string {
  const movedTo = parent["x-moved"]?.[key];
  if (movedTo !== undefined) return ` here any more: it moved to ${movedTo}`;
  const known = Object.keys(parent.properties ?? {}).filter((k) => k !== "type");
  const close = known
    .map((k) => ({ k, d: distance(k.toLowerCase(), key.toLowerCase()) }))
    .filter(({ d }) => d <= Math.max(1, Math.floor(key.length / 3)))
    .sort((a, b) => a.d - b.d)[0];
  if (close) return ` (did you mean "${close.k}"?)`;
  return known.length > 0 ? ` (known keys: ${known.join(", ")})` : "";
}

function quoteHint(error: ErrorObject): string {
  const wantsString =
    (error.keyword === "type" && (error.params as { type?: unknown }).type === "string") ||
    (error.parentSchema as { type?: unknown } | undefined)?.type === "string";
  const scalar = typeof error.data === "number" || typeof error.data === "boolean";
  return wantsString && scalar ? "; quote it to make it a string" : "";
}

function withArticle(type: string): string {
  if (type === "null") return "null";
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function show(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function preview(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** JSON pointer → key path; segments that index an array become numbers. */
export function toKeyPath(pointer: string, data: unknown): (string | number)[] {
  if (pointer === "") return [];
  const path: (string | number)[] = [];
  let node = data;
  for (const raw of pointer.slice(1).split("/")) {
    const segment = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (Array.isArray(node)) {
      path.push(Number(segment));
      node = node[Number(segment)];
    } else {
      path.push(segment);
      node =
        node !== null && typeof node === "object"
          ? (node as Record<string, unknown>)[segment]
          : undefined;
    }
  }
  return path;
}

function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = row[0]!;
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = row[j]!;
      row[j] = Math.min(row[j]! + 1, row[j - 1]! + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return row[b.length]!;
}
