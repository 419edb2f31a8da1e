/**
 * AG-UI messages ⇄ ACP `Message` (ACP 0.2.1: `{role, content, id?, metadata?}`, open to
 * other keys; `content` is a string or a list of blocks `{type: "text", text}` /
 * `{type: <any>, ...}`).
 *
 * AG-UI → ACP (thread state, run output, `values` frames) — lossless:
 * | AG-UI                                   | ACP                                            |
 * | --------------------------------------- | ---------------------------------------------- |
 * | `id`, `role`, `metadata`                | the same keys                                  |
 * | `content` string                        | the same string                                |
 * | `content` absent (assistant with only tool calls) | `""`                                  |
 * | `content` parts (user, tool)            | the same list: a text part is an ACP text block, a media part an ACP block of its own `type`; a part whose `metadata` is not an object carries it as `{"$value": …}` (ACP block metadata is an object) |
 * | `content` object (activity)             | `[{type: "activity", content: <object>}]`       |
 * | every other key (`toolCalls`, `toolCallId`, `name`, `error`, `activityType`, `encryptedValue`, `subagentRunId`, …) | kept verbatim, camelCase |
 *
 * ACP → AG-UI (`input.messages` of a run, into `RunAgentInput.messages`):
 * - `role` must be an AG-UI role; `human` → `user` and `ai` → `assistant` are accepted as
 *   the LangChain spellings ACP clients commonly send. Anything else is a 422.
 * - `id` is kept; a message without one gets a fresh UUID.
 * - `content`: a string stays a string. A block list becomes AG-UI parts for `user` and
 *   `tool` (text and image/audio/video/document parts as they are; a legacy `binary` part is
 *   upgraded to the matching media part; an OpenAI `image_url` block becomes an image part);
 *   for the string-only roles (`assistant`, `system`, `developer`, `reasoning`) the text
 *   blocks are joined and any other block is a 422. An activity block list becomes the
 *   activity's content object again. An assistant message whose content is `""` and that
 *   carries tool calls gets no content (AG-UI's shape for a tool-call-only turn).
 * - Tool calls: AG-UI `toolCalls`, or `tool_calls` in the OpenAI shape
 *   (`{id, type, function: {name, arguments}}`) or the LangChain shape (`{id, name, args}`);
 *   a tool message's `toolCallId` may also be spelled `tool_call_id`.
 * - The AG-UI keys of the message's role are kept; other keys are dropped, because
 *   `RunAgentInput` messages are closed objects a conforming agent would reject.
 */
import { randomUUID } from "node:crypto";
import { upgradeMessageContent } from "../../pipeline/compat.js";
import type { AgUiMessage } from "../../pipeline/types.js";
import { invalid } from "../../util/errors.js";

export type AcpContentBlock = { type: string; [key: string]: unknown };

/** An ACP `Message`. */
export interface AcpMessage {
  role: string;
  content: string | AcpContentBlock[];
  id?: string;
  metadata?: Record<string, unknown>;
  [key: string]: unknown;
}

type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

const WRAPPED = "$value";

/** One accumulated AG-UI message in ACP form. */
export function aguiToAcpMessage(message: AgUiMessage): AcpMessage {
  const m = message as unknown as Rec;
  const out: Rec = { ...m };
  const content = m.content;
  if (typeof content === "string") out.content = content;
  else if (Array.isArray(content)) out.content = content.map(partToBlock);
  else if (isRecord(content)) out.content = [{ type: "activity", content }];
  else out.content = "";
  return out as AcpMessage;
}

/** AG-UI messages in ACP form, order kept. */
export function aguiToAcpMessages(messages: readonly AgUiMessage[]): AcpMessage[] {
  return messages.map(aguiToAcpMessage);
}

function partToBlock(part: unknown): unknown {
  if (!isRecord(part) || part.metadata === undefined || isRecord(part.metadata)) return part;
  return { ...part, metadata: { [WRAPPED]: part.metadata } };
}

function blockToPart(block: Rec): Rec {
  const metadata = block.metadata;
  if (
    isRecord(metadata) &&
    Object.keys(metadata).length === 1 &&
    Object.hasOwn(metadata, WRAPPED)
  ) {
    return { ...block, metadata: metadata[WRAPPED] };
  }
  return block;
}

const ROLE_ALIASES: Record<string, string> = { human: "user", ai: "assistant" };

const ROLE_FIELDS: Record<string, readonly string[]> = {
  developer: ["name", "encryptedValue", "metadata", "subagentRunId"],
  system: ["name", "encryptedValue", "metadata", "subagentRunId"],
  assistant: ["name", "encryptedValue", "metadata", "subagentRunId"],
  user: ["name", "encryptedValue", "metadata", "subagentRunId"],
  tool: ["error", "encryptedValue", "metadata", "subagentRunId"],
  activity: ["activityType", "metadata", "subagentRunId"],
  reasoning: ["encryptedValue", "metadata", "subagentRunId"],
};

const MEDIA = new Set(["image", "audio", "video", "document"]);

/**
 * One ACP input message as an AG-UI message. Throws a coded `invalid` error (→ 422) naming
 * `path` when it cannot be represented.
 */
export function acpToAguiMessage(message: unknown, path = "message"): AgUiMessage {
  if (!isRecord(message)) throw invalid(`${path} must be an object`);
  const rawRole = message.role;
  if (typeof rawRole !== "string") throw invalid(`${path}/role must be a string`);
  const role = ROLE_ALIASES[rawRole] ?? rawRole;
  const fields = ROLE_FIELDS[role];
  if (!fields) throw invalid(`${path}/role '${rawRole}' is not an AG-UI message role`);

  const out: Rec = {
    id: typeof message.id === "string" && message.id !== "" ? message.id : randomUUID(),
    role,
  };
  for (const field of fields) {
    const value = message[field];
    if (value === undefined || value === null) continue;
    if (field === "metadata" && !isRecord(value)) continue;
    out[field] = value;
  }

  const content = message.content ?? "";
  switch (role) {
    case "user":
    case "tool":
      out.content = typeof content === "string" ? content : parts(content, `${path}/content`);
      break;
    case "activity":
      out.content = activityContent(content, `${path}/content`);
      if (typeof out.activityType !== "string") {
        throw invalid(`${path}/activityType is required for an activity message`);
      }
      break;
    default:
      out.content = text(content, `${path}/content`);
  }

  if (role === "tool") {
    const toolCallId = message.toolCallId ?? message.tool_call_id;
    if (typeof toolCallId !== "string")
      throw invalid(`${path}/toolCallId is required for a tool message`);
    out.toolCallId = toolCallId;
  }
  if (role === "assistant") {
    const calls = message.toolCalls ?? message.tool_calls;
    if (calls !== undefined && calls !== null) {
      if (!Array.isArray(calls)) throw invalid(`${path}/toolCalls must be an array`);
      out.toolCalls = calls.map((call, i) => toolCall(call, `${path}/toolCalls/${i}`));
      if (out.content === "" && calls.length > 0) delete out.content;
    }
  }
  return upgradeMessageContent(out) as unknown as AgUiMessage;
}

/** ACP input messages as AG-UI messages, order kept. */
export function acpToAguiMessages(
  messages: readonly unknown[],
  path = "input/messages",
): AgUiMessage[] {
  return messages.map((m, i) => acpToAguiMessage(m, `${path}/${i}`));
}

function parts(content: unknown, path: string): Rec[] {
  if (!Array.isArray(content)) throw invalid(`${path} must be a string or a list of blocks`);
  return content.map((block, i) => {
    const where = `${path}/${i}`;
    if (!isRecord(block) || typeof block.type !== "string") {
      throw invalid(`${where} must be a content block with a type`);
    }
    if (block.type === "text") {
      if (typeof block.text !== "string") throw invalid(`${where}/text must be a string`);
      return blockToPart(block);
    }
    if (MEDIA.has(block.type) || block.type === "binary") return blockToPart(block);
    if (block.type === "image_url") {
      const spec = block.image_url;
      const url = typeof spec === "string" ? spec : isRecord(spec) ? spec.url : undefined;
      if (typeof url !== "string") throw invalid(`${where}/image_url must carry a url`);
      return { type: "image", source: { type: "url", value: url } };
    }
    throw invalid(`${where}: content block type '${block.type}' has no AG-UI equivalent`);
  });
}

function text(content: unknown, path: string): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw invalid(`${path} must be a string or a list of blocks`);
  let joined = "";
  content.forEach((block, i) => {
    if (!isRecord(block) || block.type !== "text" || typeof block.text !== "string") {
      throw invalid(`${path}/${i}: only text blocks fit a message of this role`);
    }
    joined += block.text;
  });
  return joined;
}

function activityContent(content: unknown, path: string): Rec {
  if (isRecord(content)) return content;
  if (Array.isArray(content) && content.length === 1) {
    const block = content[0];
    if (isRecord(block) && block.type === "activity" && isRecord(block.content))
      return block.content;
  }
  throw invalid(`${path} must be an object or a single activity block`);
}

function toolCall(call: unknown, path: string): Rec {
  if (!isRecord(call) || typeof call.id !== "string") throw invalid(`${path}/id must be a string`);
  let name: unknown;
  let args: unknown;
  if (isRecord(call.function)) {
    name = call.function.name;
    args = call.function.arguments;
  } else {
    name = call.name;
    args = call.args ?? call.arguments;
  }
  if (typeof name !== "string") throw invalid(`${path}: a tool call needs a function name`);
  const out: Rec = {
    id: call.id,
    type: "function",
    function: {
      name,
      arguments: typeof args === "string" ? args : args === undefined ? "" : JSON.stringify(args),
    },
  };
  if (typeof call.encryptedValue === "string") out.encryptedValue = call.encryptedValue;
  if (isRecord(call.metadata)) out.metadata = call.metadata;
  return out;
}
