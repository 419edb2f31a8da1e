/**
 * An interrupt's own `responseSchema`: the JSON Schema of the answer the agent asked for
 * (Mastra's suspended tool asks for `{approved: boolean}`). A resume payload is checked against
 * it as well as against the descriptor's `resume_payload`, so a wrong answer is a 422 naming the
 * path rather than a failure inside the agent.
 *
 * The schema comes from the agent, at run time: untrusted input. So it is compiled with the
 * settings of the config's user schemas on an Ajv instance of its own (nothing it names can
 * shadow an agent's configured schemas), after bounds on its size and nesting; a `pattern` that
 * could backtrack exponentially (nested quantifiers, by safe-regex2) is refused rather than run
 * against a client's string; and a remote `$ref` is never fetched. A schema that cannot be used
 * for any of these reasons does not block the resume (the client cannot fix the agent's
 * schema): the payload is checked against the descriptor only, and a warning says why.
 */
import type { ValidateFunction } from "ajv";
import Ajv2020Module from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import safeRegex from "safe-regex2";
import { USER_SCHEMA_AJV_OPTIONS, validationProblem } from "../config/registry.js";

const Ajv2020 = Ajv2020Module.default;
const addFormats = addFormatsModule.default;
type Ajv = InstanceType<typeof Ajv2020>;

/** Larger schemas (as JSON text) are not compiled. */
export const MAX_RESPONSE_SCHEMA_BYTES = 64 * 1024;
/** Deeper nesting of objects and arrays is not compiled. */
export const MAX_RESPONSE_SCHEMA_DEPTH = 32;
/** Compiled schemas kept (most recently used), so each resume does not compile again. */
const CACHE_SIZE = 200;

export interface ResponseSchemaWarning {
  warn(context: Record<string, unknown>, message: string): void;
}

type Compiled = { validate: ValidateFunction } | { unusable: string };

export class ResponseSchemas {
  private ajv: Ajv | undefined;
  private readonly cache = new Map<string, Compiled>();

  constructor(private readonly logger?: ResponseSchemaWarning) {}

  /**
   * Null when `payload` satisfies the interrupt's `responseSchema` (or it has none, or it cannot
   * be used), else one line naming the failing path under `at`.
   */
  check(interrupt: { id?: unknown; responseSchema?: unknown }, payload: unknown, at: string) {
    const schema = interrupt.responseSchema;
    if (typeof schema !== "object" || schema === null || Array.isArray(schema)) return null;
    const compiled = this.compile(schema as Record<string, unknown>);
    if ("unusable" in compiled) {
      this.logger?.warn(
        { interruptId: interrupt.id },
        `the responseSchema of interrupt ${JSON.stringify(interrupt.id)} cannot be used (${compiled.unusable}); the resume payload was checked against the descriptor only`,
      );
      return null;
    }
    const problem = validationProblem(compiled.validate, payload, at);
    return problem && `${problem} (the interrupt's responseSchema)`;
  }

  private compile(schema: Record<string, unknown>): Compiled {
    const depth = nesting(schema, MAX_RESPONSE_SCHEMA_DEPTH);
    if (depth > MAX_RESPONSE_SCHEMA_DEPTH) {
      return { unusable: `nested deeper than ${MAX_RESPONSE_SCHEMA_DEPTH} levels` };
    }
    const key = JSON.stringify(schema);
    if (key.length > MAX_RESPONSE_SCHEMA_BYTES) {
      return { unusable: `larger than ${MAX_RESPONSE_SCHEMA_BYTES} bytes` };
    }
    const cached = this.cache.get(key);
    if (cached) {
      this.cache.delete(key);
      this.cache.set(key, cached);
      return cached;
    }
    const compiled = this.compileNew(schema);
    this.cache.set(key, compiled);
    if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value!);
    return compiled;
  }

  private compileNew(schema: Record<string, unknown>): Compiled {
    const ajv = this.instance();
    try {
      if (!ajv.validateSchema(schema)) {
        return { unusable: `not a valid JSON Schema: ${ajv.errorsText(ajv.errors)}` };
      }
      return { validate: ajv.compile(schema) };
    } catch (err) {
      return { unusable: `does not compile: ${(err as Error)?.message ?? String(err)}` };
    } finally {
      // Our cache holds what is needed; Ajv's own would grow with every schema ever seen.
      ajv.removeSchema(schema);
    }
  }

  private instance(): Ajv {
    if (this.ajv) return this.ajv;
    const ajv = new Ajv2020({ ...USER_SCHEMA_AJV_OPTIONS, code: { regExp: boundedRegExp } });
    addFormats(ajv);
    this.ajv = ajv;
    return ajv;
  }
}

/** Ajv's RegExp engine for agent-supplied patterns: the standard one, minus the exponential. */
function boundedRegExp(pattern: string, flags: string): RegExp {
  if (!safeRegex(pattern)) {
    throw new Error(
      `pattern ${JSON.stringify(pattern)} could take exponential time to match (nested quantifiers)`,
    );
  }
  return new RegExp(pattern, flags);
}
boundedRegExp.code = "new RegExp";

/** How deeply objects and arrays nest in `value`, counted up to `limit + 1` (iteratively). */
function nesting(value: unknown, limit: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [current, depth] = stack.pop()!;
    if (typeof current !== "object" || current === null) continue;
    if (depth > deepest) deepest = depth;
    if (deepest > limit) return deepest;
    for (const child of Object.values(current)) stack.push([child, depth + 1]);
  }
  return deepest;
}
