import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { describe, expect, it } from "vitest";
import { USER_SCHEMA_AJV_OPTIONS } from "../../src/config/user-schema-options.js";
import { validateUserSchema } from "../../src/validation/config-file.js";

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;

// The registry checks the schemas of a config's `specs` with this precompiled meta-schema
// validator instead of `ajv.validateSchema`: same verdict, same errors.
describe("the precompiled user schema check", () => {
  const ajv = new Ajv2020({ ...USER_SCHEMA_AJV_OPTIONS });
  addFormats(ajv);
  const schemas: Record<string, unknown>[] = [
    { type: "object", properties: { a: { type: "string" } }, required: ["a"] },
    { $schema: "https://json-schema.org/draft/2020-12/schema", type: "integer", minimum: 0 },
    { $defs: { n: { type: "number" } }, properties: { x: { $ref: "#/$defs/n" } } },
    { type: "object", properties: { a: { type: "text" } } },
    { type: "object", required: "a" },
    { minLength: -1 },
    { pattern: 3 },
    { enum: [] },
    { properties: { a: { anyOf: [{ type: "nope" }] } } },
    { prefixItems: {} },
    { "x-openapi": true, nullable: true, type: ["string", "null"] },
  ];

  it.each(schemas.map((schema) => [JSON.stringify(schema), schema]))("%s", (_, schema) => {
    const expected = ajv.validateSchema(schema);
    expect(validateUserSchema(schema)).toBe(expected);
    expect(validateUserSchema.errors ?? null).toEqual(ajv.errors ?? null);
  });
});
