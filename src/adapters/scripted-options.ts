import { nonNegativeInteger } from "../config/schema-fragments.js";

const eventList = {
  type: "array",
  items: {
    type: "object",
    required: ["type"],
    properties: { type: { type: "string" } },
    "x-expected": "an AG-UI event object with a `type`",
  },
} as const;

const scriptSource = {
  "x-expected":
    "a file path, an array of AG-UI events, or an object with a `stream` array of AG-UI events",
  anyOf: [
    { type: "string", minLength: 1 },
    eventList,
    {
      type: "object",
      additionalProperties: false,
      required: ["stream"],
      properties: { stream: eventList },
    },
  ],
} as const;

/** `adapter:` of a scripted agent in the config file (closed, including its own `type`). */
export const scriptedOptionsSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    type: { const: "scripted" },
    script: scriptSource,
    segments: { type: "array", minItems: 1, items: scriptSource },
    delayMs: nonNegativeInteger,
  },
} as const;

/** One AG-UI event as written in a script (only `type` is checked at load time). */
export type ScriptEvent = Record<string, unknown> & { type: string };
/** A script as written: a file path, an array of events, or `{ stream: [...] }`. */
export type ScriptSourceInput = string | ScriptEvent[] | { stream: ScriptEvent[] };

/** A script once loaded: a file (absolute path; JSON, checked to exist and parse) or events. */
export type ScriptSource =
  | { kind: "file"; path: string }
  | { kind: "inline"; events: ScriptEvent[] };

/** A scripted agent's adapter once loaded. */
export interface ScriptedAdapterConfig {
  type: "scripted";
  /**
   * One script per AG-UI run segment: the first start plays `segments[0]`, each resume the
   * next. A config `script: X` is loaded as `segments: [X]`.
   */
  segments: ScriptSource[];
  delayMs: number;
}

export const SCRIPTED_DEFAULTS = { delayMs: 0 } as const;
