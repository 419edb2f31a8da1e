/**
 * How user schemas are compiled: JSON Schema 2020-12, unknown keywords (OpenAPI's) ignored, the
 * first error only, data never coerced or defaulted. Also used for the schemas agents send at
 * run time (an interrupt's `responseSchema`). A module of its own, importing nothing, because
 * `npm run generate` reads it to precompile the meta-schema check (user-schema-validator.js).
 */
export const USER_SCHEMA_AJV_OPTIONS = {
  strict: false,
  allErrors: false,
  verbose: true,
  coerceTypes: false,
  useDefaults: false,
  removeAdditional: false,
  addUsedSchema: false,
  logger: false,
} as const;
