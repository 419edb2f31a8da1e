/**
 * A2A messages ⇄ ACP messages (and through them AG-UI's).
 *
 * A2A → ACP (a message a client sends):
 * - `messageId` becomes the message `id` (and so the AG-UI message id the agent sees);
 *   `ROLE_USER` is `user`, `ROLE_AGENT` is `assistant`.
 * - A single text part is the content string; several parts are a list of text blocks. A data
 *   part becomes a text block holding its JSON (agents read text). File parts (`raw`, `url`) do
 *   not map: ContentTypeNotSupported.
 *
 * ACP → A2A (a task's history): a user message is `ROLE_USER`, any other role `ROLE_AGENT`;
 * text content is one text part; tool messages and messages without text are left out (tool
 * results are artifacts, see task-events.ts).
 */
import type { Interrupt } from "@ag-ui/core";
import type { AcpMessage } from "../acp/messages.js";
import { A2aError, invalidParams } from "./errors.js";
import type { Message, Part, Role } from "./types.js";

type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The ids an A2A message of a task carries. */
export interface TaskIds {
  taskId: string;
  contextId: string;
}

/** Checks the shape of a message a client sent; throws InvalidParams naming the fault. */
export function checkMessage(value: unknown, at = "message"): Message {
  if (!isRecord(value)) throw invalidParams(`${at} must be an object`);
  if (typeof value.messageId !== "string" || value.messageId === "") {
    throw invalidParams(`${at}.messageId must be a non-empty string`);
  }
  if (value.messageId.length > 200) throw invalidParams(`${at}.messageId is longer than 200`);
  // ProtoJSON readers accept an enum's number as well as its name.
  if (value.role === 1) value.role = "ROLE_USER";
  if (value.role === 2) value.role = "ROLE_AGENT";
  if (value.role !== "ROLE_USER" && value.role !== "ROLE_AGENT") {
    throw invalidParams(`${at}.role must be ROLE_USER or ROLE_AGENT`);
  }
  for (const key of ["contextId", "taskId"] as const) {
    const id = value[key];
    if (id !== undefined && (typeof id !== "string" || id.length > 1000)) {
      throw invalidParams(`${at}.${key} must be a string of at most 1000 characters`);
    }
  }
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
  if (part.raw !== undefined || part.url !== undefined) {
    throw new A2aError(
      "ContentTypeNotSupported",
      `${at} is a file part (${part.raw !== undefined ? "raw" : "url"}): this agent takes text and data parts only`,
    );
  }
}

/** A client's message as the ACP message a run adds to its thread. */
export function a2aToAcpMessage(message: Message): AcpMessage {
  const texts = message.parts.map(partText);
  const content =
    texts.length === 1 ? texts[0]! : texts.map((text) => ({ type: "text", text }) as const);
  return {
    id: message.messageId,
    role: message.role === "ROLE_AGENT" ? "assistant" : "user",
    content,
  };
}

function partText(part: Part): string {
  if (typeof part.text === "string") return part.text;
  return JSON.stringify(part.data ?? null);
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
  const text = acpText(message.content);
  if (text === undefined || text === "") return undefined;
  const role: Role =
    message.role === "user" || message.role === "human" ? "ROLE_USER" : "ROLE_AGENT";
  return {
    messageId: typeof message.id === "string" ? message.id : `${ids.taskId}-${role}`,
    contextId: ids.contextId,
    taskId: ids.taskId,
    role,
    parts: [{ text }],
  };
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
 * The AG-UI resume a follow-up message gives an `input-required` task. A data part
 * `{"resume": [ResumeEntry, …]}` is the native form and may answer several interrupts. Otherwise
 * the one open interrupt is resolved with the message's first data part, or its text (a bare
 * "yes"). The payload is then checked by the run service against the interrupt's
 * `responseSchema` and the descriptor's `resume_payload`.
 */
export function resumeBodyOf(message: Message, interrupts: readonly Interrupt[]): Rec {
  const data = message.parts.find((part) => part.data !== undefined)?.data;
  if (isRecord(data) && Array.isArray(data.resume)) return { resume: data.resume };
  if (interrupts.length !== 1) {
    throw invalidParams(
      `the task waits for ${interrupts.length} answers: send a data part {"resume": [{"interruptId": …, "status": "resolved", "payload": …}, …]} answering each`,
    );
  }
  const texts = message.parts.filter((part) => typeof part.text === "string");
  const payload = data !== undefined ? data : texts.map((part) => part.text).join("\n");
  return { resume: [{ interruptId: interrupts[0]!.id, status: "resolved", payload }] };
}
