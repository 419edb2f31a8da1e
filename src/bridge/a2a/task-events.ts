/**
 * What the agent said, as a task's artifacts and agent messages: the one rule, applied the
 * same way to a live stream and to a task read back later (both fold the run's AG-UI events).
 *
 * | AG-UI                                   | A2A                                                |
 * | --------------------------------------- | -------------------------------------------------- |
 * | an assistant text message (START…END)   | an artifact `artifactId` = the message id, name `response`, a text part per delta; also an agent message of the history |
 * | TOOL_CALL_RESULT (text)                 | an artifact `tool-<toolCallId>`, name = the tool, one data part `{toolCallId, name, args, result}` |
 * | TOOL_CALL_RESULT (a list of parts)      | the same artifact: a data part `{toolCallId, name, args}`, then the result's parts (text parts as text, media parts as file parts, see parts.ts) |
 * | the state (STATE_SNAPSHOT / STATE_DELTA)| one artifact `state`, one data part: the state at the end of each segment |
 *
 * A stream sends a text message as it arrives: each TEXT_MESSAGE_CONTENT delta is a chunk of
 * its artifact (the first with `append: false`, the rest `append: true`), and its END a last
 * chunk (`append`, `lastChunk`, an empty text part, since an artifact has at least one part). A
 * tool result and the state are sent whole (`lastChunk: true`) when they come and when a
 * segment ends. The task read later holds the artifacts as the chunks built them: a text
 * artifact has a part per delta (the closing empty part left out).
 */
import { applyPatchAtomically } from "../../pipeline/json-patch.js";
import type { TaskIds } from "./messages.js";
import { aguiPartToA2a } from "./parts.js";
import type { Artifact, Message, Part, StreamResponse } from "./types.js";

type Event = Record<string, unknown>;

export const STATE_ARTIFACT_ID = "state";

export class TaskEvents {
  private readonly artifacts = new Map<string, Artifact>();
  private readonly agentMessages: Message[] = [];
  /** The deltas of each text message under way, joined at its end. */
  private readonly texts = new Map<string, string[]>();
  private readonly tools = new Map<string, { name: string; args: string }>();
  private state: unknown;
  private stateChanged = false;

  constructor(
    readonly ids: TaskIds,
    /**
     * False when only the task is wanted (its artifacts and messages, not a stream of them): the
     * stream events are then not made, and `push` returns none. Made and dropped, a task's chunk
     * events and the text built a delta at a time were most of the face's garbage per task.
     */
    private readonly streaming = true,
  ) {}

  /** Folds one AG-UI event in; returns the stream events it makes. */
  push(event: Event): StreamResponse[] {
    switch (event.type) {
      case "TEXT_MESSAGE_START":
        this.texts.set(String(event.messageId), []);
        return [];
      case "TEXT_MESSAGE_CONTENT":
        return this.textChunk(String(event.messageId), String(event.delta ?? ""));
      case "TEXT_MESSAGE_END":
        return this.endText(String(event.messageId));
      case "TOOL_CALL_START":
        this.tools.set(String(event.toolCallId), { name: String(event.toolCallName), args: "" });
        return [];
      case "TOOL_CALL_ARGS": {
        const call = this.tools.get(String(event.toolCallId));
        if (call) call.args += String(event.delta ?? "");
        return [];
      }
      case "TOOL_CALL_RESULT":
        return this.toolResult(event);
      case "STATE_SNAPSHOT":
        this.state = event.snapshot;
        this.stateChanged = true;
        return [];
      case "STATE_DELTA":
        try {
          this.state = applyPatchAtomically(this.state ?? {}, event.delta as unknown[]);
          this.stateChanged = true;
        } catch {
          // The pipeline checked the patch when the run made it; a replay cannot fail it.
        }
        return [];
      case "RUN_FINISHED":
      case "RUN_ERROR":
        return this.endSegment();
      default:
        return [];
    }
  }

  /** What a segment left unsent when it ended without its own terminal event. */
  endSegment(): StreamResponse[] {
    if (!this.stateChanged) return [];
    this.stateChanged = false;
    return this.emit({
      artifactId: STATE_ARTIFACT_ID,
      name: "state",
      parts: [{ data: this.state ?? null }],
    });
  }

  /** The artifacts so far, in the order they were first made. */
  artifactList(): Artifact[] {
    return [...this.artifacts.values()];
  }

  /** The agent's text messages so far, in order. */
  messages(): Message[] {
    return [...this.agentMessages];
  }

  /**
   * A delta of a text message: sent as a chunk, and added to its artifact as a part of its
   * own, so that the task read later holds the artifact a client builds from the chunks.
   */
  private textChunk(id: string, delta: string): StreamResponse[] {
    if (delta === "") return [];
    const deltas = this.texts.get(id);
    if (deltas) deltas.push(delta);
    else this.texts.set(id, [delta]);
    const artifact = this.artifacts.get(id);
    if (artifact) artifact.parts.push({ text: delta });
    else this.artifacts.set(id, { artifactId: id, name: "response", parts: [{ text: delta }] });
    if (!this.streaming) return [];
    const chunk = { artifactId: id, name: "response", parts: [{ text: delta }] };
    return [{ artifactUpdate: this.update(chunk, artifact !== undefined, false) }];
  }

  private endText(id: string): StreamResponse[] {
    const deltas = this.texts.get(id);
    this.texts.delete(id);
    if (deltas === undefined || deltas.length === 0) return [];
    const text = deltas.length === 1 ? deltas[0]! : deltas.join("");
    this.agentMessages.push({
      taskId: this.ids.taskId,
      contextId: this.ids.contextId,
      messageId: id,
      role: "ROLE_AGENT",
      parts: [{ text }],
    });
    if (!this.streaming) return [];
    const last = { artifactId: id, name: "response", parts: [{ text: "" }] };
    return [{ artifactUpdate: this.update(last, true, true) }];
  }

  private toolResult(event: Event): StreamResponse[] {
    const toolCallId = String(event.toolCallId);
    const call = this.tools.get(toolCallId);
    const about = { toolCallId, name: call?.name ?? null, args: parseMaybe(call?.args ?? "") };
    const content = event.content;
    // AG-UI 1.0: what the tool returned is text, or a list of parts (media among them).
    const parts: Part[] = Array.isArray(content)
      ? [
          { data: about },
          ...content.flatMap((part) => {
            const a2a = aguiPartToA2a(part);
            return a2a ? [a2a] : [];
          }),
        ]
      : [{ data: { ...about, result: parseMaybe(typeof content === "string" ? content : "") } }];
    return this.emit({ artifactId: `tool-${toolCallId}`, name: call?.name ?? "tool", parts });
  }

  private emit(artifact: Artifact): StreamResponse[] {
    this.artifacts.set(artifact.artifactId, artifact);
    if (!this.streaming) return [];
    return [{ artifactUpdate: this.update(artifact, false, true) }];
  }

  /**
   * An artifact update of the task. Its ids written out, not spread from an object: a literal
   * with a spread took most of the CPU of folding a task's events.
   */
  private update(artifact: Artifact, append: boolean, lastChunk: boolean) {
    const { taskId, contextId } = this.ids;
    return { taskId, contextId, artifact, append, lastChunk };
  }
}

/** JSON text as its value; anything else as the string it is. */
function parseMaybe(text: string): unknown {
  if (text === "") return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
