import type {
  Event,
  Interrupt,
  Message,
  RunFinishedEvent,
  RunStartedEvent,
  TokenUsage,
} from "@ag-ui/core";

/** A canonical AG-UI 1.0 event as the pipeline forwards it (chunks already expanded). */
export type AgUiEvent = Event;
/** An accumulated AG-UI message. */
export type AgUiMessage = Message;

/**
 * The pipeline's internal view of an event: a plain record keyed by the wire field names.
 * Events are validated against the bundled schema before anything reads a field, so the
 * casts from this shape to the @ag-ui/core types are sound.
 */
export type EventRecord = { type: string; [field: string]: unknown };

/** Where a warning or fault is reported besides the push result (pino-compatible). */
export interface PipelineLogger {
  warn(context: Record<string, unknown>, message: string): void;
}

/** Which ordering or validation rule a fatal event broke. Stable; usable as a log key. */
export type FaultRule =
  | "validation"
  | "event-depth"
  | "state-depth"
  | "state-size"
  | "messages-size"
  | "event-size"
  | "first-event"
  | "nested-run"
  | "after-terminal"
  | "text-message"
  | "tool-call"
  | "reasoning"
  | "chunk"
  | "step"
  | "subagent"
  | "attribution"
  | "open-at-finish"
  | "interrupt-ids"
  | "incomplete-stream";

/**
 * A sequence-breaking or malformed event. Fatal: the segment is over, the adapter should be
 * aborted and the ACP run ends as `error` with {@link PipelineFault.message} as description.
 * `message` always reads `event <index> (<TYPE>): <what broke>`.
 */
export class PipelineFault extends Error {
  /** 0-based position of the offending event among everything the adapter yielded; -1 at stream end. */
  readonly index: number;
  /** The `type` the adapter gave that event (before chunk expansion or legacy translation). */
  readonly eventType: string;
  readonly rule: FaultRule;

  constructor(index: number, eventType: string, rule: FaultRule, detail: string) {
    super(index < 0 ? `end of stream: ${detail}` : `event ${index} (${eventType}): ${detail}`);
    this.name = "PipelineFault";
    this.index = index;
    this.eventType = eventType;
    this.rule = rule;
  }
}

/** How a run segment ended, read from its terminal event. */
export type TerminalInfo =
  | {
      kind: "finished";
      outcome: "success";
      runId: string;
      /** `RUN_FINISHED.result`, when the agent sent one (any JSON value but null). */
      result?: unknown;
      usage?: TokenUsage[];
      /**
       * Tool calls the run left for the caller to answer: the producer's
       * `outcome.pendingToolCallIds` when it named them, otherwise every tool call this run
       * started that got no TOOL_CALL_RESULT (as @ag-ui/client derives it).
       */
      pendingToolCallIds: string[];
      event: RunFinishedEvent;
    }
  | {
      kind: "finished";
      outcome: "interrupt";
      runId: string;
      /** At least one; ids unique (verified). */
      interrupts: Interrupt[];
      result?: unknown;
      usage?: TokenUsage[];
      event: RunFinishedEvent;
    }
  | {
      kind: "finished";
      outcome: "cancelled";
      runId: string;
      result?: unknown;
      usage?: TokenUsage[];
      event: RunFinishedEvent;
    }
  | {
      kind: "error";
      /** The run that errored, or undefined when RUN_ERROR opened the stream. */
      runId: string | undefined;
      message: string;
      /** AG-UI's string code, verbatim. */
      code?: string;
      usage?: TokenUsage[];
    };

/** What one {@link SegmentPipeline.push} did. A fresh object per push; never mutated later. */
export interface PushResult {
  /**
   * The canonical events to persist and forward, in order: the adapter's event once
   * validated (stripped of unknown material), or the START/CONTENT/END events a chunk
   * expands into, preceded by any END a chunk lane needed. Empty when the event was dropped
   * or was fatal.
   */
  events: AgUiEvent[];
  /** Human-readable warnings (also sent to the logger). Never fatal. */
  warnings: readonly string[];
  /** Set when this event was fatal (or a fault happened earlier). */
  fault?: PipelineFault;
  /**
   * Set when the event went no further without a warning of its own: an event after
   * RUN_ERROR, counted in one warning when the run's errored stretch ends.
   */
  dropped?: true;
  /** The accumulated state changed (STATE_SNAPSHOT, an applied STATE_DELTA). */
  stateChanged: boolean;
  /** The accumulated messages changed. */
  messagesChanged: boolean;
  /** "step" after a STEP_FINISHED: write a checkpoint now. */
  checkpoint?: "step";
  /** The finished step's name, with `checkpoint`. */
  stepName?: string;
  /** Set when this push carried RUN_FINISHED or RUN_ERROR. */
  terminal?: TerminalInfo;
  /** Set when this push carried RUN_STARTED. */
  runStarted?: RunStartedEvent;
}

export interface EndResult {
  /** Warnings the end settles (events dropped after RUN_ERROR, counted). Also logged. */
  warnings: readonly string[];
  /** The stream ended without a terminal event (or a fault happened earlier). */
  fault?: PipelineFault;
  /** The last terminal event seen, which decides the segment's ACP status. */
  terminal?: TerminalInfo;
}
