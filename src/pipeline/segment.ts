/**
 * One run segment's event pipeline: validate → expand chunks → map run ids → verify order →
 * accumulate.
 * Synchronous and engine-agnostic: the engine pushes every event its adapter yields and
 * acts on the result (persist and fan out `events`, emit ACP `values` when something
 * changed, checkpoint on `checkpoint`, abort the adapter on `fault`, end the segment on
 * `terminal`). One instance per segment (the first start of an ACP run and each resume).
 *
 * ```ts
 * const seg = new SegmentPipeline({ threadId, runId, initialState, initialMessages, logger });
 * for await (const raw of adapter.run(input, { signal })) {
 *   const r = seg.push(raw);
 *   if (r.fault) { abort(); break; }          // r.fault.message names index, type and rule
 *   persistAndForward(r.events);
 *   if (r.stateChanged || r.messagesChanged) emitValues(seg.state, seg.messages);
 *   if (r.checkpoint) writeCheckpoint(r.stepName);
 * }
 * const { fault, terminal } = seg.end();      // fault when no RUN_FINISHED / RUN_ERROR came
 * ```
 *
 * After a fault the pipeline is spent: every later push returns the same fault.
 */
import * as defaultValidation from "../validation/index.js";
import { Accumulator, MESSAGES_CHANGED, STATE_CHANGED } from "./accumulate.js";
import { ChunkError, ChunkExpander } from "./chunks.js";
import { LegacyTranslator } from "./compat.js";
import { RunIdMapper } from "./run-ids.js";
import { deeperThan, type ShapeBounds, ShapeError, StateBounds, showPath } from "./shape.js";
import {
  type AgUiMessage,
  type EndResult,
  type EventRecord,
  PipelineFault,
  type PipelineLogger,
  type PushResult,
  type TerminalInfo,
} from "./types.js";
import { type AguiValidation, EventValidator } from "./validate.js";
import { OrderVerifier, VerifyError } from "./verify.js";
import { producerVersionWarning } from "./version.js";

export interface SegmentOptions {
  /** The AG-UI threadId the segment's RunAgentInput carried; every run is taken as this thread's. */
  threadId: string;
  /** The AG-UI runId of this segment: the id of the stream's first run, whatever it names. */
  runId: string;
  /** The state the segment starts from (the thread's values). Default `{}`. */
  initialState?: unknown;
  /** The AG-UI messages the segment starts from (thread history plus new input). */
  initialMessages?: readonly AgUiMessage[];
  /** Precompiled AG-UI validators. Default: `src/validation`. */
  validation?: AguiValidation;
  /** Receives each warning with `{threadId, runId, index, eventType}`. */
  logger?: PipelineLogger;
  /**
   * Drop RAW events and the `rawEvent` field of every event, once validated: nothing of the
   * provider-native payloads is accumulated, stored or streamed. Default false.
   */
  dropRaw?: boolean;
  /** How deep an event and the state may nest, and how large the state may grow. */
  bounds?: ShapeBounds;
}

const NO_WARNINGS: readonly string[] = Object.freeze([]);
/** A quoted value in a warning: an id or a name, which varies from run to run. */
const QUOTED = /'[^']*'/g;

export class SegmentPipeline {
  private readonly validator: EventValidator;
  private readonly chunks = new ChunkExpander();
  private readonly ids: RunIdMapper;
  private readonly verifier: OrderVerifier;
  private readonly acc: Accumulator;
  private readonly logger: PipelineLogger | undefined;
  private readonly threadId: string;
  private readonly runId: string;
  private readonly dropRaw: boolean;
  private readonly bounds: ShapeBounds | undefined;

  private count = 0;
  private failure: PipelineFault | undefined;
  private last: TerminalInfo | undefined;
  /** Events dropped since the last RUN_ERROR: where the stretch began, its count and types. */
  private afterError:
    | { index: number; type: string; count: number; types: Set<string> }
    | undefined;

  // Per-push scratch, read by the bound `warn` (no closure allocated per event).
  private index = 0;
  private rawType = "";
  private warnings: string[] | undefined;
  private readonly warn = (text: string): void => {
    const line = `event ${this.index} (${this.rawType}): ${text}`;
    if (this.warnings) this.warnings.push(line);
    else this.warnings = [line];
    this.logger?.warn(
      {
        threadId: this.threadId,
        runId: this.runId,
        index: this.index,
        eventType: this.rawType,
        // What the agent did, without what varies from run to run (the quoted ids and
        // names), so that its repeats are counted together.
        deviation: `${this.rawType}: ${text.replace(QUOTED, "'…'")}`,
      },
      line,
    );
  };

  constructor(options: SegmentOptions) {
    this.threadId = options.threadId;
    this.runId = options.runId;
    this.logger = options.logger;
    this.dropRaw = options.dropRaw === true;
    this.validator = new EventValidator(
      options.validation ?? defaultValidation,
      new LegacyTranslator(),
    );
    this.ids = new RunIdMapper({ threadId: options.threadId, runId: options.runId });
    this.verifier = new OrderVerifier();
    const initialState = options.initialState === undefined ? {} : options.initialState;
    this.bounds = options.bounds;
    this.acc = new Accumulator(
      initialState,
      options.initialMessages ?? [],
      options.bounds && new StateBounds(options.bounds, initialState),
    );
  }

  /** The accumulated AG-UI state (replaced, never mutated in place). */
  get state(): unknown {
    return this.acc.state;
  }

  /** The accumulated AG-UI messages (live: copy or serialize to keep them). */
  get messages(): readonly AgUiMessage[] {
    return this.acc.messages as unknown as readonly AgUiMessage[];
  }

  /** The last terminal event seen. */
  get terminal(): TerminalInfo | undefined {
    return this.last;
  }

  /** The fault that ended the segment, if any. */
  get fault(): PipelineFault | undefined {
    return this.failure;
  }

  /** How many events have been pushed. */
  get eventCount(): number {
    return this.count;
  }

  /** Runs one adapter event through the pipeline. Never throws for bad input. */
  push(raw: unknown): PushResult {
    const index = this.count++;
    const result: PushResult = {
      events: [],
      warnings: NO_WARNINGS,
      stateChanged: false,
      messagesChanged: false,
    };
    if (this.failure) {
      result.fault = this.failure;
      return result;
    }
    this.index = index;
    this.rawType = rawTypeOf(raw);
    this.warnings = undefined;
    if (this.verifier.errored) {
      // AG-UI allows only a new RUN_STARTED after RUN_ERROR. Agents that go on (LangGraphAgent
      // closes its step and finishes) must not replace their own error with an ordering fault.
      if (this.rawType !== "RUN_STARTED") {
        this.dropAfterError(index);
        result.dropped = true;
        return result;
      }
      this.reportDroppedAfterError();
    }
    const out = result.events as unknown as EventRecord[];
    let accepted = 0;
    let changed = 0;
    try {
      if (this.bounds) this.checkDepth(raw);
      const checked = this.validator.check(raw, index, this.warn);
      const event = this.dropRaw && checked !== undefined ? withoutRaw(checked) : checked;
      if (event !== undefined) {
        this.chunks.expand(event, out);
        for (; accepted < out.length; accepted++) {
          let e = out[accepted]!;
          if (e.type === "RUN_STARTED" || e.type === "RUN_FINISHED") {
            e = this.ids.map(e, this.warn);
            out[accepted] = e;
          }
          this.verifier.verify(e);
          changed |= this.acc.apply(e, this.warn);
          this.observe(e, result);
        }
      }
    } catch (error) {
      out.length = accepted;
      result.fault = this.fail(error, index);
    }
    result.stateChanged = (changed & STATE_CHANGED) !== 0;
    result.messagesChanged = (changed & MESSAGES_CHANGED) !== 0;
    if (this.warnings) result.warnings = this.warnings;
    return result;
  }

  /** The adapter's stream is over: a fault unless the segment reached a terminal event. */
  end(): EndResult {
    this.warnings = undefined;
    this.reportDroppedAfterError();
    if (!this.failure && !this.verifier.ended) {
      const runId = this.verifier.runId;
      this.failure = new PipelineFault(
        -1,
        "",
        "incomplete-stream",
        runId === undefined
          ? "the stream ended without RUN_STARTED (or RUN_ERROR)"
          : `the stream ended while run '${runId}' was still open: no RUN_FINISHED or RUN_ERROR`,
      );
    }
    const result: EndResult = { warnings: this.warnings ?? NO_WARNINGS };
    if (this.failure) result.fault = this.failure;
    if (this.last) result.terminal = this.last;
    return result;
  }

  /** Before anything else reads the event: everything after recurses once per level. */
  private checkDepth(raw: unknown): void {
    const { maxEventDepth, keys } = this.bounds!;
    const at = deeperThan(raw, maxEventDepth);
    if (at) {
      throw new ShapeError(
        "event-depth",
        `the event is nested deeper than ${maxEventDepth} levels, at ${showPath(at)} (${keys.maxEventDepth})`,
      );
    }
  }

  private dropAfterError(index: number): void {
    if (!this.afterError) {
      this.afterError = { index, type: this.rawType, count: 0, types: new Set() };
    }
    this.afterError.count++;
    this.afterError.types.add(this.rawType);
  }

  /** One warning for the events dropped after a RUN_ERROR, once the stretch is over. */
  private reportDroppedAfterError(): void {
    const dropped = this.afterError;
    if (!dropped) return;
    this.afterError = undefined;
    this.index = dropped.index;
    this.rawType = dropped.type;
    const types = [...dropped.types];
    const shown = types.length > 5 ? `${types.slice(0, 5).join(", ")}, …` : types.join(", ");
    this.warn(
      `dropped ${dropped.count} event${dropped.count === 1 ? "" : "s"} (${shown}) the agent sent after its RUN_ERROR: AG-UI allows only a new RUN_STARTED after RUN_ERROR, so the run ends with the agent's error`,
    );
  }

  private observe(e: EventRecord, result: PushResult): void {
    switch (e.type) {
      case "RUN_STARTED": {
        result.runStarted = e as unknown as PushResult["runStarted"];
        const warning = producerVersionWarning(e.protocolVersion);
        if (warning) this.warn(warning);
        return;
      }
      case "STEP_FINISHED":
        result.checkpoint = "step";
        result.stepName = e.stepName as string;
        return;
      case "RUN_FINISHED":
      case "RUN_ERROR":
        this.last = this.terminalOf(e);
        result.terminal = this.last;
        return;
    }
  }

  private terminalOf(e: EventRecord): TerminalInfo {
    if (e.type === "RUN_ERROR") {
      const info: TerminalInfo = {
        kind: "error",
        runId: this.verifier.runId,
        message: e.message as string,
      };
      if (e.code !== undefined) info.code = e.code as string;
      if (e.usage !== undefined) info.usage = e.usage as never;
      return info;
    }
    const event = e as unknown as Extract<TerminalInfo, { kind: "finished" }>["event"];
    const outcome = event.outcome;
    const base = { kind: "finished" as const, runId: event.runId, event };
    const extra = {
      ...(event.result !== undefined && { result: event.result }),
      ...(event.usage !== undefined && { usage: event.usage }),
    };
    if (outcome?.type === "interrupt") {
      return { ...base, outcome: "interrupt", interrupts: outcome.interrupts, ...extra };
    }
    if (outcome?.type === "cancelled") return { ...base, outcome: "cancelled", ...extra };
    const named = outcome?.type === "success" ? outcome.pendingToolCallIds : undefined;
    return {
      ...base,
      outcome: "success",
      pendingToolCallIds: named && named.length > 0 ? [...named] : this.acc.unansweredToolCalls,
      ...extra,
    };
  }

  private fail(error: unknown, index: number): PipelineFault {
    let fault: PipelineFault;
    if (error instanceof PipelineFault) fault = error;
    else if (error instanceof VerifyError)
      fault = new PipelineFault(index, this.rawType, error.rule, error.message);
    else if (error instanceof ChunkError)
      fault = new PipelineFault(index, this.rawType, "chunk", error.message);
    else if (error instanceof ShapeError)
      fault = new PipelineFault(index, this.rawType, error.rule, error.message);
    else throw error;
    this.failure = fault;
    return fault;
  }
}

/** The event without provider-native payloads: undefined for RAW, else without `rawEvent`. */
function withoutRaw(event: EventRecord): EventRecord | undefined {
  if (event.type === "RAW") return undefined;
  if (!("rawEvent" in event)) return event;
  const { rawEvent: _dropped, ...rest } = event;
  return rest as EventRecord;
}

function rawTypeOf(raw: unknown): string {
  if (typeof raw !== "object" || raw === null) return raw === null ? "null" : typeof raw;
  if (Array.isArray(raw)) return "array";
  const type = (raw as { type?: unknown }).type;
  return typeof type === "string" ? type : "untyped";
}
