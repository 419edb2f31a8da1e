/**
 * Stage 3: accumulate messages and state exactly as an AG-UI client would
 * (@ag-ui/client `defaultApplyEvents` is the reference), with id indexes instead of linear
 * scans so a long thread costs the same per token as a short one.
 *
 * - Text and reasoning messages are created by their START (role defaults to assistant),
 *   appended to by CONTENT; metadata from START/CONTENT/END merges into the message key by
 *   key, last write wins, never recursing.
 * - TOOL_CALL_START adds `{id, type: "function", function: {name, arguments: ""}}` to the
 *   assistant message named by `parentMessageId` (created when absent; a non-assistant
 *   message of that id, or no parent, means a new assistant message keyed by the call id);
 *   ARGS append to `arguments`; a replayed START updates the existing call.
 * - TOOL_CALL_RESULT mints a tool message placed right after the assistant message that
 *   made the call (after results already recorded for it), content kept as sent.
 * - ACTIVITY_SNAPSHOT creates or (unless `replace: false`) replaces an activity message;
 *   ACTIVITY_DELTA patches its content (a missing target is skipped with a warning).
 * - MESSAGES_SNAPSHOT is reconciled by id: messages it names are replaced, new ones are
 *   appended, others are removed — except activity/reasoning messages when the snapshot
 *   carries none of that role (and activity types the snapshot's metadata does not claim).
 * - STATE_SNAPSHOT replaces the state (any JSON value, null included). STATE_DELTA applies
 *   RFC 6902 atomically: if any operation fails, a warning naming "Failed to apply state
 *   patch" is given and the prior state stays exactly as it was.
 *
 * Ownership: the state is never mutated in place (a delta produces a new document that
 * shares what it did not change), so a caller may keep a reference to `state` as a
 * checkpoint. Messages are mutated in place as
 * tokens arrive; copy or serialize `messages` to keep them beyond the next event. Events
 * are never mutated: messages taken from an event (snapshots, RUN_STARTED.input) are copied
 * before anything is appended to them.
 */
import { applyPatchAtomically } from "./json-patch.js";
import { jsonSize, type StateBounds } from "./shape.js";
import type { EventRecord } from "./types.js";

type Rec = Record<string, unknown>;
/** An accumulated message: owned by the accumulator, mutable. */
type Msg = Rec & { id: string; role: string };
type Call = Rec & { id: string; function: { name: string; arguments: string } };

export const STATE_CHANGED = 1;
export const MESSAGES_CHANGED = 2;

const ACTIVITY_HISTORY_METADATA = "@ag-ui/client";

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A copy of a foreign message that may be appended to without touching the original. */
function own(message: Rec): Msg {
  const copy = { ...message } as Msg;
  if (Array.isArray(message.toolCalls)) {
    copy.toolCalls = (message.toolCalls as Rec[]).map((tc) =>
      isRecord(tc) && isRecord(tc.function) ? { ...tc, function: { ...tc.function } } : tc,
    );
  }
  return copy;
}

function mergeMetadata(target: Rec, event: EventRecord): boolean {
  const incoming = event.metadata;
  if (incoming === undefined) return false;
  const existing = target.metadata;
  target.metadata = isRecord(existing)
    ? { ...existing, ...(incoming as Rec) }
    : { ...(incoming as Rec) };
  return true;
}

/** Which activity types a MESSAGES_SNAPSHOT declares authority over (see @ag-ui/client). */
function authoritativeActivityTypes(event: EventRecord): string[] | null | undefined {
  const metadata = event.metadata;
  if (!isRecord(metadata) || !Object.hasOwn(metadata, ACTIVITY_HISTORY_METADATA)) return undefined;
  const value = metadata[ACTIVITY_HISTORY_METADATA];
  if (!isRecord(value)) return [];
  if (!Object.hasOwn(value, "authoritativeActivityTypes")) return undefined;
  const types = value.authoritativeActivityTypes;
  if (types === null) return null;
  return Array.isArray(types) && types.every((t) => typeof t === "string") ? types : [];
}

/**
 * Takes a text or reasoning message's delta instead of the accumulator appending it to the
 * message's `content`: true when it did (the message's text is then the taker's to keep, and its
 * `content` is no longer it), false to leave it to the accumulator.
 */
export type TextTaker = (message: Rec, delta: string) => boolean;

export class Accumulator {
  state: unknown;
  private list: Msg[];
  private readonly byId = new Map<string, Msg>();
  private readonly calls = new Map<string, { call: Call; message: Msg }>();
  private startedCalls: string[] = [];
  private answeredCalls = new Set<string>();

  /** `stateBounds` throws a ShapeError for a state it refuses; the state is then unchanged. */
  constructor(
    initialState: unknown,
    initialMessages: readonly unknown[],
    private readonly stateBounds?: StateBounds,
    private readonly takeText?: TextTaker,
  ) {
    this.state = initialState;
    this.list = initialMessages.filter(isRecord).map(own);
    this.reindex();
  }

  get messages(): readonly Msg[] {
    return this.list;
  }

  /** Tool calls started in the current run that no TOOL_CALL_RESULT answered, in order. */
  get unansweredToolCalls(): string[] {
    return this.startedCalls.filter((id) => !this.answeredCalls.has(id));
  }

  private reindex(): void {
    this.byId.clear();
    this.calls.clear();
    for (const m of this.list) this.index(m);
  }

  private index(m: Msg): void {
    if (!this.byId.has(m.id)) this.byId.set(m.id, m);
    if (m.role !== "assistant" || !Array.isArray(m.toolCalls)) return;
    for (const call of m.toolCalls as Call[]) {
      if (isRecord(call) && !this.calls.has(call.id)) this.calls.set(call.id, { call, message: m });
    }
  }

  private add(m: Msg): void {
    this.list.push(m);
    this.index(m);
  }

  /** Applies one (verified, canonical) event. Returns STATE_CHANGED | MESSAGES_CHANGED bits. */
  apply(event: EventRecord, warn: (text: string) => void): number {
    switch (event.type) {
      case "TEXT_MESSAGE_START":
      case "REASONING_MESSAGE_START":
        return this.startMessage(event, warn);
      case "TEXT_MESSAGE_CONTENT":
      case "REASONING_MESSAGE_CONTENT": {
        const target = this.streamTarget(event, warn);
        if (!target) return 0;
        const delta = event.delta as string;
        let changed = 0;
        if (delta !== "") {
          this.stateBounds?.messagesGrow(delta.length);
          if (this.takeText === undefined || !this.takeText(target, delta)) {
            target.content = `${typeof target.content === "string" ? target.content : ""}${delta}`;
          }
          changed = MESSAGES_CHANGED;
        }
        return mergeMetadata(target, event) ? MESSAGES_CHANGED : changed;
      }
      case "TEXT_MESSAGE_END":
      case "REASONING_MESSAGE_END": {
        const target = this.streamTarget(event, warn);
        return target && mergeMetadata(target, event) ? MESSAGES_CHANGED : 0;
      }
      case "TOOL_CALL_START":
        return this.toolCallStart(event, warn);
      case "TOOL_CALL_ARGS": {
        const entry = this.calls.get(event.toolCallId as string);
        if (!entry) {
          warn(`TOOL_CALL_ARGS: no message holds tool call '${String(event.toolCallId)}'`);
          return 0;
        }
        const delta = event.delta as string;
        let changed = 0;
        if (delta !== "") {
          this.stateBounds?.messagesGrow(delta.length);
          entry.call.function.arguments += delta;
          changed = MESSAGES_CHANGED;
        }
        return mergeMetadata(entry.call, event) ? MESSAGES_CHANGED : changed;
      }
      case "TOOL_CALL_END": {
        const entry = this.calls.get(event.toolCallId as string);
        return entry && mergeMetadata(entry.call, event) ? MESSAGES_CHANGED : 0;
      }
      case "TOOL_CALL_RESULT":
        return this.toolCallResult(event);
      case "STATE_SNAPSHOT":
        this.stateBounds?.snapshot(event.snapshot);
        this.state = event.snapshot;
        return STATE_CHANGED;
      case "STATE_DELTA": {
        let next: unknown;
        try {
          next = applyPatchAtomically(this.state, event.delta as unknown[]);
        } catch (error) {
          warn(
            `Failed to apply state patch; the state is left as it was: ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
          );
          return 0;
        }
        this.stateBounds?.delta(event.delta as unknown[], next);
        this.state = next;
        return STATE_CHANGED;
      }
      case "MESSAGES_SNAPSHOT":
        return this.messagesSnapshot(event);
      case "ACTIVITY_SNAPSHOT":
        return this.activitySnapshot(event);
      case "ACTIVITY_DELTA":
        return this.activityDelta(event, warn);
      case "REASONING_ENCRYPTED_VALUE":
        return this.encryptedValue(event);
      case "RUN_STARTED":
        return this.runStarted(event);
      default:
        return 0;
    }
  }

  private startMessage(event: EventRecord, warn: (text: string) => void): number {
    const id = event.messageId as string;
    const existing = this.byId.get(id);
    if (existing?.role === "activity") {
      warn(`${event.type}: message '${id}' is an activity message; message ids must be unique`);
      return 0;
    }
    let target = existing;
    if (!target) {
      const reasoning = event.type === "REASONING_MESSAGE_START";
      target = {
        id,
        role: reasoning ? "reasoning" : (str(event.role) ?? "assistant"),
        content: "",
      };
      if (!reasoning && event.name !== undefined) target.name = event.name;
      if (event.subagentRunId !== undefined) target.subagentRunId = event.subagentRunId;
      this.add(target);
    }
    return mergeMetadata(target, event) || !existing ? MESSAGES_CHANGED : 0;
  }

  private streamTarget(event: EventRecord, warn: (text: string) => void): Msg | undefined {
    const id = event.messageId as string;
    const target = this.byId.get(id);
    if (!target) {
      warn(`${event.type}: no message found with ID '${id}'`);
      return undefined;
    }
    if (target.role === "activity") {
      warn(`${event.type}: message '${id}' is an activity message; message ids must be unique`);
      return undefined;
    }
    return target;
  }

  private toolCallStart(event: EventRecord, warn: (text: string) => void): number {
    const id = event.toolCallId as string;
    const name = event.toolCallName as string;
    if (!this.startedCalls.includes(id)) this.startedCalls.push(id);
    const existing = this.calls.get(id);
    if (existing) {
      const renamed = existing.call.function.name !== name;
      if (renamed) {
        warn(
          `TOOL_CALL_START: tool call '${id}' already exists with name '${existing.call.function.name}'; renamed to '${name}'`,
        );
        existing.call.function.name = name;
      }
      return mergeMetadata(existing.call, event) || renamed ? MESSAGES_CHANGED : 0;
    }
    const parentId = str(event.parentMessageId);
    let target: Msg | undefined;
    if (parentId !== undefined) {
      const parent = this.byId.get(parentId);
      if (parent?.role === "assistant") target = parent;
      else if (parent) {
        warn(
          `TOOL_CALL_START: parentMessageId '${parentId}' is a '${parent.role}' message, not assistant; the call goes on a new assistant message '${id}'`,
        );
      }
      target ??= this.newAssistant(parent ? id : parentId, event);
    } else {
      target = this.newAssistant(id, event);
    }
    if (!Array.isArray(target.toolCalls)) target.toolCalls = [];
    const call: Call = { id, type: "function", function: { name, arguments: "" } };
    mergeMetadata(call, event);
    (target.toolCalls as Call[]).push(call);
    this.calls.set(id, { call, message: target });
    return MESSAGES_CHANGED;
  }

  private newAssistant(id: string, event: EventRecord): Msg {
    const m: Msg = { id, role: "assistant", toolCalls: [] };
    if (event.subagentRunId !== undefined) m.subagentRunId = event.subagentRunId;
    this.add(m);
    return m;
  }

  private toolCallResult(event: EventRecord): number {
    this.stateBounds?.messagesGrow(
      typeof event.content === "string" ? event.content.length : jsonSize(event.content),
    );
    const toolCallId = event.toolCallId as string;
    this.answeredCalls.add(toolCallId);
    const m: Msg = {
      id: event.messageId as string,
      toolCallId,
      role: str(event.role) ?? "tool",
      content: event.content,
    };
    if (event.subagentRunId !== undefined) m.subagentRunId = event.subagentRunId;
    mergeMetadata(m, event);
    const owner = this.calls.get(toolCallId)?.message;
    const ownerIndex = owner ? this.list.indexOf(owner) : -1;
    if (ownerIndex === -1) {
      this.add(m);
    } else {
      let at = ownerIndex + 1;
      while (at < this.list.length && this.list[at]!.role === "tool") at++;
      this.list.splice(at, 0, m);
      this.index(m);
    }
    return MESSAGES_CHANGED;
  }

  private messagesSnapshot(event: EventRecord): number {
    this.stateBounds?.messagesReplaced();
    const incoming = (event.messages as Rec[]).map(own);
    const snapshot = new Map<string, Msg>();
    for (const m of incoming) if (!snapshot.has(m.id)) snapshot.set(m.id, m);
    const owned = authoritativeActivityTypes(event);
    const hasActivity = incoming.some((m) => m.role === "activity");
    const hasReasoning = incoming.some((m) => m.role === "reasoning");
    const keepLocal = (m: Msg): boolean =>
      (m.role === "activity" &&
        (owned ? !owned.includes(String(m.activityType)) : owned !== null && !hasActivity)) ||
      (m.role === "reasoning" && !hasReasoning);
    const next: Msg[] = [];
    const present = new Set<string>();
    for (const m of this.list) {
      const replacement = snapshot.get(m.id);
      if (replacement) {
        next.push(replacement);
        present.add(m.id);
      } else if (keepLocal(m)) {
        next.push(m);
        present.add(m.id);
      }
    }
    for (const m of incoming) {
      if (!present.has(m.id)) {
        next.push(m);
        present.add(m.id);
      }
    }
    this.list = next;
    this.reindex();
    return MESSAGES_CHANGED;
  }

  private activitySnapshot(event: EventRecord): number {
    this.stateBounds?.messagesGrow(jsonSize(event.content));
    const id = event.messageId as string;
    const existing = this.byId.get(id);
    const replace = event.replace !== false;
    const created: Msg = {
      id,
      role: "activity",
      activityType: event.activityType,
      content: event.content,
    };
    if (event.subagentRunId !== undefined) created.subagentRunId = event.subagentRunId;
    let target: Msg | undefined;
    if (!existing) {
      this.add(created);
      target = created;
    } else if (existing.role === "activity") {
      if (replace) {
        existing.activityType = event.activityType;
        existing.content = event.content;
        if (event.subagentRunId !== undefined) existing.subagentRunId = event.subagentRunId;
        else delete existing.subagentRunId;
      }
      target = existing;
    } else if (replace) {
      this.list[this.list.indexOf(existing)] = created;
      this.reindex();
      target = created;
    }
    if (target) mergeMetadata(target, event);
    return target ? MESSAGES_CHANGED : 0;
  }

  private activityDelta(event: EventRecord, warn: (text: string) => void): number {
    const id = event.messageId as string;
    const target = this.byId.get(id);
    if (!target) {
      warn(`ACTIVITY_DELTA: no activity message '${id}' to patch; skipped`);
      return 0;
    }
    if (target.role !== "activity") {
      warn(`ACTIVITY_DELTA: message '${id}' is not an activity message; skipped`);
      return 0;
    }
    const changed = mergeMetadata(target, event) ? MESSAGES_CHANGED : 0;
    let next: unknown;
    try {
      next = applyPatchAtomically(target.content ?? {}, event.patch as unknown[]);
    } catch (error) {
      warn(
        `Failed to apply activity patch for '${id}': ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`,
      );
      return changed;
    }
    this.stateBounds?.document(event.patch as unknown[], next, `activity message '${id}'`);
    this.stateBounds?.messagesGrow(jsonSize(event.patch));
    target.content = next;
    target.activityType = event.activityType;
    return MESSAGES_CHANGED;
  }

  private encryptedValue(event: EventRecord): number {
    const id = event.entityId as string;
    if (event.subtype === "tool-call") {
      const entry = this.calls.get(id);
      if (!entry) return 0;
      entry.call.encryptedValue = event.encryptedValue;
      return MESSAGES_CHANGED;
    }
    const target = this.byId.get(id);
    if (!target || target.role === "activity") return 0;
    target.encryptedValue = event.encryptedValue;
    return MESSAGES_CHANGED;
  }

  private runStarted(event: EventRecord): number {
    this.startedCalls = [];
    this.answeredCalls = new Set();
    const input = event.input as { messages?: unknown } | undefined;
    if (!input || !Array.isArray(input.messages)) return 0;
    let changed = 0;
    for (const m of input.messages as Rec[]) {
      if (isRecord(m) && typeof m.id === "string" && !this.byId.has(m.id)) {
        this.add(own(m));
        changed = MESSAGES_CHANGED;
      }
    }
    return changed;
  }
}
