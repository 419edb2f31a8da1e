/**
 * Stage 2a: chunk expansion, with @ag-ui/client's `transformChunks` semantics.
 *
 * TEXT_MESSAGE_CHUNK, TOOL_CALL_CHUNK and REASONING_MESSAGE_CHUNK expand into the canonical
 * START / CONTENT (ARGS) / END events, and the expanded events are what the pipeline
 * verifies, accumulates and forwards: ACP and AG-UI clients only ever see the canonical
 * triad. One stream is assembled per lane (the subagent a chunk is attributed to; untagged
 * = the parent agent):
 *
 * - the first chunk of a stream must carry its id (and a tool chunk its `toolCallName`);
 *   a continuation may omit them, but a repeated `role` / `name` / `toolCallName` /
 *   `parentMessageId` must agree with the opener — a conflict is fatal;
 * - the stream ends (a synthesized END) when a chunk names another id, when a non-chunk
 *   event of the same lane arrives (TEXT/TOOL/REASONING/STATE/STEP events, TOOL_CALL_RESULT,
 *   CUSTOM), when that subagent finishes or errors, or at a run-level event (RUN_STARTED,
 *   RUN_FINISHED, RUN_ERROR, MESSAGES_SNAPSHOT, which close every lane);
 * - RAW, ACTIVITY_*, REASONING_ENCRYPTED_VALUE and SUBAGENT_STARTED stand aside and close
 *   nothing.
 *
 * The opener (START) carries the chunk's metadata and timestamp; the content event carries
 * metadata, timestamp and rawEvent. A chunk with no delta synthesizes a content event only
 * when it carries metadata or rawEvent.
 */
import type { EventRecord } from "./types.js";

type Kind = "text" | "tool" | "reasoning";

interface Pending {
  kind: Kind;
  id: string;
  subagentRunId: string | undefined;
  /** text: role; tool: toolCallName. */
  role?: string;
  name?: string;
  toolCallName?: string;
  parentMessageId?: string;
}

/** Thrown for a chunk-stream violation; the pipeline turns it into a PipelineFault. */
export class ChunkError extends Error {}

const CLOSES_OWN_LANE = new Set([
  "TEXT_MESSAGE_START",
  "TEXT_MESSAGE_CONTENT",
  "TEXT_MESSAGE_END",
  "TOOL_CALL_START",
  "TOOL_CALL_ARGS",
  "TOOL_CALL_END",
  "TOOL_CALL_RESULT",
  "STATE_SNAPSHOT",
  "STATE_DELTA",
  "CUSTOM",
  "STEP_STARTED",
  "STEP_FINISHED",
  "REASONING_START",
  "REASONING_MESSAGE_START",
  "REASONING_MESSAGE_CONTENT",
  "REASONING_MESSAGE_END",
  "REASONING_END",
]);

const CLOSES_ALL_LANES = new Set(["RUN_STARTED", "RUN_FINISHED", "RUN_ERROR", "MESSAGES_SNAPSHOT"]);

const KIND_LABEL: Record<Kind, string> = {
  text: "text message",
  tool: "tool call",
  reasoning: "reasoning message",
};

const END_TYPE: Record<Kind, string> = {
  text: "TEXT_MESSAGE_END",
  tool: "TOOL_CALL_END",
  reasoning: "REASONING_MESSAGE_END",
};

const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

export class ChunkExpander {
  private readonly lanes = new Map<string | undefined, Pending>();

  /** Appends the events `event` expands into to `out`. Throws {@link ChunkError}. */
  expand(event: EventRecord, out: EventRecord[]): void {
    const type = event.type;
    if (type === "TEXT_MESSAGE_CHUNK") {
      this.chunk("text", event, out);
      return;
    }
    if (type === "TOOL_CALL_CHUNK") {
      this.chunk("tool", event, out);
      return;
    }
    if (type === "REASONING_MESSAGE_CHUNK") {
      this.chunk("reasoning", event, out);
      return;
    }
    if (this.lanes.size > 0) {
      if (CLOSES_OWN_LANE.has(type)) this.closeLane(str(event.subagentRunId), out);
      else if (CLOSES_ALL_LANES.has(type)) this.closeAll(out);
      else if (type === "SUBAGENT_FINISHED" || type === "SUBAGENT_ERROR") {
        const owner = str(event.subagentRunId);
        if (owner !== undefined) this.closeLane(owner, out);
      }
    }
    out.push(event);
  }

  /** Whether any chunk stream is still being assembled. */
  get open(): boolean {
    return this.lanes.size > 0;
  }

  private closeLane(owner: string | undefined, out: EventRecord[]): void {
    const pending = this.lanes.get(owner);
    if (!pending) return;
    this.lanes.delete(owner);
    const idField = pending.kind === "tool" ? "toolCallId" : "messageId";
    const end: EventRecord = { type: END_TYPE[pending.kind], [idField]: pending.id };
    if (pending.subagentRunId !== undefined) end.subagentRunId = pending.subagentRunId;
    out.push(end);
  }

  private closeAll(out: EventRecord[]): void {
    for (const owner of [...this.lanes.keys()]) this.closeLane(owner, out);
  }

  private resolveLane(
    kind: Kind,
    id: string | undefined,
    tag: string | undefined,
    chunkType: string,
  ): string | undefined {
    if (id !== undefined) {
      for (const [owner, pending] of this.lanes) {
        if (pending.kind !== kind || pending.id !== id) continue;
        if (tag !== undefined && tag !== owner) {
          throw new ChunkError(
            `Cannot continue ${KIND_LABEL[kind]} '${id}': chunk subagentRunId '${tag}' does not match the open stream's subagent '${owner ?? "(the parent agent)"}'.`,
          );
        }
        return owner;
      }
      return tag;
    }
    if (tag !== undefined) return tag;
    if (this.lanes.get(undefined)?.kind === kind) return undefined;
    const candidates = [...this.lanes.entries()].filter(([, p]) => p.kind === kind);
    if (candidates.length === 1) return candidates[0]![0];
    if (candidates.length > 1) {
      throw new ChunkError(
        `Ambiguous ${chunkType}: it carries neither a ${kind === "tool" ? "toolCallId" : "messageId"} nor a subagentRunId, but ${candidates.length} lanes have an open ${KIND_LABEL[kind]}.`,
      );
    }
    return undefined;
  }

  private chunk(kind: Kind, chunk: EventRecord, out: EventRecord[]): void {
    const idField = kind === "tool" ? "toolCallId" : "messageId";
    const id = str(chunk[idField]);
    const tag = str(chunk.subagentRunId);
    const lane = this.resolveLane(kind, id, tag, chunk.type);
    const open = this.lanes.get(lane);
    let pending: Pending;
    let emitted = false;

    if (open?.kind === kind && (id === undefined || id === open.id)) {
      pending = open;
      if (kind === "text") {
        agree(kind, open.id, "role", str(chunk.role), open.role);
        agree(kind, open.id, "name", str(chunk.name), open.name);
      } else if (kind === "tool") {
        agree(kind, open.id, "toolCallName", str(chunk.toolCallName), open.toolCallName);
        agree(kind, open.id, "parentMessageId", str(chunk.parentMessageId), open.parentMessageId);
      }
    } else {
      this.closeLane(lane, out);
      if (id === undefined) throw new ChunkError(`First ${chunk.type} must have a ${idField}`);
      pending = { kind, id, subagentRunId: tag };
      const start: EventRecord = { type: "", [idField]: id };
      if (kind === "text") {
        pending.role = str(chunk.role) ?? "assistant";
        pending.name = str(chunk.name);
        start.type = "TEXT_MESSAGE_START";
        start.role = pending.role;
        if (pending.name !== undefined) start.name = pending.name;
      } else if (kind === "tool") {
        const name = str(chunk.toolCallName);
        if (name === undefined)
          throw new ChunkError("First TOOL_CALL_CHUNK must have a toolCallName");
        pending.toolCallName = name;
        pending.parentMessageId = str(chunk.parentMessageId);
        start.type = "TOOL_CALL_START";
        start.toolCallName = name;
        if (pending.parentMessageId !== undefined) start.parentMessageId = pending.parentMessageId;
      } else {
        start.type = "REASONING_MESSAGE_START";
        start.role = "reasoning";
      }
      if (tag !== undefined) start.subagentRunId = tag;
      if (chunk.metadata !== undefined) start.metadata = chunk.metadata;
      if (chunk.timestamp !== undefined) start.timestamp = chunk.timestamp;
      this.lanes.set(lane, pending);
      out.push(start);
      emitted = true;
    }

    const hasDelta = chunk.delta !== undefined;
    if (hasDelta || chunk.rawEvent !== undefined || (!emitted && chunk.metadata !== undefined)) {
      const content: EventRecord = {
        type:
          kind === "text"
            ? "TEXT_MESSAGE_CONTENT"
            : kind === "tool"
              ? "TOOL_CALL_ARGS"
              : "REASONING_MESSAGE_CONTENT",
        [idField]: pending.id,
        delta: hasDelta ? chunk.delta : "",
      };
      const owner = tag ?? pending.subagentRunId;
      if (owner !== undefined) content.subagentRunId = owner;
      if (chunk.metadata !== undefined) content.metadata = chunk.metadata;
      if (chunk.timestamp !== undefined) content.timestamp = chunk.timestamp;
      if (chunk.rawEvent !== undefined) content.rawEvent = chunk.rawEvent;
      out.push(content);
    }
  }
}

function agree(
  kind: Kind,
  id: string,
  field: string,
  incoming: string | undefined,
  established: string | undefined,
): void {
  if (incoming !== undefined && incoming !== established) {
    throw new ChunkError(
      `Cannot continue ${KIND_LABEL[kind]} '${id}': chunk ${field} '${incoming}' does not match the open stream's ${field} ${established === undefined ? "(absent)" : `'${established}'`}.`,
    );
  }
}
