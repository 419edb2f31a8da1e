/**
 * A2A parts ⇄ AG-UI content parts (and ACP content blocks, which carry AG-UI parts as they are).
 *
 * | A2A part                                   | AG-UI part                                           |
 * | ------------------------------------------ | ---------------------------------------------------- |
 * | `{text}`                                   | `{type: "text", text}`                               |
 * | `{raw, mediaType, filename?}`              | `{type: <kind>, source: {type: "data", value: raw, mimeType: mediaType}, metadata: {filename}}` |
 * | `{url, mediaType?, filename?}`             | `{type: <kind>, source: {type: "url", value: url, mimeType?}, metadata: {filename}}` |
 * | `{data}`                                   | a text part holding its JSON (agents read text)      |
 *
 * The kind is the media type's: `image/*` → image, `audio/*` → audio, `video/*` → video,
 * anything else a document. A part's `metadata` object goes with it (AG-UI parts carry no name
 * of their own: the filename travels as `metadata.filename`). An AG-UI part whose source is a
 * provider's file handle (`{type: "file"}`) has no A2A form (A2A has no handles, and a handle
 * must not be fetched): it becomes a data part holding the AG-UI part.
 */
import { A2aError, invalidParams } from "./errors.js";
import type { Message, Part } from "./types.js";

type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export type MediaKind = "image" | "audio" | "video" | "document";
const MEDIA_KINDS: ReadonlySet<string> = new Set(["image", "audio", "video", "document"]);

/** The media type a part without one is taken as. */
export const UNTYPED_MEDIA = "application/octet-stream";

/** The media type of what a part carries: text, JSON data, or a file's own (stated) type. */
export function mediaTypeOf(part: Part): string {
  if (part.text !== undefined) return "text/plain";
  if (part.data !== undefined) return "application/json";
  return part.mediaType ? part.mediaType : UNTYPED_MEDIA;
}

export function mediaKind(mediaType: string | undefined): MediaKind {
  const type = (mediaType ?? "").toLowerCase();
  if (type.startsWith("image/")) return "image";
  if (type.startsWith("audio/")) return "audio";
  if (type.startsWith("video/")) return "video";
  return "document";
}

/** `image/png; q=1` → `image/png` (lower case, parameters dropped). */
const essence = (mediaType: string) => mediaType.split(";")[0]!.trim().toLowerCase();

/** Whether `mediaType` is one of `modes` (each a media type, `type/*` or `*​/*`). */
export function acceptsMedia(modes: readonly string[], mediaType: string): boolean {
  const [type, subtype] = essence(mediaType).split("/");
  return modes.some((mode) => {
    const [modeType, modeSubtype] = essence(mode).split("/");
    if (modeType === "*") return true;
    return modeType === type && (modeSubtype === "*" || modeSubtype === subtype);
  });
}

/** The decoded size of a base64 text (padding and whitespace not counted). */
export function base64Bytes(text: string): number {
  let chars = 0;
  let padding = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x3d) padding++;
    else if (c > 0x20) chars++;
  }
  return Math.floor(((chars + padding) * 3) / 4) - padding;
}

/** Standard or URL-safe base64, padded or not (ProtoJSON parsers take both alphabets). */
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

export function isBase64(text: string): boolean {
  return text.length % 4 !== 1 && BASE64.test(text);
}

/** How many bytes a part weighs toward a message's size: its text, JSON or file bytes. */
export function partBytes(part: Part): number {
  if (typeof part.text === "string") return Buffer.byteLength(part.text, "utf8");
  if (typeof part.raw === "string") return base64Bytes(part.raw);
  if (typeof part.url === "string") return Buffer.byteLength(part.url, "utf8");
  return Buffer.byteLength(JSON.stringify(part.data ?? null), "utf8");
}

/** URL-safe base64 as the standard alphabet, which AG-UI's data sources and data: URLs use. */
const standardBase64 = (text: string) =>
  /[-_]/.test(text) ? text.replaceAll("-", "+").replaceAll("_", "/") : text;

/** A file part (raw or url) as the AG-UI media part it is. */
export function fileToAguiPart(part: Part): Rec {
  const mediaType = part.mediaType || undefined;
  const source =
    typeof part.raw === "string"
      ? { type: "data", value: standardBase64(part.raw), mimeType: mediaType ?? UNTYPED_MEDIA }
      : { type: "url", value: part.url, ...(mediaType ? { mimeType: mediaType } : {}) };
  const metadata: Rec = isRecord(part.metadata) ? { ...part.metadata } : {};
  if (part.filename) metadata.filename = part.filename;
  return {
    type: mediaKind(mediaType),
    source,
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
}

/** Whether an AG-UI part (or ACP content block) is a media part. */
export const isMediaPart = (part: unknown): part is Rec =>
  isRecord(part) && MEDIA_KINDS.has(String(part.type)) && isRecord(part.source);

/**
 * An AG-UI content part as an A2A part: text as text, media with a data or URL source as a file
 * part (`raw` or `url`, `mediaType`, and `filename` from `metadata.filename`), a file handle as
 * a data part holding the AG-UI part; undefined for anything else.
 */
export function aguiPartToA2a(part: unknown): Part | undefined {
  if (!isRecord(part)) return undefined;
  if (part.type === "text") {
    return typeof part.text === "string"
      ? withMetadata({ text: part.text }, part.metadata)
      : undefined;
  }
  if (!isMediaPart(part)) return undefined;
  const source = part.source as Rec;
  const mimeType = typeof source.mimeType === "string" && source.mimeType ? source.mimeType : "";
  const { filename, ...rest } = isRecord(part.metadata) ? part.metadata : ({} as Rec);
  const named = typeof filename === "string" && filename ? { filename } : {};
  const metadata = Object.keys(rest).length > 0 ? rest : undefined;
  if (source.type === "data" && typeof source.value === "string") {
    return withMetadata(
      { raw: source.value, mediaType: mimeType || UNTYPED_MEDIA, ...named },
      metadata,
    );
  }
  if (source.type === "url" && typeof source.value === "string") {
    return withMetadata(
      { url: source.value, ...(mimeType ? { mediaType: mimeType } : {}), ...named },
      metadata,
    );
  }
  return { data: part, ...(mimeType ? { mediaType: mimeType } : {}) };
}

function withMetadata(part: Part, metadata: unknown): Part {
  if (isRecord(metadata) && Object.keys(metadata).length > 0) part.metadata = metadata;
  return part;
}

/** What an agent takes in a message's parts: media types and sizes (its `a2a` settings). */
export interface PartPolicy {
  /** Media types (or ranges, `image/*`) the agent takes. */
  inputModes: readonly string[];
  /** Largest part (a file's decoded bytes, a text's UTF-8 bytes). */
  maxPartBytes: number;
  /** Largest message, all its parts together. */
  maxMessageBytes: number;
}

const mib = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${Number((bytes / 1024 / 1024).toFixed(2))} MiB` : `${bytes} bytes`;

/**
 * Refuses a message whose parts the agent does not take: a media type outside its input modes
 * (ContentTypeNotSupported), a part or a message over its size bounds (InvalidParams), each
 * naming the part.
 */
export function checkParts(message: Message, policy: PartPolicy, at = "message"): void {
  let total = 0;
  for (const [index, part] of message.parts.entries()) {
    const where = `${at}.parts[${index}]`;
    const mediaType = mediaTypeOf(part);
    if (!acceptsMedia(policy.inputModes, mediaType)) {
      throw new A2aError(
        "ContentTypeNotSupported",
        `${where} is ${mediaType}: this agent takes ${policy.inputModes.join(", ")} (its card's defaultInputModes)`,
      );
    }
    const bytes = partBytes(part);
    if (bytes > policy.maxPartBytes) {
      throw invalidParams(
        `${where} holds ${mib(bytes)}: this agent takes at most ${mib(policy.maxPartBytes)} per part (a2a.maxPartBytes)`,
      );
    }
    total += bytes;
  }
  if (total > policy.maxMessageBytes) {
    throw invalidParams(
      `${at} holds ${mib(total)}: this agent takes at most ${mib(policy.maxMessageBytes)} per message (a2a.maxMessageBytes)`,
    );
  }
}
