/**
 * A2A task traffic → AG-UI events (docs/agents.md, "A2A agents"). Pure bookkeeping: what has
 * been shown of each status message and artifact, so that a task seen again (polled, or
 * re-read after a dropped stream) yields only what is new.
 */
import type { Artifact, Message, Part, Task, TaskArtifactUpdateEvent } from "@a2a-js/sdk";
import { Role, TaskState } from "@a2a-js/sdk";
import { v4 as uuidv4 } from "uuid";

type Event = Record<string, unknown> & { type: string };

/** How a task's state ends (or pauses) the run. */
export type TaskEnding =
  | { kind: "finished" }
  | {
      kind: "interrupted";
      reason: "input_required" | "auth_required";
      message: string;
      /** The id of the status message that asked: how a resumed segment knows it is old news. */
      statusMessageId: string;
    }
  | { kind: "failed"; state: "failed" | "rejected" | "canceled"; message: string };

const PREFIX = "a2a";

/**
 * Ids of the assistant messages this adapter writes: `a2a:<contextId>:<random>`. The thread's
 * history brings them back on its next run, which is how a thread keeps its A2A context.
 */
export function messageIdFor(contextId: string): string {
  return `${PREFIX}:${encodeURIComponent(contextId)}:${uuidv4()}`;
}

/** The A2A context of a thread: the newest of our message ids in its history names it. */
export function contextFromHistory(messages: readonly { id?: unknown }[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const id = messages[i]?.id;
    if (typeof id !== "string" || !id.startsWith(`${PREFIX}:`)) continue;
    const encoded = id.split(":")[1];
    if (encoded) return decodeURIComponent(encoded);
  }
  return undefined;
}

/**
 * An interrupt's id names the task its answer continues and the status message that asked:
 * `a2a:<contextId>:<taskId>:<statusMessageId>` (a random id when the message had none).
 */
export function interruptIdFor(contextId: string, taskId: string, statusMessageId: string): string {
  const asked = statusMessageId || uuidv4();
  return [PREFIX, contextId, taskId, asked]
    .map((part, i) => (i === 0 ? part : encodeURIComponent(part)))
    .join(":");
}

export function taskOfInterrupt(
  id: string,
): { contextId: string; taskId: string; statusMessageId: string } | undefined {
  const [prefix, context, task, asked] = id.split(":");
  if (prefix !== PREFIX || !context || !task || !asked) return undefined;
  return {
    contextId: decodeURIComponent(context),
    taskId: decodeURIComponent(task),
    statusMessageId: decodeURIComponent(asked),
  };
}

/** The ending a state means; undefined while the task is still going. */
export function endingOf(
  state: TaskState | undefined,
  status: Message | undefined,
): TaskEnding | undefined {
  const message = textOf(status);
  const statusMessageId = status?.messageId ?? "";
  switch (state) {
    case TaskState.TASK_STATE_COMPLETED:
      return { kind: "finished" };
    case TaskState.TASK_STATE_INPUT_REQUIRED:
      return { kind: "interrupted", reason: "input_required", message, statusMessageId };
    case TaskState.TASK_STATE_AUTH_REQUIRED:
      return { kind: "interrupted", reason: "auth_required", message, statusMessageId };
    case TaskState.TASK_STATE_FAILED:
      return { kind: "failed", state: "failed", message };
    case TaskState.TASK_STATE_REJECTED:
      return { kind: "failed", state: "rejected", message };
    case TaskState.TASK_STATE_CANCELED:
      return { kind: "failed", state: "canceled", message };
    default:
      return undefined;
  }
}

export function textOf(message: Message | undefined): string {
  if (!message) return "";
  return (message.parts ?? [])
    .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
    .join("");
}

/**
 * Turns what a task sends into AG-UI events. Text parts are text message content (one
 * assistant message per status message, one per artifact, chunks appended as deltas); data
 * parts are merged into the thread's state (an object's keys, anything else under `data`) and
 * sent as a STATE_SNAPSHOT; file parts are shown as a line of text naming the file.
 */
export class A2aEventMapper {
  private state: Record<string, unknown>;
  private readonly seenMessages = new Set<string>();
  /** Per artifact: its open AG-UI message, and how many of its parts were shown. */
  private readonly artifacts = new Map<string, { messageId?: string; parts: number }>();
  contextId: string;

  constructor(state: unknown, contextId: string) {
    this.state = isObject(state) ? { ...state } : {};
    this.contextId = contextId;
  }

  /** Marks a message as already shown (the question a resumed segment answers). */
  seen(messageId: string): void {
    this.seenMessages.add(messageId);
  }

  /** An agent message (a direct reply, or a task's status message), once per message id. */
  message(message: Message | undefined): Event[] {
    if (!message || message.role === Role.ROLE_USER) return [];
    if (message.messageId) {
      if (this.seenMessages.has(message.messageId)) return [];
      this.seenMessages.add(message.messageId);
      // A message that bears the id of an artifact already shown is that artifact's text
      // again (agents, this server's A2A face among them, repeat their answer in the final
      // status): shown once.
      if (this.artifacts.has(message.messageId)) return [];
    }
    const events: Event[] = [];
    let messageId: string | undefined;
    for (const part of message.parts ?? []) {
      const text = this.partText(part, events);
      if (text === undefined) continue;
      if (!messageId) {
        messageId = messageIdFor(this.contextId);
        events.push({ type: "TEXT_MESSAGE_START", messageId, role: "assistant" });
      }
      events.push({ type: "TEXT_MESSAGE_CONTENT", messageId, delta: text });
    }
    if (messageId) events.push({ type: "TEXT_MESSAGE_END", messageId });
    return events;
  }

  /** A streamed artifact update: a new artifact, or a chunk appended to one. */
  artifactUpdate(update: TaskArtifactUpdateEvent): Event[] {
    const artifact = update.artifact;
    if (!artifact) return [];
    const events: Event[] = [];
    let seen = this.artifacts.get(artifact.artifactId);
    if (!update.append || !seen) {
      // A replacement cannot take back what was shown: it starts a message of its own.
      if (seen) events.push(...this.closeArtifact(artifact.artifactId));
      seen = { parts: 0 };
      this.artifacts.set(artifact.artifactId, seen);
    }
    const parts = artifact.parts ?? [];
    events.push(...this.artifactParts(seen, parts));
    seen.parts += parts.length;
    if (update.lastChunk) events.push(...this.closeArtifact(artifact.artifactId));
    return events;
  }

  /** A whole task (the stream's first answer, a poll, a re-read): what was not shown yet. */
  task(task: Task): Event[] {
    const events: Event[] = [];
    for (const artifact of task.artifacts ?? []) events.push(...this.wholeArtifact(artifact));
    events.push(...this.message(task.status?.message));
    return events;
  }

  /** Ends every artifact message still open (the task paused or ended). */
  closeAll(): Event[] {
    return [...this.artifacts.keys()].flatMap((id) => this.closeArtifact(id));
  }

  private wholeArtifact(artifact: Artifact): Event[] {
    let seen = this.artifacts.get(artifact.artifactId);
    if (!seen) {
      seen = { parts: 0 };
      this.artifacts.set(artifact.artifactId, seen);
    }
    const parts = artifact.parts ?? [];
    if (parts.length <= seen.parts) return [];
    const events = this.artifactParts(seen, parts.slice(seen.parts));
    seen.parts = parts.length;
    return events;
  }

  private artifactParts(seen: { messageId?: string }, parts: Part[]): Event[] {
    const events: Event[] = [];
    for (const part of parts) {
      const text = this.partText(part, events);
      if (text === undefined) continue;
      if (!seen.messageId) {
        seen.messageId = messageIdFor(this.contextId);
        events.push({ type: "TEXT_MESSAGE_START", messageId: seen.messageId, role: "assistant" });
      }
      if (text !== "") {
        events.push({ type: "TEXT_MESSAGE_CONTENT", messageId: seen.messageId, delta: text });
      }
    }
    return events;
  }

  private closeArtifact(artifactId: string): Event[] {
    const seen = this.artifacts.get(artifactId);
    if (!seen?.messageId) return [];
    const messageId = seen.messageId;
    seen.messageId = undefined;
    return [{ type: "TEXT_MESSAGE_END", messageId }];
  }

  /** A part's text, or undefined for a data part (which updates the state instead). */
  private partText(part: Part, events: Event[]): string | undefined {
    const content = part.content;
    switch (content?.$case) {
      case "text":
        return content.value;
      case "data": {
        const value: unknown = content.value;
        this.state = isObject(value) ? { ...this.state, ...value } : { ...this.state, data: value };
        events.push({ type: "STATE_SNAPSHOT", snapshot: this.state });
        return undefined;
      }
      case "url":
        return `[${part.filename || "file"}](${content.value})`;
      case "raw":
        return `[${part.filename || "file"}: ${content.value.length} bytes of ${part.mediaType || "data"}, not shown]`;
      default:
        return undefined;
    }
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
