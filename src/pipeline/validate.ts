/**
 * Stage 1: validate. Each event is checked against its own precompiled `$anchor` validator
 * (TEXT_MESSAGE_CONTENT → `#TextMessageContentEvent`), which gives the same verdict as the
 * `Event` union at a fraction of the cost and names the real problem instead of 31 failed
 * branches. A valid event passes through untouched (the schema's objects are closed, so a
 * valid event carries nothing unknown). Only an event that fails goes the slow way:
 *
 * 1. legacy shapes are upgraded (compat.ts);
 * 2. material the schema does not describe is stripped, with one warning per removed path
 *    (unknown fields at any depth, unrecognised union members — see strip.ts);
 * 3. it is validated again; a failure now is a malformed value on a described field, which
 *    is fatal: `event 3 (TEXT_MESSAGE_CONTENT): /delta must be string`.
 *
 * Not an object, or a `type` the protocol does not know (and no legacy translation for it):
 * the event is dropped with a warning. Nothing here mutates the adapter's object; copies are
 * made only on the path to something stripped.
 */
import { readFileSync } from "node:fs";
import type { ErrorObject } from "ajv";
import { schemaPath } from "../util/paths.js";
import { LEGACY_EVENT_TYPES, type LegacyTranslator, normalizeLegacyEvent } from "./compat.js";
import { DROP, type PlanNode, StripPlanner, stripAgainst } from "./strip.js";
import { type EventRecord, PipelineFault } from "./types.js";

export type ValidateFunction = ((data: unknown) => boolean) & {
  errors?: ErrorObject[] | null;
};

/**
 * What the pipeline needs from `src/validation` (precompiled Ajv validators for the bundled
 * AG-UI schema). Injected so the pipeline can be tested and benchmarked on its own.
 */
export interface AguiValidation {
  /** The validator for one `$anchor` of the AG-UI schema, e.g. "TextMessageStartEvent". */
  aguiValidator(anchor: string): ValidateFunction;
  /** Every AG-UI event type name. */
  readonly aguiEventTypes: ReadonlySet<string>;
}

type Warn = (text: string) => void;

interface TypeEntry {
  validate: ValidateFunction;
  plan: PlanNode;
}

let schemaDocument: Record<string, unknown> | undefined;

/** The bundled AG-UI schema document (read once). */
export function aguiSchemaDocument(): Record<string, unknown> {
  schemaDocument ??= JSON.parse(readFileSync(schemaPath("ag-ui.schema.json"), "utf8")) as Record<
    string,
    unknown
  >;
  return schemaDocument;
}

/** Event `type` → the `$defs` name (= `$anchor`) that describes it, read from the schema. */
function anchorsByType(document: Record<string, unknown>): Map<string, string> {
  const defs = document.$defs as Record<string, Record<string, unknown>>;
  const members = (defs.Event?.oneOf ?? []) as Array<{ $ref: string }>;
  const out = new Map<string, string>();
  for (const member of members) {
    const name = member.$ref.slice("#/$defs/".length);
    const typeSchema = (defs[name]?.properties as Record<string, { const?: unknown }> | undefined)
      ?.type;
    if (typeof typeSchema?.const === "string") out.set(typeSchema.const, name);
  }
  return out;
}

const tables = new WeakMap<AguiValidation, Map<string, TypeEntry>>();

function tableFor(validation: AguiValidation): Map<string, TypeEntry> {
  let table = tables.get(validation);
  if (table) return table;
  const document = aguiSchemaDocument();
  const planner = new StripPlanner(document);
  const anchors = anchorsByType(document);
  table = new Map();
  for (const type of validation.aguiEventTypes) {
    const anchor = anchors.get(type);
    if (!anchor) throw new Error(`AG-UI schema has no definition for event type ${type}`);
    table.set(type, { validate: validation.aguiValidator(anchor), plan: planner.def(anchor) });
  }
  tables.set(validation, table);
  return table;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Validates, strips and upgrades one segment's events. */
export class EventValidator {
  private readonly table: Map<string, TypeEntry>;

  constructor(
    validation: AguiValidation,
    private readonly legacy: LegacyTranslator,
  ) {
    this.table = tableFor(validation);
  }

  /**
   * The event as the rest of the pipeline should see it, or undefined when it is dropped.
   * Throws {@link PipelineFault} for a malformed known field.
   */
  check(raw: unknown, index: number, warn: Warn): EventRecord | undefined {
    if (!isPlainObject(raw)) {
      const got = raw === null ? "null" : Array.isArray(raw) ? "an array" : typeof raw;
      warn(`dropped: an event must be a JSON object, got ${got}`);
      return undefined;
    }
    let event = raw as EventRecord;
    const rawType = event.type;
    let entry = typeof rawType === "string" ? this.table.get(rawType) : undefined;
    if (entry === undefined) {
      const translated =
        typeof rawType === "string" && LEGACY_EVENT_TYPES.has(rawType)
          ? this.legacy.translate(event, warn)
          : undefined;
      entry = translated ? this.table.get(translated.type) : undefined;
      if (!translated || !entry) {
        warn(`dropped event of unrecognised type '${String(rawType)}'`);
        return undefined;
      }
      event = translated;
    }
    if (entry.validate(event)) return event;

    event = normalizeLegacyEvent(event, warn);
    const removed: string[] = [];
    const stripped = stripAgainst(event, entry.plan, "", removed);
    if (stripped === DROP) {
      throw new PipelineFault(index, String(rawType), "validation", "unrecognisable event");
    }
    for (const path of removed) warn(`removed unrecognised material at ${path}`);
    event = stripped as EventRecord;
    if (!entry.validate(event)) {
      throw new PipelineFault(
        index,
        String(rawType),
        "validation",
        formatErrors(entry.validate.errors),
      );
    }
    return event;
  }
}

/**
 * Ajv errors as one line naming each distinct problem by JSON pointer. Union wrappers
 * ("must match exactly one schema in oneOf") give way to the branch errors under them, and
 * the discriminator mismatches of branches that were never meant give way to the errors of
 * the branch that was; `const`/`enum` errors say what was expected.
 */
export function formatErrors(errors: ErrorObject[] | null | undefined): string {
  if (!errors || errors.length === 0) return "invalid event";
  let list = errors.filter((e) => e.keyword !== "oneOf" && e.keyword !== "anyOf");
  if (list.length === 0) list = errors;
  const nonConst = list.filter((e) => e.keyword !== "const");
  if (nonConst.length > 0 && nonConst.length < list.length) {
    // Other branches' tag mismatches are noise when some branch got further than its tag.
    list = list.filter(
      (e) =>
        e.keyword !== "const" ||
        !nonConst.some((o) => o.instancePath.startsWith(parentPointer(e.instancePath))),
    );
  }
  const seen = new Set<string>();
  for (const e of list) {
    seen.add(e.instancePath ? `${e.instancePath} ${describe(e)}` : describe(e));
    if (seen.size === 3) break;
  }
  return [...seen].join("; ");
}

const parentPointer = (pointer: string): string => pointer.slice(0, pointer.lastIndexOf("/"));

function describe(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case "const":
      return `must be ${JSON.stringify(params.allowedValue)}`;
    case "enum":
      return `must be one of ${(params.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(", ")}`;
    case "unevaluatedProperties":
      return `must not have property '${String(params.unevaluatedProperty)}'`;
    case "additionalProperties":
      return `must not have property '${String(params.additionalProperty)}'`;
    case "discriminator":
      return params.tagValue === undefined
        ? `must have required property '${String(params.tag)}'`
        : `/${String(params.tag)} must be a known value, not ${JSON.stringify(params.tagValue)}`;
    default:
      return error.message ?? error.keyword;
  }
}
