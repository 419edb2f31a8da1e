/**
 * The always-on pre-1.0 compatibility boundary, as @ag-ui/client's `CompatibilityBoundary`
 * applies it to every stream: retired-but-understood shapes are upgraded to their 1.0
 * equivalent with a warning, so an older adapter's data is not lost. Not version-gated —
 * a legacy shape arriving is itself the proof the producer is old, and on a 1.0 stream
 * nothing here runs (the pipeline only calls in for unknown types or events that failed
 * validation).
 *
 * - THINKING_* events → REASONING_* (ids minted per segment, as the client does).
 * - Legacy nulls → absent: `rawEvent`, `RUN_FINISHED`/`SUBAGENT_FINISHED` `result` and
 *   `outcome`, `parentMessageId` on TOOL_CALL_START/TOOL_CALL_CHUNK, optional nulls inside
 *   `RUN_STARTED.input`.
 * - Legacy `binary` content parts inside MESSAGES_SNAPSHOT / RUN_STARTED.input messages →
 *   the modern image/audio/video/document parts.
 */
import { randomUUID } from "node:crypto";
import type { EventRecord } from "./types.js";

type Warn = (text: string) => void;
type Rec = Record<string, unknown>;

const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export const LEGACY_EVENT_TYPES: ReadonlySet<string> = new Set([
  "THINKING_START",
  "THINKING_END",
  "THINKING_TEXT_MESSAGE_START",
  "THINKING_TEXT_MESSAGE_CONTENT",
  "THINKING_TEXT_MESSAGE_END",
]);

const converted = (from: string, to: string) =>
  `converted deprecated ${from} to ${to} (retired from AG-UI 1.0)`;

/** Per-segment translator for the THINKING_* family. */
export class LegacyTranslator {
  private reasoningId: string | null = null;
  private messageId: string | null = null;

  /** The 1.0 event for a legacy `event`, or undefined when `event.type` is not legacy. */
  translate(event: EventRecord, warn: Warn): EventRecord | undefined {
    switch (event.type) {
      case "THINKING_START": {
        const { title, ...rest } = event;
        this.reasoningId = randomUUID();
        warn(converted("THINKING_START", "REASONING_START"));
        if (title !== undefined) {
          warn(
            `dropped THINKING_START.title ${JSON.stringify(title)}: REASONING_START has no title`,
          );
        }
        return { ...rest, type: "REASONING_START", messageId: this.reasoningId };
      }
      case "THINKING_TEXT_MESSAGE_START":
        this.messageId = randomUUID();
        warn(converted("THINKING_TEXT_MESSAGE_START", "REASONING_MESSAGE_START"));
        return {
          ...event,
          type: "REASONING_MESSAGE_START",
          messageId: this.messageId,
          role: "reasoning",
        };
      case "THINKING_TEXT_MESSAGE_CONTENT":
        warn(converted("THINKING_TEXT_MESSAGE_CONTENT", "REASONING_MESSAGE_CONTENT"));
        return {
          ...event,
          type: "REASONING_MESSAGE_CONTENT",
          messageId: this.continuationId(event.type, this.messageId, warn),
        };
      case "THINKING_TEXT_MESSAGE_END": {
        const messageId = this.continuationId(event.type, this.messageId, warn);
        this.messageId = null;
        warn(converted("THINKING_TEXT_MESSAGE_END", "REASONING_MESSAGE_END"));
        return { ...event, type: "REASONING_MESSAGE_END", messageId };
      }
      case "THINKING_END": {
        const messageId = this.continuationId(event.type, this.reasoningId, warn);
        this.reasoningId = null;
        warn(converted("THINKING_END", "REASONING_END"));
        return { ...event, type: "REASONING_END", messageId };
      }
      default:
        return undefined;
    }
  }

  private continuationId(from: string, established: string | null, warn: Warn): string {
    if (established !== null) return established;
    const minted = randomUUID();
    warn(`minted messageId '${minted}' for ${from}: no THINKING opener preceded it`);
    return minted;
  }
}

function omitNull(value: Rec, field: string, context: string, warn: Warn): Rec {
  if (value[field] !== null) return value;
  warn(`converted legacy ${context}.${field}: null to an absent field`);
  const { [field]: _null, ...rest } = value;
  return rest;
}

function mapArray(value: Rec, field: string, fn: (entry: unknown) => unknown): Rec {
  const original = value[field];
  if (!Array.isArray(original)) return value;
  const entries = original.map(fn);
  return entries.some((entry, i) => entry !== original[i]) ? { ...value, [field]: entries } : value;
}

const MEDIA = new Set(["image", "audio", "video", "document"]);

function mediaKind(mimeType: string): "image" | "audio" | "video" | "document" {
  if (mimeType.startsWith("image/")) return "image";
  if (mimeType.startsWith("audio/")) return "audio";
  if (mimeType.startsWith("video/")) return "video";
  return "document";
}

/**
 * A legacy `{type: "binary", mimeType, data | url, filename?}` part as a 1.0 media part, or
 * the part unchanged when it is not one (or carries only an id, which 1.0 cannot express).
 */
export function upgradeBinaryPart(part: unknown): unknown {
  if (!isRecord(part) || part.type !== "binary" || typeof part.mimeType !== "string") return part;
  const source =
    typeof part.data === "string" && part.data !== ""
      ? { type: "data", value: part.data, mimeType: part.mimeType }
      : typeof part.url === "string" && part.url !== ""
        ? { type: "url", value: part.url, mimeType: part.mimeType }
        : undefined;
  if (!source) return part;
  const filename = typeof part.filename === "string" && part.filename ? part.filename : undefined;
  return {
    type: mediaKind(part.mimeType),
    source,
    ...(filename !== undefined && { metadata: { filename } }),
  };
}

const sameSource = (a: unknown, b: Rec): boolean =>
  isRecord(a) &&
  a.type === b.type &&
  isRecord(a.source) &&
  isRecord(b.source) &&
  a.source.type === b.source.type &&
  a.source.value === b.source.value &&
  a.source.mimeType === b.source.mimeType;

/**
 * Upgrades legacy binary parts in a message's content list. A binary part that merely
 * mirrors a modern part already in the list is dropped rather than duplicated (as the
 * client does). Returns the message itself when there is nothing to upgrade.
 */
export function upgradeMessageContent<T>(message: T): T {
  if (!isRecord(message) || !Array.isArray(message.content)) return message;
  const parts = message.content as unknown[];
  if (!parts.some((p) => isRecord(p) && p.type === "binary")) return message;
  const out: unknown[] = [];
  for (const part of parts) {
    const upgraded = upgradeBinaryPart(part);
    if (upgraded !== part && isRecord(upgraded)) {
      const mirrored = parts.some(
        (other) =>
          isRecord(other) &&
          MEDIA.has(String(other.type)) &&
          sameSource(other, upgraded) &&
          (!isRecord(upgraded.metadata) ||
            (isRecord(other.metadata) && other.metadata.filename === upgraded.metadata.filename)),
      );
      if (mirrored) continue;
    }
    out.push(upgraded);
  }
  return { ...message, content: out } as T;
}

function upgradeInboundMessage(message: unknown, warn: Warn): unknown {
  if (!isRecord(message)) return message;
  let m: Rec = mapArray(message, "content", (part) =>
    isRecord(part) && MEDIA.has(String(part.type))
      ? omitNull(part, "metadata", `${String(part.type)} content part`, warn)
      : part,
  );
  const upgraded = upgradeMessageContent(m);
  if (upgraded !== m) {
    warn("converted legacy binary content parts to 1.0 media parts");
    m = upgraded;
  }
  return m;
}

function normalizeRunInput(input: unknown, warn: Warn): unknown {
  if (!isRecord(input)) return input;
  let out = omitNull(input, "forwardedProps", "RunAgentInput", warn);
  out = mapArray(out, "tools", (t) => (isRecord(t) ? omitNull(t, "parameters", "Tool", warn) : t));
  out = mapArray(out, "resume", (r) =>
    isRecord(r) ? omitNull(r, "payload", "ResumeEntry", warn) : r,
  );
  return mapArray(out, "messages", (m) => upgradeInboundMessage(m, warn));
}

/**
 * Upgrades the legacy shapes a known event may carry. Returns the event itself when there
 * is nothing to upgrade; otherwise a copy (the input is never mutated).
 */
export function normalizeLegacyEvent(event: EventRecord, warn: Warn): EventRecord {
  let e: Rec = omitNull(event, "rawEvent", event.type, warn);
  switch (event.type) {
    case "RUN_FINISHED":
      e = omitNull(omitNull(e, "result", event.type, warn), "outcome", event.type, warn);
      break;
    case "SUBAGENT_FINISHED":
      e = omitNull(e, "result", event.type, warn);
      break;
    case "TOOL_CALL_START":
    case "TOOL_CALL_CHUNK":
      e = omitNull(e, "parentMessageId", event.type, warn);
      break;
    case "MESSAGES_SNAPSHOT":
      e = mapArray(e, "messages", (m) => upgradeInboundMessage(m, warn));
      break;
    case "RUN_STARTED": {
      const input = normalizeRunInput(e.input, warn);
      if (input !== e.input) e = { ...e, input };
      break;
    }
  }
  return e as EventRecord;
}
