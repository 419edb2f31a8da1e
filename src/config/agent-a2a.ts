/**
 * An agent's `a2a` section: how the A2A face serves it (docs/config.md#a2a-agents). Its schema,
 * its loaded type, and its defaults, which depend on the agent's adapter.
 */
import { positiveInteger } from "./schema-fragments.js";

/** How an agent answers A2A's SendMessage: always a task, a Message when it can, or either. */
export const A2A_REPLIES = ["task", "message", "auto"] as const;
export type A2aReply = (typeof A2A_REPLIES)[number];

/** A list of media types or ranges (`image/png`, `image/*`, `*​/*`). */
const mediaTypes = {
  type: "array",
  minItems: 1,
  items: {
    type: "string",
    pattern: "^(\\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*)/(\\*|[A-Za-z0-9][A-Za-z0-9!#$&^_.+-]*)$",
    "x-expected": "a media type such as image/png, or a range such as image/*",
  },
} as const;

/** The section's JSON Schema, part of the config file's. */
export const agentA2aSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    reply: { enum: A2A_REPLIES },
    inputModes: mediaTypes,
    outputModes: mediaTypes,
    maxPartBytes: positiveInteger,
    maxMessageBytes: positiveInteger,
  },
} as const;

/** The agent as an A2A agent, defaults filled. */
export interface AgentA2aOptions {
  /**
   * `task`: SendMessage answers a Task. `message`: a Message when the run needs no task (it
   * ends in one turn with something said, no interrupt), waiting for it even when asked to
   * return at once, streams too. `auto`: a Message when a blocking SendMessage's run needs no
   * task; a Task otherwise.
   */
  reply: A2aReply;
  /** Media types the agent takes in a message's parts (the card's defaultInputModes). */
  inputModes: string[];
  /** Media types the agent's answers carry (the card's defaultOutputModes). */
  outputModes: string[];
  /** Largest part of a message (a file's decoded bytes, a text's UTF-8 bytes). */
  maxPartBytes: number;
  /** Largest message, all parts together. */
  maxMessageBytes: number;
}

const TEXT_AND_DATA = ["text/plain", "application/json"];

/**
 * What each adapter takes by default: what it passes on to its agent. An OpenAI-compatible
 * model takes images (`image_url` parts; a model that cannot says so); a remote AG-UI agent or a
 * JavaScript module gets every part as it is; the others read text (a data part reaches them as
 * its JSON text).
 */
const DEFAULT_INPUT_MODES: Record<string, string[]> = {
  openai: [...TEXT_AND_DATA, "image/*"],
  "agui-http": [...TEXT_AND_DATA, "*/*"],
  module: [...TEXT_AND_DATA, "*/*"],
};

/** What each adapter's answers carry by default: text and JSON, and files from tool results. */
const DEFAULT_OUTPUT_MODES: Record<string, string[]> = {
  "agui-http": [...TEXT_AND_DATA, "*/*"],
  module: [...TEXT_AND_DATA, "*/*"],
};

export const A2A_SIZE_DEFAULTS = {
  maxPartBytes: 8 * 1024 * 1024,
  maxMessageBytes: 16 * 1024 * 1024,
};

/** An agent's `a2a` section with the defaults of its adapter filled in. */
export function a2aOptionsOf(agent: {
  adapter: { type: string };
  a2a?: Partial<AgentA2aOptions>;
}): AgentA2aOptions {
  const type = agent.adapter.type;
  return {
    reply: agent.a2a?.reply ?? "task",
    inputModes: agent.a2a?.inputModes ?? [...(DEFAULT_INPUT_MODES[type] ?? TEXT_AND_DATA)],
    outputModes: agent.a2a?.outputModes ?? [...(DEFAULT_OUTPUT_MODES[type] ?? TEXT_AND_DATA)],
    maxPartBytes: agent.a2a?.maxPartBytes ?? A2A_SIZE_DEFAULTS.maxPartBytes,
    maxMessageBytes: agent.a2a?.maxMessageBytes ?? A2A_SIZE_DEFAULTS.maxMessageBytes,
  };
}
