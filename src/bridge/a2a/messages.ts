/**
 * A2A messages ⇄ ACP messages (and through them AG-UI's).
 *
 * A2A → ACP (a message a client sends):
 * - `messageId` becomes the message `id` (and so the AG-UI message id the agent sees);
 *   `ROLE_USER` is `user`, `ROLE_AGENT` is `assistant`.
 * - A single text part is the content string; several parts are a list of blocks: a text part
 *   a text block, a data part a text block holding its JSON (agents read text), a file part
 *   (`raw` or `url`) the AG-UI media part of its kind (see parts.ts).
 *
 * ACP → A2A (a task's history): a user message is `ROLE_USER`, any other role `ROLE_AGENT`;
 * text content is one text part, media blocks file parts; tool messages and messages without
 * content are left out (tool results are artifacts, see task-events.ts).
 */
import type { Interrupt } from "@ag-ui/core";
import type { AcpContentBlock, AcpMessage } from "../acp/messages.js";
import { invalidParams } from "./errors.js";
import { aguiPartToA2a, fileToAguiPart, isBase64, isMediaPart } from "./parts.js";
import type { Message, Part, Role } from "./types.js";

type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The ids an A2A message of a task carries. */
export interface TaskIds {
  taskId: string;
  contextId: string;
}

/** Longest id (message, context, task) a message may carry. */
const MAX_ID = 1000;
/** Longest file URL, media type and file name. */
const MAX_URL = 8192;
const MAX_NAME = 1024;

function optionalString(value: Rec, key: string, at: string, max: number): void {
  const field = value[key];
  if (field !== undefined && (typeof field !== "string" || field.length > max)) {
    throw invalidParams(`${at}.${key} must be a string of at most ${max} characters`);
  }
}

/**
 * Checks the shape of a message a client sent (read as ProtoJSON already, see protojson.ts);
 * throws InvalidParams naming the fault. What its parts may carry (media types, sizes) is the
 * agent's to say: see `checkParts` (parts.ts).
 */
export function checkMessage(value: unknown, at = "message"): Message {
  if (!isRecord(value)) throw invalidParams(`${at} must be an object`);
  if (typeof value.messageId !== "string" || value.messageId === "") {
    throw invalidParams(`${at}.messageId must be a non-empty string`);
  }
  if (value.messageId.length > 200) throw invalidParams(`${at}.messageId is longer than 200`);
  if (value.role !== "ROLE_USER" && value.role !== "ROLE_AGENT") {
    throw invalidParams(`${at}.role must be ROLE_USER or ROLE_AGENT`);
  }
  optionalString(value, "contextId", at, MAX_ID);
  optionalString(value, "taskId", at, MAX_ID);
  if (!Array.isArray(value.parts) || value.parts.length === 0) {
    throw invalidParams(`${at}.parts must be a non-empty list`);
  }
  for (const [index, part] of value.parts.entries()) checkPart(part, `${at}.parts[${index}]`);
  if (value.metadata !== undefined && !isRecord(value.metadata)) {
    throw invalidParams(`${at}.metadata must be an object`);
  }
  return value as unknown as Message;
}

function checkPart(part: unknown, at: string): void {
  if (!isRecord(part)) throw invalidParams(`${at} must be an object`);
  const set = ["text", "raw", "url", "data"].filter((key) => part[key] !== undefined);
  if (set.length !== 1) {
    throw invalidParams(
      `${at} must have exactly one of text, raw, url or data (has ${set.length})`,
    );
  }
  if (part.text !== undefined && typeof part.text !== "string") {
    throw invalidParams(`${at}.text must be a string`);
  }
  if (part.raw !== undefined && (typeof part.raw !== "string" || !isBase64(part.raw))) {
    throw invalidParams(`${at}.raw must be the file's bytes in base64`);
  }
  if (part.url !== undefined) {
    if (typeof part.url !== "string" || part.url.length > MAX_URL || !URL.canParse(part.url)) {
      throw invalidParams(`${at}.url must be an absolute URL of at most ${MAX_URL} characters`);
    }
  }
  optionalString(part, "mediaType", at, MAX_NAME);
  optionalString(part, "filename", at, MAX_NAME);
  if (part.metadata !== undefined && !isRecord(part.metadata)) {
    throw invalidParams(`${at}.metadata must be an object`);
  }
}

/** A client's message as the ACP message a run adds to its thread. */
export function a2aToAcpMessage(message: Message): AcpMessage {
  const role = message.role === "ROLE_AGENT" ? "assistant" : "user";
  const [only] = message.parts;
  if (message.parts.length === 1 && only && typeof only.text === "string") {
    return { id: message.messageId, role, content: only.text };
  }
  return { id: message.messageId, role, content: message.parts.map(partBlock) };
}

function partBlock(part: Part): AcpContentBlock {
  if (typeof part.text === "string") return { type: "text", text: part.text };
  if (part.raw !== undefined || part.url !== undefined) {
    return fileToAguiPart(part) as AcpContentBlock;
  }
  return { type: "text", text: JSON.stringify(part.data ?? null) };
}

/** The text of an ACP message's content; undefined when it has none. */
export function acpText(content: unknown): string | undefined {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content
    .filter((block) => isRecord(block) && block.type === "text" && typeof block.text === "string")
    .map((block) => (block as { text: string }).text);
  return texts.length > 0 ? texts.join("\n") : undefined;
}

/** An ACP (or AG-UI) message as an A2A history message; undefined for tool and empty ones. */
export function acpToA2aMessage(message: unknown, ids: TaskIds): Message | undefined {
  if (!isRecord(message) || message.role === "tool") return undefined;
  const parts = contentParts(message.content);
  if (parts.length === 0) return undefined;
  const role: Role =
    message.role === "user" || message.role === "human" ? "ROLE_USER" : "ROLE_AGENT";
  return {
    messageId: typeof message.id === "string" ? message.id : `${ids.taskId}-${role}`,
    contextId: ids.contextId,
    taskId: ids.taskId,
    role,
    parts,
  };
}

/**
 * The parts of ACP (or AG-UI) content: its text (text blocks joined, as one part), and each
 * media block as a file part, in order.
 */
export function contentParts(content: unknown): Part[] {
  if (typeof content === "string") return content === "" ? [] : [{ text: content }];
  if (!Array.isArray(content)) return [];
  if (!content.some(isMediaPart)) {
    const text = acpText(content);
    return text === undefined || text === "" ? [] : [{ text }];
  }
  return content.flatMap((block) => {
    const part = aguiPartToA2a(block);
    return part === undefined || part.text === "" ? [] : [part];
  });
}

/**
 * The status message of an `input-required` task: one line of text per open interrupt (its
 * message, else its reason) and a data part `{"interrupts": [...]}` holding them as the agent
 * raised them (ids, reasons, response schemas), for a client to answer.
 */
export function interruptMessage(interrupts: readonly Rec[], ids: TaskIds): Message {
  const lines = interrupts.map((interrupt) => {
    const text = interrupt.message ?? interrupt.reason ?? "input required";
    return typeof text === "string" ? text : JSON.stringify(text);
  });
  return {
    messageId: `${ids.taskId}-input-required-${interrupts.map((i) => String(i.id)).join("-")}`,
    contextId: ids.contextId,
    taskId: ids.taskId,
    role: "ROLE_AGENT",
    parts: [{ text: lines.join("\n") }, { data: { interrupts } }],
  };
}

/**
 * What an interrupt expects its answer to be: the JSON Schema it (or the agent's descriptor)
 * declares, or nothing declared (the default: the answer goes in the default shape below).
 */
export type ExpectedAnswer = { schema: Rec } | "undeclared";

/**
 * The AG-UI resume a follow-up message gives an `input-required` task. A data part
 * `{"resume": [ResumeEntry, …]}` is the native form and may answer several interrupts. Otherwise
 * the one open interrupt is resolved with the message's first data part, or its text (a bare
 * "yes"):
 *
 * - where the interrupt and the agent's descriptor declare no schema for the answer, it reaches
 *   the agent in the default shape, an object as every resume payload is by default: the text as
 *   `{"text": "yes"}`, a data part's object as it is, any other data as `{"data": …}`;
 * - where a schema is declared, the text as a string and the data as it is, checked by the run
 *   service against the interrupt's `responseSchema` and the descriptor's `resume_payload`.
 */
export function resumeBodyOf(
  message: Message,
  interrupts: readonly Interrupt[],
  expected: ExpectedAnswer = "undeclared",
): Rec {
  const data = message.parts.find((part) => part.data !== undefined)?.data;
  if (isRecord(data) && Array.isArray(data.resume)) return { resume: data.resume };
  if (interrupts.length !== 1) {
    throw invalidParams(
      `the task waits for ${interrupts.length} answers: send a data part {"resume": [{"interruptId": …, "status": "resolved", "payload": …}, …]} answering each`,
    );
  }
  const text = message.parts
    .filter((part) => typeof part.text === "string")
    .map((part) => part.text)
    .join("\n");
  let payload: unknown;
  if (expected !== "undeclared") payload = data !== undefined ? data : text;
  else if (data === undefined) payload = { text };
  else payload = isRecord(data) ? data : { data };
  return { resume: [{ interruptId: interrupts[0]!.id, status: "resolved", payload }] };
}

/** What a refused answer should have been, in A2A's terms (for the InvalidParams message). */
export function describeExpected(expected: ExpectedAnswer): string {
  if (expected === "undeclared") return "a text or data answer";
  const { schema } = expected;
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const takesText = schema.type === undefined || types.includes("string");
  const shown = JSON.stringify(schema);
  const excerpt = shown.length > 300 ? `${shown.slice(0, 300)}…` : shown;
  return `${takesText ? "text, or " : ""}a data part matching the schema ${excerpt}`;
}
