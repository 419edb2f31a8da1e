/**
 * A LangGraph run-creation body (`/threads/{id}/runs…`, `/runs…`) as our run command.
 *
 * | LangGraph                          | ours                                                   |
 * | ---------------------------------- | ------------------------------------------------------ |
 * | `assistant_id`                     | the agent of that name (or agent id)                   |
 * | `input.messages`                   | `input.messages` (LangChain dicts → messages)          |
 * | the other keys of `input`          | `input.state`: the state a thread without one starts from |
 * | `config.configurable`, `context`   | `config.configurable` (context keys win), `tags`, `recursion_limit` |
 * | `command.resume`                   | the resume of the thread's interrupted run             |
 * | `metadata`, `webhook`, `multitask_strategy`, `if_not_exists`, `after_seconds`, `on_completion` | the same |
 * | `on_disconnect` (default `continue`, as LangGraph's server has it) | the same       |
 * | `stream_mode`, `stream_resumable`  | kept with the run (`langgraph` key of its stored body) |
 *
 * `command.update` and `command.goto` (graph internals), `interrupt_before` / `interrupt_after`
 * and a `checkpoint` to start from are refused: an agent here is not a graph of nodes.
 */

import { invalid } from "../../util/errors.js";
import type { RunCreateBody } from "../acp/run-command.js";
import { langchainToAcpMessages } from "./messages.js";

type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The stream modes this face produces, in LangGraph's names. */
export const STREAM_MODES = [
  "values",
  "messages-tuple",
  "messages",
  "updates",
  "custom",
  "events",
  "tools",
] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

/** What the face keeps of a LangGraph run body with the run (the `langgraph` key). */
export interface LangGraphRunOptions {
  assistant_id: string;
  stream_mode: StreamMode[];
  stream_resumable: boolean;
}

export interface ParsedRunBody {
  assistantId: string;
  /** The run-creation body in ACP form, with the LangGraph options under `langgraph`. */
  acp: RunCreateBody;
  options: LangGraphRunOptions;
  /** Present when the body resumes the thread's interrupted run (`command.resume`). */
  resume?: { value: unknown };
}

const ENUMS: Record<string, readonly string[]> = {
  multitask_strategy: ["reject", "enqueue", "interrupt", "rollback"],
  on_disconnect: ["cancel", "continue"],
  if_not_exists: ["create", "reject"],
  on_completion: ["delete", "keep"],
};

/** Parses and checks a run body; throws `invalid` (a 422 naming the field) when it cannot. */
export function parseRunBody(body: unknown, stateless: boolean): ParsedRunBody {
  if (!isRecord(body)) throw invalid("the request body must be a JSON object");
  const assistantId = body.assistant_id;
  if (typeof assistantId !== "string" || assistantId === "") {
    throw invalid("assistant_id is required: the name of an agent (see /assistants/search)");
  }
  for (const [field, allowed] of Object.entries(ENUMS)) {
    const value = body[field];
    if (value !== undefined && value !== null && !allowed.includes(value as string)) {
      throw invalid(`${field} must be one of ${allowed.join(", ")}`);
    }
  }
  for (const field of ["interrupt_before", "interrupt_after"]) {
    const value = body[field];
    if (value !== undefined && value !== null && !(Array.isArray(value) && value.length === 0)) {
      throw invalid(`${field} is not supported: an agent here has no graph nodes to stop at`);
    }
  }
  if (body.checkpoint != null || body.checkpoint_id != null) {
    throw invalid("checkpoint is not supported on a run: branch the thread with PATCH instead");
  }
  for (const field of ["metadata", "config", "context"]) {
    if (body[field] != null && !isRecord(body[field])) throw invalid(`${field} must be an object`);
  }
  if (body.webhook != null && typeof body.webhook !== "string") {
    throw invalid("webhook must be a URL string");
  }
  if (body.after_seconds != null && typeof body.after_seconds !== "number") {
    throw invalid("after_seconds must be a number");
  }

  const acp: RunCreateBody = { agent_id: assistantId };
  const resume = parseCommand(body.command, body.input, stateless);
  if (!resume) acp.input = parseInput(body.input);
  const config = runConfig(body.config as Rec | undefined, body.context as Rec | undefined);
  if (config) acp.config = config;
  if (isRecord(body.metadata)) acp.metadata = body.metadata;
  if (typeof body.webhook === "string") acp.webhook = body.webhook;
  if (typeof body.after_seconds === "number") acp.after_seconds = body.after_seconds;
  acp.on_disconnect = body.on_disconnect === "cancel" ? "cancel" : "continue";
  for (const field of ["multitask_strategy", "if_not_exists", "on_completion"] as const) {
    if (typeof body[field] === "string") (acp as Rec)[field] = body[field];
  }
  const options: LangGraphRunOptions = {
    assistant_id: assistantId,
    stream_mode: parseStreamModes(body.stream_mode),
    stream_resumable: body.stream_resumable === true,
  };
  acp.langgraph = options;
  return resume ? { assistantId, acp, options, resume } : { assistantId, acp, options };
}

/** `stream_mode` as a list of modes this face produces; default `values`. */
export function parseStreamModes(given: unknown): StreamMode[] {
  if (given === undefined || given === null) return ["values"];
  const list = Array.isArray(given) ? given : [given];
  if (list.some((mode) => typeof mode !== "string")) {
    throw invalid("stream_mode must be a mode name or a list of them");
  }
  const unsupported = (list as string[]).filter(
    (mode) => !(STREAM_MODES as readonly string[]).includes(mode),
  );
  if (unsupported.length > 0) {
    throw invalid(
      `stream_mode ${unsupported.map((m) => `"${m}"`).join(", ")} not supported by this server (it streams ${STREAM_MODES.join(", ")})`,
    );
  }
  const modes = [...new Set(list as StreamMode[])];
  return modes.length > 0 ? modes : ["values"];
}

/** The LangGraph options a stored run body keeps; defaults for a run made by another face. */
export function runOptionsOf(creation: Record<string, unknown>, agentName: string) {
  const kept = isRecord(creation.langgraph) ? creation.langgraph : {};
  const modes = Array.isArray(kept.stream_mode) ? (kept.stream_mode as StreamMode[]) : ["values"];
  return {
    assistant_id: typeof kept.assistant_id === "string" ? kept.assistant_id : agentName,
    stream_mode: modes as StreamMode[],
    stream_resumable: kept.stream_resumable === true,
  } satisfies LangGraphRunOptions;
}

function parseCommand(command: unknown, input: unknown, stateless: boolean) {
  if (command === undefined || command === null) return undefined;
  if (!isRecord(command)) throw invalid("command must be an object");
  for (const field of ["update", "goto"]) {
    if (command[field] != null) {
      throw invalid(`command.${field} is not supported: an agent here is not a graph of nodes`);
    }
  }
  if (!("resume" in command)) throw invalid("command must carry resume");
  if (input !== undefined && input !== null) {
    throw invalid("input and command.resume cannot be given together");
  }
  if (stateless) throw invalid("command.resume needs a thread: resume on /threads/{id}/runs");
  return { value: command.resume };
}

function parseInput(input: unknown): Rec {
  if (input === undefined || input === null) return {};
  if (!isRecord(input)) throw invalid("input must be an object (the state update), or null");
  const { messages, ...state } = input;
  const out: Rec = {};
  if (messages !== undefined && messages !== null) {
    out.messages = langchainToAcpMessages(messages);
  }
  if (Object.keys(state).length > 0) out.state = state;
  return out;
}

function runConfig(config: Rec | undefined, context: Rec | undefined) {
  const configurable = {
    ...(isRecord(config?.configurable) ? config.configurable : {}),
    ...(context ?? {}),
  };
  // LangGraph's client may echo the thread id in the config: it is the run's thread here.
  delete configurable.thread_id;
  const out: Rec = {};
  if (Object.keys(configurable).length > 0) out.configurable = configurable;
  if (Array.isArray(config?.tags)) out.tags = config.tags;
  if (typeof config?.recursion_limit === "number") out.recursion_limit = config.recursion_limit;
  return Object.keys(out).length > 0 ? out : undefined;
}
