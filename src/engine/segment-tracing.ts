/**
 * A run segment's `invoke_agent` span (docs/telemetry.md), when tracing is on. The span's parent
 * is the trace context stored with the run, not whatever is active here: a resume, a replica
 * that claimed the run, a restart's recovery all continue the run's own trace.
 */
import type { SegmentEnd } from "../bridge/acp/outcomes.js";
import type { RunRecord } from "../storage/types.js";
import {
  type SegmentResult,
  type SegmentSpan,
  type StoredTraceContext,
  tracing,
} from "../telemetry/index.js";

/**
 * The trace context of the request that resumed a run, kept until the run's next segment
 * starts here: the engine starts it from its claim loop, in whatever context woke that loop
 * (another request's, or none), so the resuming request's span is looked up here to be linked.
 * A run another replica claims leaves its entry behind: the oldest go past MAX_RESUMERS.
 */
const resumers = new Map<string, StoredTraceContext>();
const MAX_RESUMERS = 1_000;

/** Records the active request (while tracing is on) as the resumer of `runId`'s next segment. */
export function rememberResumer(runId: string): void {
  const active = tracing()?.activeContext() ?? null;
  if (active === null) return;
  resumers.delete(runId);
  resumers.set(runId, active);
  if (resumers.size > MAX_RESUMERS) resumers.delete(resumers.keys().next().value!);
}

/** The segment's span, or undefined while tracing is off (the executor then does nothing more). */
export function segmentSpan(
  run: RunRecord,
  agentName: string | undefined,
): SegmentSpan | undefined {
  const resumer = resumers.get(run.run_id) ?? null;
  resumers.delete(run.run_id);
  return tracing()?.startSegment({
    linked: resumer,
    agentName: agentName ?? run.agent_id,
    agentId: run.agent_id,
    runId: run.run_id,
    threadId: run.thread_id,
    segment: run.segments.length - 1,
    parent: run.trace_context ?? null,
  });
}

/** What the span records of a segment's end: the run's status and, for a failure, its code. */
export function segmentResult(end: SegmentEnd): SegmentResult {
  switch (end.kind) {
    case "success":
      return { status: "success" };
    case "interrupt":
      return { status: "interrupted" };
    case "cancelled":
      return { status: "cancelled" };
    case "timeout":
      return { status: "timeout", errorType: "timeout", description: end.description };
    case "error":
      return { status: "error", errorType: String(end.errcode), description: end.description };
  }
}

/** The trace context to store with a run created now (the request's), null while tracing is off. */
export function traceContextForNewRun(): string | null {
  return tracing()?.activeContext() ?? null;
}
