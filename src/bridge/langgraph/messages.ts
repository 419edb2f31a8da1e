/**
 * LangChain message dicts (what LangGraph clients send and read) ⇄ our messages (ACP form, the
 * AG-UI message with ACP content blocks; see bridge/acp/messages.ts).
 *
 * LangChain → ours (a run's `input.messages`):
 * | LangChain                                 | ours                                         |
 * | ----------------------------------------- | -------------------------------------------- |
 * | `type` `human` / `ai` / `system` / `tool` (or `role` `user` / `assistant` / …; `*MessageChunk` types too) | `role` `user` / `assistant` / `system` / `tool` |
 * | `content` (string or blocks)              | the same (checked as every ACP input message) |
 * | `tool_calls` `[{id, name, args}]`         | `toolCalls` in AG-UI's function shape         |
 * | `tool_call_id`, `id`, `name`              | `toolCallId`, `id`, `name`                    |
 *
 * Ours → LangChain (values, state, history, `runs.wait`): the same table backwards, with the
 * keys LangChain's own serialization writes (`additional_kwargs`, `response_metadata`, and for
 * an AI message `tool_calls` / `invalid_tool_calls`). Reasoning and activity messages have no
 * LangChain type: they are left out.
 */
import { invalid } from "../../util/errors.js";

type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** LangChain's message types (and their chunk spellings) as our roles. */
const ROLE_OF_TYPE: Record<string, string> = {
  human: "user",
  HumanMessageChunk: "user",
  user: "user",
  ai: "assistant",
  AIMessageChunk: "assistant",
  assistant: "assistant",
  system: "system",
  SystemMessageChunk: "system",
  developer: "developer",
  tool: "tool",
  ToolMessageChunk: "tool",
};

/** One LangChain message dict (or OpenAI-style `{role, content}`) as an ACP input message. */
export function langchainToAcpMessage(message: unknown, path: string): Rec {
  if (typeof message === "string") return { role: "user", content: message };
  if (!isRecord(message)) throw invalid(`${path} must be a message object`);
  const kind = message.type ?? message.role;
  if (typeof kind !== "string") throw invalid(`${path} needs a "type" (human, ai, system, tool)`);
  const role = ROLE_OF_TYPE[kind];
  if (!role) {
    throw invalid(`${path}/type "${kind}" is not a message type this server can take`);
  }
  const out: Rec = { role, content: message.content ?? "" };
  if (typeof message.id === "string" && message.id !== "") out.id = message.id;
  if (typeof message.name === "string" && role !== "tool") out.name = message.name;
  if (role === "tool") out.tool_call_id = message.tool_call_id ?? message.toolCallId;
  if (role === "assistant") {
    const calls = message.tool_calls ?? message.toolCalls;
    if (Array.isArray(calls) && calls.length > 0) out.tool_calls = calls;
  }
  return out;
}

/** A run's `input.messages` as ACP messages, order kept. */
export function langchainToAcpMessages(messages: unknown, path = "input/messages"): Rec[] {
  if (!Array.isArray(messages)) {
    // LangGraph's add_messages reducer takes a single message too.
    return [langchainToAcpMessage(messages, `${path}`)];
  }
  return messages.map((message, i) => langchainToAcpMessage(message, `${path}/${i}`));
}

const TYPE_OF_ROLE: Record<string, string> = {
  user: "human",
  assistant: "ai",
  system: "system",
  developer: "system",
  tool: "tool",
};

/** One of our stored messages as a LangChain message dict; undefined for a role it lacks. */
export function acpToLangchainMessage(message: unknown): Rec | undefined {
  if (!isRecord(message) || typeof message.role !== "string") return undefined;
  const type = TYPE_OF_ROLE[message.role];
  if (!type) return undefined;
  const out: Rec = {
    type,
    id: message.id ?? null,
    content: message.content ?? "",
    additional_kwargs: {},
    response_metadata: {},
    name: typeof message.name === "string" ? message.name : null,
  };
  if (type === "ai") {
    out.tool_calls = Array.isArray(message.toolCalls) ? message.toolCalls.map(toolCallOf) : [];
    out.invalid_tool_calls = [];
  }
  if (type === "tool") {
    out.tool_call_id = message.toolCallId ?? "";
    out.status = message.error !== undefined ? "error" : "success";
  }
  return out;
}

/** Our messages as LangChain message dicts, the ones without a LangChain type left out. */
export function acpToLangchainMessages(messages: unknown): Rec[] {
  if (!Array.isArray(messages)) return [];
  const out: Rec[] = [];
  for (const message of messages) {
    const converted = acpToLangchainMessage(message);
    if (converted) out.push(converted);
  }
  return out;
}

/** An AG-UI tool call (`{id, function: {name, arguments}}`) as a LangChain one. */
function toolCallOf(call: unknown): Rec {
  const c = isRecord(call) ? call : {};
  const fn = isRecord(c.function) ? c.function : {};
  return {
    id: c.id ?? null,
    name: fn.name ?? "",
    args: parseArgs(fn.arguments),
    type: "tool_call",
  };
}

/** An AG-UI `TOOL_CALL_RESULT` as LangChain's `tool` message (what a tool gave back). */
export function toolResultMessage(event: Rec): Rec {
  return {
    type: "tool",
    id: event.messageId ?? null,
    content: event.content ?? "",
    tool_call_id: event.toolCallId ?? "",
    name: null,
    status: "success",
    additional_kwargs: {},
    response_metadata: {},
  };
}

/** Tool call arguments as an object, as LangChain keeps them: `{}` when they are not JSON. */
export function parseArgs(text: unknown): Rec {
  if (typeof text !== "string" || text === "") return {};
  try {
    const parsed: unknown = JSON.parse(text);
    return isRecord(parsed) ? parsed : { input: parsed };
  } catch {
    return {};
  }
}
