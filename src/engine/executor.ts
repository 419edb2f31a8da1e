import type { Interrupt, Message, RunAgentInput } from "@ag-ui/core";
import type { Logger } from "pino";
import type { AgentAdapter, RunConfig } from "../adapters/types.js";
import { newId } from "../ids.js";
import {
  acpToAguiMessages as fromAcpMessages,
  aguiToAcpMessages as toAcpMessages,
} from "../pipeline/acp-messages.js";
import { AGUI_PROTOCOL_VERSION, SegmentPipeline } from "../pipeline/index.js";
import type { TerminalInfo } from "../pipeline/types.js";
import type { RunRecord, Storage, ThreadRecord } from "../storage/types.js";
import { untilAborted } from "./abortable.js";
import { asValues } from "./acp-mapping.js";
import type { FrameBus } from "./frame-bus.js";
import { FrameWriter } from "./frame-writer.js";
import { toAcpInterrupt } from "./interrupts.js";
import { ERRCODE, errcodeOf, type SegmentEnd } from "./outcomes.js";

/** How long an agent may keep its stream open after RUN_FINISHED or RUN_ERROR. */
const TERMINAL_GRACE_MS = 500;
const STREAM_LEFT_OPEN = "the agent kept its stream open after the run's end";

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
  thread: ThreadRecord;
  signal: AbortSignal;
  logger: Logger;
  /** Events the adapter may yield in this segment; 0 or absent = no limit. */
  maxEvents?: number;
  /** Drop RAW events and `rawEvent` fields (the agent's `events.dropRaw`). */
  dropRaw?: boolean;
  /** Told of each event the adapter yields; `rejected` says why it went no further. */
  onEvent?: (rejected?: EventRejection) => void;
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
 */
export async function executeSegment(options: ExecuteSegmentOptions): Promise<SegmentOutcome> {
  const { storage, bus, adapter, run, thread, signal, logger, onEvent } = options;
  const maxEvents = options.maxEvents || Number.POSITIVE_INFINITY;
  const segment = run.segments.length - 1;
  const aguiRunId = run.segments[segment]!.agui_run_id;
  const input = buildRunInput(run, thread, aguiRunId);
  const writer = new FrameWriter(storage, bus, run.run_id, run.last_seq);
  const pipeline = new SegmentPipeline({
    threadId: input.threadId,
    runId: input.runId,
    initialState: input.state,
    initialMessages: input.messages,
    logger,
    dropRaw: options.dropRaw,
  });

  // The adapter gets its own controller: a protocol fault aborts it without aborting the run's.
  const adapterAbort = new AbortController();
  const onAbort = () => adapterAbort.abort(signal.reason);
  signal.addEventListener("abort", onAbort, { once: true });

  const renderValues = () =>
    JSON.stringify({
      type: "values",
      run_id: run.run_id,
      status: "pending",
      values: asValues(pipeline.state),
      messages: toAcpMessages(pipeline.messages),
    });

  let end: SegmentEnd | undefined;
  let terminal: TerminalInfo | undefined;
  let terminalGrace: NodeJS.Timeout | undefined;
  /** Set when the grace after the run's end ran out and the adapter was closed for it. */
  let closedAfterEnd = false;
  try {
    const config = (run.creation.config ?? {}) as RunConfig;
    const events = adapter.run(input, { signal: adapterAbort.signal, config, segment, logger });
    let count = 0;
    for await (const raw of untilAborted(events, adapterAbort.signal)) {
      if (signal.aborted) break;
      if (++count > maxEvents) {
        onEvent?.("limit");
        const description = `the agent sent more than ${maxEvents} events in one run (server.limits.maxEventsPerRun)`;
        end = { kind: "error", errcode: ERRCODE.protocolViolation, description };
        adapterAbort.abort(new Error(description));
        break;
      }
      const pushed = pipeline.push(raw);
      onEvent?.(
        pushed.fault
          ? "invalid"
          : pushed.dropped || (pushed.events.length === 0 && pushed.warnings.length > 0)
            ? "dropped"
            : undefined,
      );
      for (const event of pushed.events) {
        writer.custom(
          `{"type":"custom","run_id":"${run.run_id}","status":"pending","update":${JSON.stringify(event)}}`,
          isSubagentWork(event as unknown as Record<string, unknown>) ? "subagent" : "custom",
        );
      }
      if (pushed.stateChanged || pushed.messagesChanged) writer.values(renderValues);
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
        await storage.addCheckpoint(run.thread_id!, {
          checkpoint_id: newId(),
          values: asValues(pipeline.state),
          messages: toAcpMessages(pipeline.messages),
          metadata: { run_id: run.run_id, step: pushed.stepName ?? null, source: "step" },
        });
      }
      if (pushed.runStarted && terminalGrace !== undefined) {
        // Another run in the same stream (AG-UI allows runs back to back): not over after all.
        clearTimeout(terminalGrace);
        terminalGrace = undefined;
      }
      if (pushed.terminal) {
        terminal = pushed.terminal;
        // The agent said the run is over; one that then keeps its stream open must not hold
        // the run (and its concurrency slot) until the time limit.
        terminalGrace ??= setTimeout(() => {
          closedAfterEnd = true;
          adapterAbort.abort(new Error(STREAM_LEFT_OPEN));
        }, TERMINAL_GRACE_MS);
      }
    }
  } catch (err) {
    if (!signal.aborted && !end && !closedAfterEnd) {
      const message = err instanceof Error ? err.message : String(err);
      end = { kind: "error", errcode: ERRCODE.agentError, description: `agent failed: ${message}` };
    }
  } finally {
    clearTimeout(terminalGrace);
    signal.removeEventListener("abort", onAbort);
  }
  if (closedAfterEnd) logger.warn("the agent finished its run but left its stream open; closed it");

  if (signal.aborted) end = stoppedEnd(signal.reason);
  // Always ended: the end also reports what it settles (events dropped after RUN_ERROR).
  const ended = pipeline.end();
  if (!end) {
    if (ended.fault) {
      end = { kind: "error", errcode: ERRCODE.protocolViolation, description: ended.fault.message };
    } else {
      end = terminalEnd(ended.terminal ?? terminal);
    }
  }
  return { end, values: pipeline.state, messages: [...pipeline.messages], writer };
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

function terminalEnd(terminal: TerminalInfo | undefined): SegmentEnd {
  if (!terminal) {
    return {
      kind: "error",
      errcode: ERRCODE.protocolViolation,
      description: "end of stream: the agent ended without RUN_FINISHED or RUN_ERROR",
    };
  }
  if (terminal.kind === "error") {
    const code = terminal.code !== undefined ? ` (code ${terminal.code})` : "";
    return {
      kind: "error",
      errcode: errcodeOf(terminal.code),
      description: `${terminal.message}${code}`,
    };
  }
  if (terminal.outcome === "interrupt") {
    return {
      kind: "interrupt",
      interrupts: terminal.interrupts as unknown as Record<string, unknown>[],
    };
  }
  if (terminal.outcome === "cancelled") {
    return { kind: "cancelled", description: "the agent cancelled the run", rollback: false };
  }
  return terminal.result === undefined
    ? { kind: "success" }
    : { kind: "success", result: terminal.result };
}

/** The bridge page's table "ACP run → AG-UI run input". */
export function buildRunInput(
  run: RunRecord,
  thread: ThreadRecord,
  aguiRunId: string,
): RunAgentInput {
  const input = (run.creation.input ?? {}) as Record<string, unknown>;
  const firstSegment = run.segments.length <= 1;
  const history = fromAcpMessages(thread.messages ?? []);
  const added =
    firstSegment && Array.isArray(input.messages) ? fromAcpMessages(input.messages) : [];
  const config = run.creation.config as RunConfig | undefined;

  const result: RunAgentInput = {
    threadId: thread.thread_id,
    runId: aguiRunId,
    protocolVersion: AGUI_PROTOCOL_VERSION,
    messages: [...history, ...added],

    tools: Array.isArray(input.tools) ? (input.tools as RunAgentInput["tools"]) : [],
    context: Array.isArray(input.context) ? (input.context as RunAgentInput["context"]) : [],
    forwardedProps: {
      ...(isObject(input.forwardedProps) ? input.forwardedProps : {}),
      ...(config ? { acp: { config } } : {}),
    },
  };
  // AG-UI forbids a null state; a thread whose state is null sends none.
  // An AG-UI client (the AG-UI face) owns its state: what it sends wins over the thread's.
  const fromClient = run.creation.agui !== undefined && input.state !== undefined;
  const state = fromClient ? input.state : threadState(thread, input);
  if (state !== null && state !== undefined) result.state = state;
  if (run.resume && run.resume.length > 0) result.resume = run.resume as RunAgentInput["resume"];
  return result;
}

function threadState(thread: ThreadRecord, input: Record<string, unknown>): unknown {
  const values = thread.values;
  if (values !== null && values !== undefined) {
    // Non-object AG-UI state is stored wrapped (see acp-mapping.ts); unwrap it for the agent.
    if (isObject(values) && Object.keys(values).length === 1 && "$state" in values)
      return values.$state;
    if (!isObject(values) || Object.keys(values).length > 0) return values;
  }
  return input.state !== undefined ? input.state : {};
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function interruptOutput(interrupts: Record<string, unknown>[]): Record<string, unknown> {
  return { type: "interrupt", interrupt: toAcpInterrupt(interrupts as unknown as Interrupt[]) };
}
