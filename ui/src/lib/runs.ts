/** What a run's row and header say about it: its outcome, the face it came through, its time. */

/**
 * The run's status as a person reads it. ACP ends a cancelled run as `error` with errcode 499
 * (docs/bridge.md); cancelling is no failure, so it gets a word of its own.
 */
export function runOutcome(status: string, output: Record<string, unknown> | null | undefined) {
  if (status === "error" && output?.type === "error" && output.errcode === CANCELLED) {
    return "cancelled";
  }
  return status;
}

const CANCELLED = 499;

/** The faces a run can come through, by the name the server records (`RunRecord.face`). */
const FACES: Record<string, string> = {
  acp: "ACP",
  agui: "AG-UI",
  copilotkit: "CopilotKit",
  a2a: "A2A",
  mcp: "MCP",
  langgraph: "LangGraph",
};

/** A face's name as its protocol spells it; "—" for a run from before faces were recorded. */
export function faceLabel(face: string | null | undefined): string {
  if (!face) return "—";
  return FACES[face] ?? face;
}

export interface Segment {
  started_at: string;
  ended_at: string | null;
}

/**
 * How long the run executed: its segments added up (the time it waited, queued or for an
 * answer to an interrupt, left out); an open segment counts until `now`. Null before it
 * started.
 */
export function executedMs(segments: readonly Segment[], now: number): number | null {
  if (segments.length === 0) return null;
  return segments.reduce((ms, s) => {
    const end = s.ended_at ? Date.parse(s.ended_at) : now;
    return ms + Math.max(0, end - Date.parse(s.started_at));
  }, 0);
}

/** The run's page: under its thread for a thread run, else among the runs. */
export function runPath(run: { run_id: string; thread_id?: string; kind?: string }): string {
  return (run.kind ?? "stateful") === "stateful" && run.thread_id
    ? `/threads/${run.thread_id}/runs/${run.run_id}`
    : `/runs/${run.run_id}`;
}
