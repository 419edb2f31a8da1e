import type { Message } from "@ag-ui/core";
import type { Logger } from "pino";
import type { AgentAdapter } from "../adapters/types.js";
import { aguiToAcpMessages as toAcpMessages } from "../bridge/acp/messages.js";
import {
  ERRCODE,
  type SegmentEnd,
  storageFailureEnd,
  terminalEnd,
} from "../bridge/acp/outcomes.js";
import type { RunCommand } from "../bridge/acp/run-command.js";
import { buildRunInput } from "../bridge/acp/run-input.js";
import { asValues } from "../bridge/acp/values.js";
import type { AgentBounds } from "../config/agent-bounds.js";
import { SegmentPipeline } from "../pipeline/index.js";
import type { TerminalInfo } from "../pipeline/types.js";
import type { Fence, RunRecord, Storage, ThreadRecord } from "../storage/types.js";
import type { SegmentSpan } from "../telemetry/index.js";
import { isClaimLost } from "../util/errors.js";
import { newId } from "../util/ids.js";
import { type AbortGate, abortGate, stopsAt } from "./abortable.js";
import type { FrameBus } from "./frame-bus.js";
import { customFrameData, VALUES_DELTA_DATA, valuesKeyframeData } from "./frames/codec.js";
import type { LiveTails } from "./frames/live-tails.js";
import { FrameWriter } from "./frames/writer.js";
import { LazyAbortController } from "./run-engine/lazy-abort.js";
import { segmentResult, segmentSpan } from "./segment-tracing.js";

/** How long an agent may keep its stream open after RUN_FINISHED or RUN_ERROR. */
const TERMINAL_GRACE_MS = 500;
const STREAM_LEFT_OPEN = "the agent kept its stream open after the run's end";

/** How often the graces after runs' ends are checked: one ends up to this much late. */
const GRACE_TICK_MS = 50;

interface Grace {
  at: number;
  expire: () => void;
}

/**
 * The graces after runs' ends (TERMINAL_GRACE_MS), on one timer for all of them: a timer set
 * and cleared for every run showed in the profile, and almost every grace is cancelled (the
 * agent closes its stream right after its end).
 */
class Graces {
  readonly #due = new Set<Grace>();
  #timer: NodeJS.Timeout | undefined;

  start(ms: number, expire: () => void): Grace {
    const grace = { at: Date.now() + ms, expire };
    this.#due.add(grace);
    this.#timer ??= setInterval(() => this.#check(), GRACE_TICK_MS);
    return grace;
  }

  cancel(grace: Grace): void {
    this.#due.delete(grace);
  }

  #check(): void {
    if (this.#due.size === 0) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      return;
    }
    const now = Date.now();
    for (const grace of this.#due) {
      if (grace.at > now) continue;
      this.#due.delete(grace);
      grace.expire();
    }
  }
}

const graces = new Graces();

/** How large and deep an agent's events and state may be (its limits over the server's). */
export type SegmentBounds = AgentBounds;

/** Why the engine aborted a segment; carried as the AbortSignal's reason. */
export class StopReason extends Error {
  constructor(
    readonly kind: "cancel" | "rollback" | "timeout" | "shutdown",
    message: string,
  ) {
    super(message);
    this.name = "StopReason";
  }

  /** A client's cancel: `interrupt` ends the run as cancelled, `rollback` also undoes it. */
  static cancel(action: "interrupt" | "rollback"): StopReason {
    return action === "rollback"
      ? new StopReason("rollback", "run was cancelled and rolled back")
      : new StopReason("cancel", "run was cancelled");
  }
}

export interface SegmentOutcome {
  end: SegmentEnd;
  values: unknown;
  messages: Message[];
  writer: FrameWriter;
}

export interface ExecuteSegmentOptions {
  storage: Storage;
  bus: FrameBus;
  adapter: AdapterLike;
  run: RunRecord;
  /** The run's command, as parsed from its stored creation. */
  command: RunCommand;
  thread: ThreadRecord;
  /** The run's stop: aborting it ends the segment (the adapter's own signal follows it). */
  signal: AbortSignal | LazyAbortController;
  logger: Logger;
  /** Where this replica's readers find the run's frames that are not stored yet. */
  tails?: LiveTails;
  /** The claim this replica executes the run under: its frames are written fenced by it. */
  fence?: Fence;
  /** Events the adapter may yield in this segment; 0 or absent = no limit. */
  maxEvents?: number;
  /** Drop RAW events and `rawEvent` fields (the agent's `events.dropRaw`). */
  dropRaw?: boolean;
  /** Bounds on each event's size and depth and on the state; absent = none. */
  bounds?: SegmentBounds;
  /** Told of each event the adapter yields; `rejected` says why it went no further. */
  onEvent?: (rejected?: EventRejection) => void;
  /** The agent's configured name, for its `invoke_agent` span (default: its id). */
  agentName?: string;
}

/**
 * Why an adapter's event went no further: `dropped` (not an object, an unknown type, or sent
 * after RUN_ERROR: the run goes on), `invalid` (broke the schema or the event order: the run fails), `limit` (one
 * event more than `maxEvents`: the run fails).
 */
export type EventRejection = "dropped" | "invalid" | "limit";

type AdapterLike = Pick<AgentAdapter, "run">;

/**
 * Runs one segment of an ACP run (the first start, or one resume): builds the AG-UI input,
 * drives the adapter, passes every event through the pipeline, stores and publishes frames and
 * step checkpoints. Returns how the segment ended; the caller records the outcome.
 *
 * The run's AbortSignal is touched here only, and `runSegment` reads flags instead: on Node 20
 * every AbortSignal has a hidden class of its own, so optimized code that touches one is thrown
 * away at the next run's and compiled again. `runSegment` runs the loop over every event and
 * inlines the whole pipeline: compiling it again at each of a server's first six or so runs
 * cost about a third of their time. (Code that runs once per run stays unoptimized.)
 */
export async function executeSegment(options: ExecuteSegmentOptions): Promise<SegmentOutcome> {
  const { signal } = options;
  // The adapter gets its own controller: a protocol fault aborts it without aborting the run's.
  const adapterAbort = new AbortController();
  const stop: RunStop = { aborted: signal.aborted, reason: signal.reason, listening: true };
  const onAbort = () => {
    if (!stop.listening) return;
    stop.aborted = true;
    stop.reason = signal.reason;
    adapterAbort.abort(signal.reason);
  };
  const unlisten = listenForAbort(signal, onAbort);
  const span = segmentSpan(options.run, options.agentName);
  try {
    const segment = () =>
      runSegment(options, adapterAbort, abortGate(adapterAbort.signal), stop, span);
    if (span === undefined) return await segment();
    const outcome = await span.within(segment);
    span.end(segmentResult(outcome.end));
    return outcome;
  } catch (err) {
    span?.end({ status: "error", errorType: "exception", description: String(err) });
    throw err;
  } finally {
    unlisten();
  }
}

/** Calls `onAbort` once when `signal` aborts; returns what stops listening. */
export function listenForAbort(
  signal: AbortSignal | LazyAbortController,
  onAbort: () => void,
): () => void {
  if (signal instanceof LazyAbortController) return signal.onAbort(onAbort);
  signal.addEventListener("abort", onAbort, { once: true });
  return () => signal.removeEventListener("abort", onAbort);
}

/** The run's signal, as `runSegment` reads it. */
interface RunStop {
  aborted: boolean;
  reason: unknown;
  /** Cleared once the adapter's events are over: a later abort no longer reaches the adapter. */
  listening: boolean;
}

async function runSegment(
  options: ExecuteSegmentOptions,
  adapterAbort: AbortController,
  adapterGate: AbortGate,
  stop: RunStop,
  span: SegmentSpan | undefined,
): Promise<SegmentOutcome> {
  const { storage, bus, adapter, run, command, thread, logger, onEvent } = options;
  const maxEvents = options.maxEvents || Number.POSITIVE_INFINITY;
  const segment = run.segments.length - 1;
  const aguiRunId = run.segments[segment]!.agui_run_id;
  const input = buildRunInput(command, thread, {
    aguiRunId,
    first: run.segments.length <= 1,
    resume: run.resume,
  });
  span?.input(input.messages);
  const writer = new FrameWriter(storage, bus, run.run_id, run.last_seq, {
    fence: options.fence,
    tails: options.tails,
  });
  const pipeline = new SegmentPipeline({
    threadId: input.threadId,
    runId: input.runId,
    initialState: input.state,
    initialMessages: input.messages,
    logger,
    dropRaw: options.dropRaw,
    bounds: options.bounds,
  });
  const maxEventBytes = options.bounds?.maxEventBytes || Number.POSITIVE_INFINITY;

  /** A write of this run that failed: the run ends as an error saying so, the server goes on. */
  let storageFailure: { err: Error; what: string } | undefined;
  const failStorage = (err: unknown, what: string) => {
    if (storageFailure) return;
    storageFailure = { err: err instanceof Error ? err : new Error(String(err)), what };
    // Taken over: not a failure of this run, whose record is now the other replica's.
    if (isClaimLost(err)) logger.warn("lost the claim on the run to another replica; stopping it");
    else logger.error({ err }, `could not store the run's ${what}; the run fails`);
    adapterAbort.abort(storageFailure.err);
  };
  writer.onFailure((err) => failStorage(err, "events"));

  // Values frames are stored without their values (see frames/codec.ts): the segment's first
  // one says what the segment started from, and readers rebuild the rest from the events. The
  // start is taken now, before any event changes it.
  let keyframe: string | undefined = valuesKeyframeData(input.state, input.messages ?? []);
  const renderValues = () => {
    const data = keyframe ?? VALUES_DELTA_DATA;
    keyframe = undefined;
    return data;
  };

  let end: SegmentEnd | undefined;
  let terminal: TerminalInfo | undefined;
  let terminalGrace: Grace | undefined;
  /** Set when the grace after the run's end ran out and the adapter was closed for it. */
  let closedAfterEnd = false;
  try {
    const config = command.config ?? {};
    const events = adapter.run(input, { signal: adapterAbort.signal, config, segment, logger });
    let count = 0;
    for await (const raw of stopsAt(events, adapterGate)) {
      if (stop.aborted) break;
      if (++count > maxEvents) {
        onEvent?.("limit");
        const description = `the agent sent more than ${maxEvents} events in one run (server.limits.maxEventsPerRun)`;
        end = { kind: "error", errcode: ERRCODE.protocolViolation, description };
        adapterAbort.abort(new Error(description));
        break;
      }
      try {
        const pushed = pipeline.push(raw);
        onEvent?.(
          pushed.fault
            ? "invalid"
            : pushed.dropped || (pushed.events.length === 0 && pushed.warnings.length > 0)
              ? "dropped"
              : undefined,
        );
        let oversized: string | undefined;
        for (const event of pushed.events) {
          span?.event(event as unknown as { type: string } & Record<string, unknown>);
          let data: string;
          try {
            data = customFrameData(event);
          } catch (err) {
            // An in-process agent's value JSON cannot hold (a BigInt, a throwing toJSON).
            oversized = `event ${count - 1} (${String(event.type)}): the event cannot be written as JSON: ${(err as Error).message}`;
            break;
          }
          // An in-process agent's event is measured as the JSON it is stored as; a remote
          // agent's was bounded as it arrived, before it was held.
          if (data.length > maxEventBytes) {
            oversized = `event ${count - 1} (${String(event.type)}): the event is larger than ${maxEventBytes} bytes as JSON, the most one event may be (${options.bounds!.keys.maxEventBytes})`;
            break;
          }
          writer.custom(
            data,
            isSubagentWork(event as unknown as Record<string, unknown>) ? "subagent" : "custom",
          );
        }
        if (oversized) {
          end = { kind: "error", errcode: ERRCODE.protocolViolation, description: oversized };
          adapterAbort.abort(new Error(oversized));
          break;
        }
        if (pushed.stateChanged || pushed.messagesChanged) writer.values(renderValues);
        const backlog = writer.backlog();
        if (backlog) await backlog;
        if (pushed.fault) {
          end = {
            kind: "error",
            errcode: ERRCODE.protocolViolation,
            description: pushed.fault.message,
          };
          adapterAbort.abort(pushed.fault);
          break;
        }
        if (pushed.checkpoint === "step") {
          await writer.flush();
          if (storageFailure) break;
          try {
            await storage.addCheckpoint(run.thread_id!, {
              checkpoint_id: newId(),
              values: asValues(pipeline.state),
              messages: toAcpMessages(pipeline.messages),
              metadata: { run_id: run.run_id, step: pushed.stepName ?? null, source: "step" },
            });
          } catch (err) {
            failStorage(err, "step checkpoint");
            break;
          }
        }
        if (pushed.runStarted && terminalGrace !== undefined) {
          // Another run in the same stream (AG-UI allows runs back to back): not over after all.
          graces.cancel(terminalGrace);
          terminalGrace = undefined;
        }
        if (pushed.terminal) {
          terminal = pushed.terminal;
          // The agent said the run is over; one that then keeps its stream open must not hold
          // the run (and its concurrency slot) until the time limit.
          terminalGrace ??= graces.start(TERMINAL_GRACE_MS, () => {
            closedAfterEnd = true;
            adapterAbort.abort(new Error(STREAM_LEFT_OPEN));
          });
        }
      } catch (err) {
        throw new HandlingFailure(err, count - 1);
      }
    }
  } catch (err) {
    if (err instanceof HandlingFailure) {
      // Thrown by the server's own handling of an event, not by the agent: said to be so.
      logger.error({ err: err.cause }, "the server failed while handling an agent's event");
      end = { kind: "error", errcode: ERRCODE.agentError, description: err.message };
      adapterAbort.abort(err);
    } else if (!stop.aborted && !end && !closedAfterEnd && !storageFailure) {
      const message = err instanceof Error ? err.message : String(err);
      end = { kind: "error", errcode: ERRCODE.agentError, description: `agent failed: ${message}` };
    }
  } finally {
    if (terminalGrace !== undefined) graces.cancel(terminalGrace);
    stop.listening = false;
  }
  if (closedAfterEnd) {
    logger.warn(
      { deviation: STREAM_LEFT_OPEN },
      "the agent finished its run but left its stream open; closed it",
    );
  }

  if (stop.aborted) end = stoppedEnd(stop.reason);
  // Always ended: the end also reports what it settles (events dropped after RUN_ERROR).
  const ended = pipeline.end();
  if (!end) {
    if (ended.fault) {
      end = { kind: "error", errcode: ERRCODE.protocolViolation, description: ended.fault.message };
    } else {
      end = terminalEnd(ended.terminal ?? terminal);
    }
  }
  // Every frame is published, and the stores under way have committed or failed, before the end
  // is decided (what still waits for storage goes with the run's end). A run whose writes failed
  // ends as that failure, whatever the agent said: its record is not what the agent produced.
  // Only a rollback stands, since the run and its frames are deleted anyway.
  await writer.settle();
  const rolledBack = end.kind === "cancelled" && end.rollback;
  if (storageFailure && !rolledBack)
    end = storageFailureEnd(storageFailure.what, storageFailure.err);
  return { end, values: pipeline.state, messages: [...pipeline.messages], writer };
}

/**
 * An exception of the server's own code while it handled one of the agent's events: the run
 * fails saying whose fault it is, never with a bare JavaScript message as if it were the agent's.
 */
class HandlingFailure extends Error {
  constructor(cause: unknown, index: number) {
    const what = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(
      `the server failed while handling the agent's event ${index} (a fault of the server, not of the agent): ${what}`,
      { cause },
    );
    this.name = "HandlingFailure";
  }
}

const SUBAGENT_LIFECYCLE = new Set(["SUBAGENT_STARTED", "SUBAGENT_FINISHED", "SUBAGENT_ERROR"]);

/**
 * Output of a subagent (a subgraph, in ACP's words): events attributed by `subagentRunId`, and
 * lifecycle events of subagents nested in another one. The lifecycle of a top-level subagent is
 * the parent's own news and always streams.
 */
export function isSubagentWork(event: Record<string, unknown>): boolean {
  if (SUBAGENT_LIFECYCLE.has(event.type as string))
    return typeof event.parentSubagentRunId === "string";
  return typeof event.subagentRunId === "string";
}

function stoppedEnd(reason: unknown): SegmentEnd {
  if (reason instanceof StopReason) {
    if (reason.kind === "timeout") return { kind: "timeout", description: reason.message };
    if (reason.kind === "shutdown") {
      return { kind: "error", errcode: ERRCODE.shutdown, description: reason.message };
    }
    return { kind: "cancelled", description: reason.message, rollback: reason.kind === "rollback" };
  }
  const message = reason instanceof Error ? reason.message : String(reason);
  return { kind: "cancelled", description: `run was cancelled: ${message}`, rollback: false };
}
