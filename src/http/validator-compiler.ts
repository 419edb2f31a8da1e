import { Ajv, type ValidateFunction } from "ajv";
import addFormatsModule from "ajv-formats";
import type { FastifyInstance, FastifySchema } from "fastify";
import { describeErrors, type Validator, validatorById } from "../validation/index.js";
import { jsonAnswer } from "./wire-bytes.js";

// ajv-formats is CommonJS; its default export arrives wrapped under NodeNext.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

/**
 * Bodies are checked by the precompiled validators of the bundled ACP document, looked up by
 * the schema's `$id` ("acp:ThreadCreate"): no coercion, no property removal, no defaults
 * written into the data. Path and query strings are the only coerced parts ("10" → 10); their
 * schemas are small and ours, so compiling them here is cheap and compiles nothing of the
 * bundled documents.
 */
export function registerValidatorCompiler(app: FastifyInstance): void {
  let paramsAjv: Ajv | undefined;
  const compileParams = (schema: object) => {
    paramsAjv ??= paramsCompiler();
    return paramsAjv.compile(schema);
  };
  // Most routes share a few path schemas (`{thread_id}`, `{run_id}`…; at the time of writing 17
  // distinct ones among 72): compiling each once spares megabytes of Ajv code generation.
  const paramsValidators = new Map<string, Validator>();

  app.setValidatorCompiler(({ schema, httpPart }) => {
    if (httpPart === "body") {
      const id = (schema as { $id?: string }).$id;
      const precompiled = id ? validatorById(id) : undefined;
      if (!precompiled) {
        throw new Error(`no precompiled validator for body schema ${id ?? "(without $id)"}`);
      }
      return precompiled;
    }
    const key = JSON.stringify(schema);
    let validate = paramsValidators.get(key);
    if (!validate) {
      validate = compiledOnFirstUse(() => compileParams(schema));
      paramsValidators.set(key, validate);
    }
    return validate;
  });

  // Response schemas document each status (and type the handlers), but Fastify's serializer
  // would write every open `{type: "object"}` (values, metadata, input…) as `{}`. Plain
  // JSON.stringify loses nothing; responses are validated against the spec in tests instead.
  // A long answer is streamed in pieces of the same text (wire-bytes.ts).
  app.setSerializerCompiler(() => jsonAnswer as (data: unknown) => string);
}

/** Fastify calls this with a validation failure; the message names the path and the problem. */
export function schemaErrorFormatter(
  errors: Parameters<typeof describeErrors>[0],
  dataVar: string,
): Error {
  return new Error(describeErrors(errors, dataVar));
}

export type RouteSchema = FastifySchema;

function paramsCompiler(): Ajv {
  const ajv = new Ajv({
    coerceTypes: true,
    useDefaults: true,
    allErrors: false,
    strict: false,
    // Our own schemas, checked by the tests: validating them against the draft-07 meta-schema
    // would compile that (megabytes of garbage at every start) to learn nothing new.
    validateSchema: false,
  });
  addFormats(ajv);
  return ajv;
}

/**
 * A validator compiled when it first validates. Fastify asks for every route's path and query
 * validators as the routes are added, all at start-up; compiled then, they cost some 4 MB of
 * Ajv code generation (garbage) and a few hundred KB of compiled code kept for routes a server
 * may never be asked for. Our schemas are checked by the tests, so compiling later fails no
 * differently.
 */
function compiledOnFirstUse(compile: () => ValidateFunction): Validator {
  let compiled: ValidateFunction | undefined;
  const validate: Validator = (data: unknown, ...rest: unknown[]) => {
    compiled ??= compile();
    const valid = (compiled as (...args: unknown[]) => boolean)(data, ...rest);
    validate.errors = compiled.errors;
    return valid;
  };
  // Fastify reads `schemaEnv` just before validating, and then passes Ajv the data's parent so
  // that coercion may replace the value itself: the same call as with the compiled validator.
  Object.defineProperty(validate, "schemaEnv", {
    get: () => {
      compiled ??= compile();
      return compiled.schemaEnv;
    },
  });
  return validate;
}
