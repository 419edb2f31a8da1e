import { describe, expect, it } from "vitest";
import {
  MAX_RESPONSE_SCHEMA_BYTES,
  MAX_RESPONSE_SCHEMA_DEPTH,
  ResponseSchemas,
} from "../../src/engine/response-schemas.js";

const approved = {
  type: "object",
  required: ["approved"],
  properties: { approved: { type: "boolean" } },
};

function withWarnings() {
  const warnings: string[] = [];
  const schemas = new ResponseSchemas({ warn: (_context, message) => warnings.push(message) });
  return { schemas, warnings };
}

describe("an interrupt's responseSchema", () => {
  it("refuses a payload that breaks it, naming the path", () => {
    const { schemas } = withWarnings();
    const interrupt = { id: "i1", responseSchema: approved };
    expect(schemas.check(interrupt, { approved: "yes" }, "approval")).toBe(
      "approval/approved must be boolean (the interrupt's responseSchema)",
    );
    expect(schemas.check(interrupt, {}, "approval")).toBe(
      "approval/approved is required (the interrupt's responseSchema)",
    );
    expect(schemas.check(interrupt, { approved: true }, "approval")).toBeNull();
  });

  it("checks nothing when the interrupt has no responseSchema", () => {
    const { schemas } = withWarnings();
    expect(schemas.check({ id: "i1" }, { anything: 1 }, "x")).toBeNull();
  });

  it.each([
    ["is not a JSON Schema", { type: "nope" }, /not a valid JSON Schema/],
    [
      "names a remote $ref (never fetched)",
      { $ref: "https://schemas.example/answer.json" },
      /does not compile: can't resolve reference/,
    ],
    [
      "has a pattern that could backtrack exponentially",
      { type: "string", pattern: "^(a+)+$" },
      /could take exponential time/,
    ],
    [
      "is too large",
      { type: "object", description: "x".repeat(MAX_RESPONSE_SCHEMA_BYTES) },
      /larger than 65536 bytes/,
    ],
    ["is nested too deeply", deep(MAX_RESPONSE_SCHEMA_DEPTH + 5), /nested deeper than 32 levels/],
  ])(
    "that %s is not used, with a warning: the payload is left to the descriptor",
    (_what, schema, reason) => {
      const { schemas, warnings } = withWarnings();
      // A string an exponential pattern would take minutes to refuse: it is never run.
      const payload = `${"a".repeat(40)}!`;
      expect(schemas.check({ id: "bad", responseSchema: schema }, payload, "answer")).toBeNull();
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^the responseSchema of interrupt "bad" cannot be used \(/);
      expect(warnings[0]).toMatch(reason);
      expect(warnings[0]).toMatch(/checked against the descriptor only$/);
    },
  );

  it("keeps a safe pattern", () => {
    const { schemas } = withWarnings();
    const interrupt = { id: "p", responseSchema: { type: "string", pattern: "^[a-z]+-\\d+$" } };
    expect(schemas.check(interrupt, "ticket-12", "answer")).toBeNull();
    expect(schemas.check(interrupt, "TICKET", "answer")).toMatch(/^answer must match pattern/);
  });

  it("a schema's $id does not leak into the next one's $ref", () => {
    const { schemas, warnings } = withWarnings();
    schemas.check(
      { id: "a", responseSchema: { $id: "https://x.example/s", type: "string" } },
      "text",
      "a",
    );
    expect(
      schemas.check({ id: "b", responseSchema: { $ref: "https://x.example/s" } }, 42, "b"),
    ).toBeNull();
    expect(warnings.at(-1)).toMatch(/can't resolve reference/);
  });
});

function deep(levels: number): Record<string, unknown> {
  let schema: Record<string, unknown> = { type: "string" };
  for (let i = 0; i < levels; i++) schema = { type: "object", properties: { next: schema } };
  return schema;
}
