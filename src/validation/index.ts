/**
 * The one door to the validators precompiled from the bundled ACP and AG-UI documents by
 * `npm run generate` (scripts/build-validators.mjs). Nothing else imports `./generated/` but
 * config-file.ts (the config file's validator), and nothing here compiles a schema: the server
 * only loads generated code.
 *
 * Each validator set is loaded when first asked for, not when the server starts: the AG-UI
 * set is 600 KB of code (and its schema constants) that a server at rest has no use for, since
 * only a run, a resume or an AG-UI request body is checked against it. The sets are CommonJS so
 * that this can happen synchronously, inside the call that first needs one.
 */
import { createRequire } from "node:module";
import type { ErrorObject } from "ajv";
import type * as AcpValidatorSet from "./generated/acp-validators.cjs";
import type { AcpSchemaName } from "./generated/acp-validators.cjs";
import {
  type AguiEventType,
  aguiEventAnchors,
  aguiEventFields,
  aguiEventTypes as eventTypeList,
} from "./generated/agui-event-fields.js";
import type * as AguiValidatorSet from "./generated/agui-validators.cjs";
import type { AguiAnchor } from "./generated/agui-validators.cjs";
import { acpValidatorNames, aguiValidatorAnchors } from "./generated/validator-names.js";

export { type AcpSchemas, acpOperations, acpSchemas } from "./generated/acp-schemas.js";
export type { AcpSchemaName, AguiAnchor, AguiEventType };

/** A validator: returns whether `data` is valid; when not, `errors` says why. */
export interface Validator {
  (data: unknown): boolean;
  errors?: ErrorObject[] | null;
}

/** The part of an Ajv (or Fastify) validation error that `describeErrors` reads. */
export type ValidationError = Pick<ErrorObject, "keyword" | "instancePath" | "params" | "message">;

/** `$id` prefixes understood by `validatorById`: `acp:<component>` and `agui:<anchor>`. */
export const ACP_ID_PREFIX = "acp:";
export const AGUI_ID_PREFIX = "agui:";

const own = <T extends object>(map: T, key: string): key is Extract<keyof T, string> =>
  Object.hasOwn(map, key);

/**
 * One of the two generated sets, loaded on first use. `handedOut` keeps the function given for
 * each name, so that whichever way a validator is asked for, and whenever, the answer is the
 * same function: the real validator once the set is loaded, or, for a name asked for by
 * `$id` before that, the stand-in made for it then.
 */
class ValidatorSet<Name extends string> {
  #validators: Readonly<Record<Name, Validator>> | undefined;
  readonly #handedOut = new Map<string, Validator>();
  readonly #names: ReadonlySet<string>;

  constructor(
    names: readonly Name[],
    private readonly load: () => Readonly<Record<Name, Validator>>,
  ) {
    this.#names = new Set(names);
  }

  has(name: string): name is Name {
    return this.#names.has(name);
  }

  /** The validator of a known `name`, loading the set now if it is not loaded yet. */
  get(name: Name): Validator {
    const given = this.#handedOut.get(name);
    if (given) return given;
    const validator = this.#loaded()[name];
    this.#handedOut.set(name, validator);
    return validator;
  }

  /**
   * The validator of a known `name`, without loading the set: until it is loaded, a stand-in
   * that loads it on its first call and validates with the real one from then on.
   */
  lazy(name: Name): Validator {
    if (this.#validators || this.#handedOut.has(name)) return this.get(name);
    let real: Validator | undefined;
    const standIn: Validator = (data: unknown) => {
      real ??= this.#loaded()[name];
      const valid = real(data);
      standIn.errors = real.errors;
      return valid;
    };
    this.#handedOut.set(name, standIn);
    return standIn;
  }

  #loaded(): Readonly<Record<Name, Validator>> {
    this.#validators ??= this.load();
    return this.#validators;
  }
}

const require = createRequire(import.meta.url);

const acp = new ValidatorSet(
  acpValidatorNames,
  () => (require("./generated/acp-validators.cjs") as typeof AcpValidatorSet).acpValidators,
);
const agui = new ValidatorSet(
  aguiValidatorAnchors,
  () => (require("./generated/agui-validators.cjs") as typeof AguiValidatorSet).aguiValidators,
);

/** The validator of an ACP component schema (or `<Item>List` response); throws on an unknown name. */
export function acpValidator(name: AcpSchemaName): Validator {
  if (!acp.has(name)) throw new Error(`unknown ACP schema "${name}"`);
  return acp.get(name);
}

/** The validator of an AG-UI definition by its `$anchor` (`Event`, `RunAgentInput`, …); throws on an unknown anchor. */
export function aguiValidator(anchor: AguiAnchor): Validator {
  if (!agui.has(anchor)) throw new Error(`unknown AG-UI anchor "${anchor}"`);
  return agui.get(anchor);
}

/**
 * Looks a validator up by schema `$id`: `"acp:ThreadCreate"`, `"agui:RunAgentInput"`. Fastify
 * asks for every route's body validator as the routes are added, at start-up: this does not
 * load a set (see `ValidatorSet.lazy`).
 */
export function validatorById(id: string): Validator | undefined {
  if (id.startsWith(ACP_ID_PREFIX)) {
    const name = id.slice(ACP_ID_PREFIX.length);
    return acp.has(name) ? acp.lazy(name) : undefined;
  }
  if (id.startsWith(AGUI_ID_PREFIX)) {
    const anchor = id.slice(AGUI_ID_PREFIX.length);
    return agui.has(anchor) ? agui.lazy(anchor) : undefined;
  }
  return undefined;
}

/** Every event type AG-UI 1.0 defines. An event of any other type is unknown. */
export const aguiEventTypes: ReadonlySet<string> = new Set(eventTypeList);

const knownFields: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries(aguiEventFields).map(([type, fields]) => [type, new Set(fields)]),
);

/**
 * The top-level properties AG-UI 1.0 defines for an event type (its own and those it composes:
 * BaseEvent, Attributable), or `undefined` for an unknown type. Anything else on the event is an
 * unknown field, which the event schemas reject (`unevaluatedProperties: false`).
 */
export function aguiKnownFields(type: string): ReadonlySet<string> | undefined {
  return knownFields.get(type);
}

/**
 * The validator of one event type's own definition (e.g. `TEXT_MESSAGE_START` →
 * `TextMessageStartEvent`), or `undefined` for an unknown type. Same verdict as the `Event`
 * validator for an event of that type.
 */
export function aguiEventValidator(type: string): Validator | undefined {
  return own(aguiEventAnchors, type) ? agui.get(aguiEventAnchors[type]) : undefined;
}

const MAX_ERRORS = 3;

/**
 * A human message naming the path and the problem, e.g. `body/thread_id must match format
 * "uuid"`, `body must have required property 'agent_id'`, `body/limit must be <= 1000`,
 * `body must NOT have additional property 'foo'`. Keeps the first three distinct errors and
 * counts the rest. `root` names the validated value (`body`, `querystring`, `event`…).
 *
 * A failed `anyOf`/`oneOf` is reported through its branches rather than as "must match a
 * schema in anyOf": `must be string or array` when every branch failed on the type, otherwise
 * the error of the branch that got deepest into the value (most likely the intended one).
 */
export function describeErrors(
  errors: readonly ValidationError[] | null | undefined,
  root = "data",
): string {
  if (!errors || errors.length === 0) return `${root} is invalid`;
  const lines = [
    ...new Set(foldCombinators(errors).map((p) => `${`${root}${p.path}` || "data"} ${p.problem}`)),
  ];
  const shown = lines.slice(0, MAX_ERRORS).join("; ");
  const more = lines.length - MAX_ERRORS;
  return more > 0 ? `${shown} (and ${more} more)` : shown;
}

interface Problem {
  path: string;
  /** Set on a `type` error: the type(s) it asked for. */
  types?: string[];
  problem: string;
}

/**
 * Replaces each failed combinator, and the branch errors Ajv reported before it, by one problem.
 * With `allErrors` off any other failure stops validation at once, so the unconsumed errors
 * before a combinator's, at or below its path, are its branches' (even across a `$ref`, where
 * `schemaPath` no longer shows the nesting).
 */
function foldCombinators(errors: readonly ValidationError[]): Problem[] {
  const out: Problem[] = [];
  for (const error of errors) {
    const own = describeError(error);
    const combinator = error.keyword === "anyOf" || error.keyword === "oneOf";
    if (!combinator || error.params.passingSchemas) {
      out.push(own);
      continue;
    }
    const within = (p: Problem) => p.path === own.path || p.path.startsWith(`${own.path}/`);
    const branches = out.filter(within);
    out.splice(0, out.length, ...out.filter((p) => !within(p)));
    const types = [...new Set(branches.flatMap((b) => b.types ?? []))];
    if (branches.some((b) => b.path !== own.path)) {
      out.push(branches.reduce((a, b) => (depth(b.path) > depth(a.path) ? b : a)));
    } else if (types.length > 0) {
      out.push({ ...own, types, problem: `must be ${types.join(" or ")}` });
    } else {
      out.push(own);
    }
  }
  return out;
}

const depth = (path: string) => path.split("/").length;

function describeError(error: ValidationError): Problem {
  const { keyword, instancePath: path, params, message } = error;
  const problem = (text: string, at = path): Problem => ({ path: at, problem: text });
  switch (keyword) {
    case "type": {
      if (typeof params.type !== "string") return problem(message ?? "has the wrong type");
      const types = params.type.split(",");
      return { ...problem(`must be ${types.join(" or ")}`), types };
    }
    case "additionalProperties":
      return problem(`must NOT have additional property '${params.additionalProperty}'`);
    case "unevaluatedProperties":
      return problem(`must NOT have unevaluated property '${params.unevaluatedProperty}'`);
    case "enum":
      return problem(`must be equal to one of the allowed values: ${list(params.allowedValues)}`);
    case "const":
      return problem(`must be equal to constant ${JSON.stringify(params.allowedValue)}`);
    case "discriminator": {
      // Ajv reports a missing or non-string tag as `error: "tag"`, an unknown one as "mapping".
      const tagPath = `${path}/${params.tag}`;
      if (params.tagValue === undefined)
        return problem(`must have required property '${params.tag}'`);
      if (params.error === "tag") return problem("must be string", tagPath);
      return problem(`must be a known value, not ${JSON.stringify(params.tagValue)}`, tagPath);
    }
    default:
      return problem(message ?? `is invalid (${keyword})`);
  }
}

const list = (values: unknown) =>
  Array.isArray(values) ? values.map((v) => JSON.stringify(v)).join(", ") : String(values);
