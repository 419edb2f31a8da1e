import {
  type AgUiMessage,
  type PipelineFault,
  type SegmentOptions,
  SegmentPipeline,
  type TerminalInfo,
} from "../../src/pipeline/index.js";

export const THREAD = "thread-1";
export const RUN = "run-1";

export interface Replay {
  seg: SegmentPipeline;
  /** Every forwarded event, in order. */
  events: Array<Record<string, unknown>>;
  warnings: string[];
  fault: PipelineFault | undefined;
  terminals: TerminalInfo[];
  /** Per push: [stateChanged, messagesChanged]. */
  changes: Array<[boolean, boolean]>;
  checkpoints: string[];
}

/** Pushes `stream` through a fresh pipeline (stopping at the first fault), then ends it. */
export function replay(
  stream: readonly unknown[],
  options: Partial<SegmentOptions> & { end?: boolean } = {},
): Replay {
  const seg = new SegmentPipeline({ threadId: THREAD, runId: RUN, ...options });
  const out: Replay = {
    seg,
    events: [],
    warnings: [],
    fault: undefined,
    terminals: [],
    changes: [],
    checkpoints: [],
  };
  for (const raw of stream) {
    const r = seg.push(raw);
    out.events.push(...(r.events as unknown as Array<Record<string, unknown>>));
    out.warnings.push(...r.warnings);
    out.changes.push([r.stateChanged, r.messagesChanged]);
    if (r.terminal) out.terminals.push(r.terminal);
    if (r.checkpoint) out.checkpoints.push(r.stepName ?? "");
    if (r.fault) {
      out.fault = r.fault;
      return out;
    }
  }
  if (options.end !== false) out.fault = seg.end().fault;
  return out;
}

export const started = (extra: Record<string, unknown> = {}) => ({
  type: "RUN_STARTED",
  threadId: THREAD,
  runId: RUN,
  ...extra,
});

export const finished = (extra: Record<string, unknown> = {}) => ({
  type: "RUN_FINISHED",
  threadId: THREAD,
  runId: RUN,
  ...extra,
});

/** A complete text message triad. */
export const text = (messageId: string, delta: string, extra: Record<string, unknown> = {}) => [
  { type: "TEXT_MESSAGE_START", messageId, role: "assistant", ...extra },
  { type: "TEXT_MESSAGE_CONTENT", messageId, delta },
  { type: "TEXT_MESSAGE_END", messageId },
];

/** Wraps events in RUN_STARTED … RUN_FINISHED. */
export const run = (...events: unknown[]) => [started(), ...events, finished()];

export const messages = (r: Replay) => r.seg.messages as unknown as Array<Record<string, unknown>>;

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export type { AgUiMessage };
