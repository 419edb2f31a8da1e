/**
 * Interrupts as MCP elicitation (2025-11-25, form mode): the schema a client shows for an
 * interrupt, and the client's answer as the run's resume entry.
 */
import type { Interrupt, ResumeEntry } from "@ag-ui/core";
import { isObject } from "../acp/values.js";

/** What a form field of MCP's restricted schema may be (PrimitiveSchemaDefinition). */
const PRIMITIVE_TYPES = new Set(["string", "number", "integer", "boolean"]);
/** The keywords MCP's primitive schemas take, per type; anything else is left out. */
const KEPT_KEYWORDS = [
  "type",
  "title",
  "description",
  "default",
  "enum",
  "enumNames",
  "minLength",
  "maxLength",
  "format",
  "minimum",
  "maximum",
];
const FORMATS = new Set(["email", "uri", "date", "date-time"]);

/** The name of the one field a free-form answer goes in. */
export const ANSWER_FIELD = "answer";

export interface RequestedSchema {
  type: "object";
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
}

/**
 * The form for an answer of schema `schema`: the schema itself when MCP can express it (an
 * object of primitive fields), else one text field whose text is read as JSON when it parses.
 */
export function requestedSchemaOf(schema: Record<string, unknown> | undefined): {
  schema: RequestedSchema;
  freeForm: boolean;
} {
  const form = schema && formOf(schema);
  if (form) return { schema: form, freeForm: false };
  return {
    schema: {
      type: "object",
      properties: {
        [ANSWER_FIELD]: {
          type: "string",
          title: "Answer",
          description: schema
            ? `JSON matching: ${JSON.stringify(schema).slice(0, 1000)}`
            : "Your answer (JSON, or plain text).",
        },
      },
      required: [ANSWER_FIELD],
    },
    freeForm: true,
  };
}

function formOf(schema: Record<string, unknown>): RequestedSchema | undefined {
  if (schema.type !== "object" || !isObject(schema.properties)) return undefined;
  const properties: Record<string, Record<string, unknown>> = {};
  for (const [name, field] of Object.entries(schema.properties)) {
    if (!isObject(field) || typeof field.type !== "string" || !PRIMITIVE_TYPES.has(field.type)) {
      return undefined;
    }
    const kept: Record<string, unknown> = {};
    for (const keyword of KEPT_KEYWORDS) {
      if (keyword in field) kept[keyword] = field[keyword];
    }
    if (typeof kept.format === "string" && !FORMATS.has(kept.format)) delete kept.format;
    properties[name] = kept;
  }
  if (Object.keys(properties).length === 0) return undefined;
  const required = Array.isArray(schema.required)
    ? schema.required.filter(
        (name): name is string => typeof name === "string" && name in properties,
      )
    : [];
  return { type: "object", properties, ...(required.length > 0 ? { required } : {}) };
}

/** The message a client shows with the form. */
export function elicitationMessageOf(agentName: string, interrupt: Interrupt): string {
  const asks = interrupt.message || `The agent stopped for "${interrupt.reason ?? "input"}".`;
  return `${agentName}: ${asks}`;
}

/** An accepted form's content as the interrupt's answer (a free-form answer read as JSON). */
export function answerOf(content: Record<string, unknown> | undefined, freeForm: boolean): unknown {
  if (!freeForm) return content ?? {};
  const text = content?.[ANSWER_FIELD];
  if (typeof text !== "string") return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The resume entries of an interrupted run's answers: resolved with a payload, or cancelled. */
export function resumeEntryOf(
  interrupt: Interrupt,
  answer: { accepted: true; payload: unknown } | { accepted: false },
): ResumeEntry {
  if (!answer.accepted) return { interruptId: interrupt.id, status: "cancelled" };
  return answer.payload === undefined || answer.payload === null
    ? { interruptId: interrupt.id, status: "resolved" }
    : { interruptId: interrupt.id, status: "resolved", payload: answer.payload };
}

/**
 * The schema an interrupt's answer must match: the interrupt's own `responseSchema`, else the
 * `resume_payload` the agent's descriptor declares for its type (or `"*"`); undefined when
 * only the default open object is declared.
 */
export function expectedSchemaOf(
  interrupt: Interrupt,
  entries: ReadonlyArray<{ interrupt_type: string; resume_payload: Record<string, unknown> }>,
): Record<string, unknown> | undefined {
  if (isObject(interrupt.responseSchema)) return interrupt.responseSchema;
  const type = interrupt.reason || "interrupt";
  const entry =
    entries.find((e) => e.interrupt_type === type) ?? entries.find((e) => e.interrupt_type === "*");
  const declared = entry?.resume_payload;
  if (!declared) return undefined;
  const open = Object.keys(declared).length === 1 && declared.type === "object";
  return open ? undefined : declared;
}
