/**
 * Stage 2b: verify order — the AG-UI 1.0 sequencing MUSTs, as @ag-ui/client's
 * `verifyEvents` enforces them (messages below follow its wording), plus what a server
 * bridging to ACP must also hold:
 *
 * - lifecycle: the first event is RUN_STARTED or RUN_ERROR; no RUN_STARTED while a run is
 *   open; after RUN_FINISHED only RUN_STARTED or RUN_ERROR, after RUN_ERROR only
 *   RUN_STARTED (a stream may carry sequential runs; the last terminal decides the segment);
 * - ids are not checked here: like @ag-ui/client, any ids are accepted, and run-ids.ts has
 *   already set them to the run in progress;
 * - streaming: TEXT_MESSAGE_*, TOOL_CALL_*, REASONING_MESSAGE_* and REASONING_START/END are
 *   opened before they are continued or closed, never opened twice at once, and everything
 *   (plus steps and announced subagents) is closed before RUN_FINISHED;
 * - steps: STEP_FINISHED closes a step the same owner started;
 * - subagents: SUBAGENT_FINISHED/ERROR close an announced, open invocation; an id is never
 *   reused within a run; a continuation's `subagentRunId`, when present, agrees with the
 *   owner its entity was opened under (attribution without SUBAGENT_STARTED is legal);
 * - interrupts: the ids of an interrupt outcome are unique.
 */
import type { EventRecord } from "./types.js";
import {
  checkAttribution,
  OpenEntities,
  type Owner,
  ownerLabel,
  ownerOf,
  PARENT,
  str,
  VerifyError,
} from "./verify-state.js";

export { VerifyError } from "./verify-state.js";

export class OrderVerifier {
  private seenFirst = false;
  private runOpen = false;
  private finished = false;
  private hasErrored = false;
  private currentRunId: string | undefined;

  /** What the run has open, and who opened it (verify-state.ts). */
  private readonly entities = new OpenEntities();

  /** The runId of the run in progress (or last run), if any. */
  get runId(): string | undefined {
    return this.currentRunId;
  }

  /** Whether a run has started and not yet finished or errored. */
  get inRun(): boolean {
    return this.runOpen;
  }

  /** Whether the last run ended with RUN_ERROR (only a new RUN_STARTED may follow). */
  get errored(): boolean {
    return this.hasErrored;
  }

  /** Whether the stream has reached a terminal event and nothing reopened it. */
  get ended(): boolean {
    return this.seenFirst && !this.runOpen;
  }

  /** Checks `event` against the sequence so far and records it. Throws {@link VerifyError}. */
  verify(event: EventRecord): void {
    const type = event.type;
    if (this.hasErrored && type !== "RUN_STARTED") {
      throw new VerifyError(
        "after-terminal",
        `Cannot send event type '${type}': The run has already errored with 'RUN_ERROR'. No further events can be sent.`,
      );
    }
    if (this.finished && type !== "RUN_STARTED" && type !== "RUN_ERROR") {
      throw new VerifyError(
        "after-terminal",
        `Cannot send event type '${type}': The run has already finished with 'RUN_FINISHED'. Start a new run with 'RUN_STARTED'.`,
      );
    }
    if (!this.seenFirst) {
      this.seenFirst = true;
      if (type !== "RUN_STARTED" && type !== "RUN_ERROR") {
        throw new VerifyError(
          "first-event",
          "First event must be 'RUN_STARTED' (or 'RUN_ERROR' for a run that failed before it began)",
        );
      }
    }

    switch (type) {
      case "TEXT_MESSAGE_START":
        this.entities.open(
          "message",
          this.entities.activeMessages,
          event,
          "text message",
          "TEXT_MESSAGE_END",
        );
        return;
      case "TEXT_MESSAGE_CONTENT":
      case "TEXT_MESSAGE_END":
        this.entities.continue(
          "message",
          this.entities.activeMessages,
          event,
          `No active text message found with ID '${str(event.messageId)}'. Start a text message with 'TEXT_MESSAGE_START' first.`,
          type === "TEXT_MESSAGE_END",
          "text-message",
        );
        return;
      case "TOOL_CALL_START":
        this.toolCallStart(event);
        return;
      case "TOOL_CALL_ARGS":
      case "TOOL_CALL_END": {
        const id = event.toolCallId as string;
        if (!this.entities.activeToolCalls.has(id)) {
          throw new VerifyError(
            "tool-call",
            `Cannot send '${type}' event: No active tool call found with ID '${id}'. Start a tool call with 'TOOL_CALL_START' first.`,
          );
        }
        checkAttribution(type, event, this.entities.owners.toolCall.get(id), "tool call", id);
        if (type === "TOOL_CALL_END") this.entities.activeToolCalls.delete(id);
        return;
      }
      case "TOOL_CALL_RESULT":
        this.entities.owners.message.set(
          event.messageId as string,
          ownerOf(str(event.subagentRunId)),
        );
        return;
      case "REASONING_START":
        this.entities.open(
          "reasoning",
          this.entities.activeSpans,
          event,
          "reasoning span",
          "REASONING_END",
        );
        return;
      case "REASONING_MESSAGE_START":
        this.entities.open(
          "reasoning",
          this.entities.activeReasoning,
          event,
          "reasoning message",
          "REASONING_MESSAGE_END",
        );
        return;
      case "REASONING_MESSAGE_CONTENT":
      case "REASONING_MESSAGE_END":
        this.entities.continue(
          "reasoning",
          this.entities.activeReasoning,
          event,
          `No active reasoning message found with ID '${str(event.messageId)}'. Start a reasoning message with 'REASONING_MESSAGE_START' first.`,
          type === "REASONING_MESSAGE_END",
          "reasoning",
        );
        return;
      case "REASONING_END":
        this.entities.continue(
          "reasoning",
          this.entities.activeSpans,
          event,
          `No active reasoning span found with ID '${str(event.messageId)}'. A 'REASONING_START' event must be sent first.`,
          true,
          "reasoning",
        );
        return;
      case "REASONING_ENCRYPTED_VALUE": {
        const id = event.entityId as string;
        const owner =
          event.subtype === "tool-call"
            ? this.entities.owners.toolCall.get(id)
            : (this.entities.owners.message.get(id) ?? this.entities.owners.reasoning.get(id));
        checkAttribution(
          type,
          event,
          owner,
          event.subtype === "tool-call" ? "tool call" : "message",
          id,
        );
        return;
      }
      case "ACTIVITY_SNAPSHOT": {
        const id = event.messageId as string;
        if (!this.entities.owners.activity.has(id) || event.replace !== false) {
          this.entities.owners.activity.set(id, ownerOf(str(event.subagentRunId)));
        }
        return;
      }
      case "ACTIVITY_DELTA": {
        const id = event.messageId as string;
        checkAttribution(type, event, this.entities.owners.activity.get(id), "activity", id);
        return;
      }
      case "STEP_STARTED":
        this.stepStarted(event);
        return;
      case "STEP_FINISHED":
        this.stepFinished(event);
        return;
      case "SUBAGENT_STARTED":
        this.subagentStarted(event);
        return;
      case "SUBAGENT_FINISHED":
      case "SUBAGENT_ERROR": {
        const id = event.subagentRunId as string;
        if (!this.entities.activeSubagents.has(id)) {
          throw new VerifyError(
            "subagent",
            `Cannot send '${type}': no active subagent found with ID '${id}'. A 'SUBAGENT_STARTED' event must be sent first.`,
          );
        }
        this.entities.activeSubagents.delete(id);
        this.entities.closedSubagents.add(id);
        return;
      }
      case "MESSAGES_SNAPSHOT":
        this.seedOwners(event.messages, true);
        return;
      case "RUN_STARTED":
        this.runStarted(event);
        return;
      case "RUN_FINISHED":
        this.runFinished(event);
        return;
      case "RUN_ERROR":
        this.hasErrored = true;
        this.finished = false;
        this.runOpen = false;
        return;
      default:
        return;
    }
  }

  private toolCallStart(event: EventRecord): void {
    const id = event.toolCallId as string;
    if (this.entities.activeToolCalls.has(id)) {
      throw new VerifyError(
        "tool-call",
        `Cannot send 'TOOL_CALL_START' event: A tool call with ID '${id}' is already in progress. Complete it with 'TOOL_CALL_END' first.`,
      );
    }
    const tag = str(event.subagentRunId);
    const parentId = str(event.parentMessageId);
    let inherited: Owner | undefined;
    if (parentId !== undefined) {
      const parentOwner = this.entities.owners.message.get(parentId);
      if (parentOwner !== undefined) {
        if (tag !== undefined && tag !== parentOwner) {
          throw new VerifyError(
            "attribution",
            `Cannot send 'TOOL_CALL_START': subagentRunId '${tag}' does not match its parent message '${parentId}' owner '${ownerLabel(parentOwner)}'. A tool call belongs to the message that carries it.`,
          );
        }
        inherited = parentOwner;
      }
    }
    const existing = this.entities.owners.toolCall.get(id);
    if (existing !== undefined) {
      checkAttribution("TOOL_CALL_START", event, existing, "tool call", id);
      if (tag === undefined && inherited !== undefined && inherited !== existing) {
        throw new VerifyError(
          "attribution",
          `Cannot send 'TOOL_CALL_START': tool call '${id}' is owned by '${ownerLabel(existing)}' but its parent message '${parentId}' is owned by '${ownerLabel(inherited)}'. A tool call belongs to the message that carries it.`,
        );
      }
    } else {
      this.entities.owners.toolCall.set(id, tag !== undefined ? tag : (inherited ?? PARENT));
    }
    this.entities.activeToolCalls.add(id);
  }

  private stepsOf(owner: Owner): Set<string> {
    let set = this.entities.steps.get(owner);
    if (!set) {
      set = new Set();
      this.entities.steps.set(owner, set);
    }
    return set;
  }

  private stepStarted(event: EventRecord): void {
    const name = event.stepName as string;
    const owner = ownerOf(str(event.subagentRunId));
    const steps = this.stepsOf(owner);
    if (steps.has(name)) {
      throw new VerifyError(
        "step",
        `Step "${name}" is already active for 'STEP_STARTED'${owner === PARENT ? "" : ` in subagent '${owner}'`}`,
      );
    }
    steps.add(name);
  }

  private stepFinished(event: EventRecord): void {
    const name = event.stepName as string;
    const owner = ownerOf(str(event.subagentRunId));
    const steps = this.stepsOf(owner);
    if (steps.delete(name)) return;
    for (const [other, names] of this.entities.steps) {
      if (other !== owner && names.has(name)) {
        throw new VerifyError(
          "step",
          `Cannot send 'STEP_FINISHED' for step "${name}" attributed to ${owner === PARENT ? "the parent agent" : `subagent '${owner}'`}: that step is open under ${other === PARENT ? "the parent agent" : `subagent '${other}'`}. A step must be finished by whoever started it.`,
        );
      }
    }
    throw new VerifyError(
      "step",
      `Cannot send 'STEP_FINISHED' for step "${name}" that was not started`,
    );
  }

  private subagentStarted(event: EventRecord): void {
    const id = event.subagentRunId as string;
    if (this.entities.activeSubagents.has(id)) {
      throw new VerifyError(
        "subagent",
        `Cannot send 'SUBAGENT_STARTED': subagent '${id}' is already active. Finish it with 'SUBAGENT_FINISHED' first.`,
      );
    }
    if (this.entities.closedSubagents.has(id)) {
      throw new VerifyError(
        "subagent",
        `Cannot send 'SUBAGENT_STARTED': subagent '${id}' has already finished in this run. Subagent IDs are per-invocation and cannot be reused.`,
      );
    }
    const parent = str(event.parentSubagentRunId);
    if (
      parent !== undefined &&
      !this.entities.activeSubagents.has(parent) &&
      !this.entities.closedSubagents.has(parent)
    ) {
      throw new VerifyError(
        "subagent",
        `Cannot send 'SUBAGENT_STARTED': parentSubagentRunId '${parent}' has not been started in this run.`,
      );
    }
    this.entities.activeSubagents.add(id);
  }

  /** Records the owners of replayed messages (snapshot: authoritative; input echo: not). */
  private seedOwners(messages: unknown, authoritative: boolean): void {
    if (!Array.isArray(messages)) return;
    for (const m of messages as Array<Record<string, unknown>>) {
      const id = str(m.id);
      if (id === undefined) continue;
      const owner = ownerOf(str(m.subagentRunId));
      const bucket =
        m.role === "reasoning"
          ? this.entities.owners.reasoning
          : m.role === "activity"
            ? this.entities.owners.activity
            : this.entities.owners.message;
      if (authoritative || !bucket.has(id)) bucket.set(id, owner);
      if (!Array.isArray(m.toolCalls)) continue;
      for (const tc of m.toolCalls as Array<{ id?: unknown }>) {
        const tcId = str(tc.id);
        if (tcId !== undefined && (authoritative || !this.entities.owners.toolCall.has(tcId))) {
          this.entities.owners.toolCall.set(tcId, owner);
        }
      }
    }
  }

  private runStarted(event: EventRecord): void {
    if (this.runOpen) {
      throw new VerifyError(
        "nested-run",
        "Cannot send 'RUN_STARTED' while a run is still active. The previous run must be finished with 'RUN_FINISHED' before starting a new run.",
      );
    }
    this.reset();
    this.runOpen = true;
    this.currentRunId = event.runId as string;
    const input = event.input as { messages?: unknown } | undefined;
    if (input) this.seedOwners(input.messages, false);
  }

  private reset(): void {
    this.entities.clear();
    this.finished = false;
    this.hasErrored = false;
  }

  private runFinished(event: EventRecord): void {
    const stillOpen = this.entities.stillOpen();
    for (const [what, ids] of stillOpen) {
      const list = [...ids];
      if (list.length > 0) {
        throw new VerifyError(
          "open-at-finish",
          `Cannot send 'RUN_FINISHED' while ${what} are still active: ${list.join(", ")}`,
        );
      }
    }
    const outcome = event.outcome as { type?: string; interrupts?: Array<{ id: string }> };
    if (outcome?.type === "interrupt" && Array.isArray(outcome.interrupts)) {
      const seen = new Set<string>();
      for (const interrupt of outcome.interrupts) {
        if (seen.has(interrupt.id)) {
          throw new VerifyError(
            "interrupt-ids",
            `interrupt id '${interrupt.id}' appears more than once in the interrupt outcome; interrupt ids must be unique`,
          );
        }
        seen.add(interrupt.id);
      }
    }
    this.finished = true;
    this.runOpen = false;
  }
}
