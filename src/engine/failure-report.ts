import type { Logger } from "pino";
import type { SegmentEnd } from "../bridge/acp/outcomes.js";
import type { RunRecord } from "../storage/types.js";

/** How a run's failures are told: to the log always, to callers with or without internals. */
export interface FailureReporting {
  logger: Logger;
  /** The agent's name for the log line (its id when unknown). */
  agentName(agentId: string): string | undefined;
  /**
   * Callers see the error without the server's internals (file paths, upstream URLs) and with
   * a reference to the log line that has them (`server.hideInternals`).
   */
  hideInternals: boolean;
}

// A URL of any scheme (http, https, file, postgres…), up to a space, quote or closing bracket.
const URL_PATTERN = /\b[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\s"'`<>)\]]+/g;
// An absolute file path of at least two segments, where a word cannot be: "/srv/app/agent.mjs".
const PATH_PATTERN = /(?<=^|[\s"'`(=:,])\/(?:[^\s"'`()/]+\/)+[^\s"'`()/]*/g;

/** A failure's description as a caller may see it when internals stay in the log. */
export function withoutInternals(description: string, runId: string): string {
  const cleaned = description
    .replace(URL_PATTERN, "[internal address]")
    .replace(PATH_PATTERN, "[internal path]");
  return `${cleaned} (reference: run ${runId}; the server's log has the details)`;
}

/**
 * A run's end as it is recorded and shown: a failure (error or timeout) gets a `warn` line
 * naming the agent, the run, the error as its caller sees it and, when that differs, the full
 * detail; with `hideInternals` the caller's description loses paths and URLs.
 */
export function reportedEnd(run: RunRecord, end: SegmentEnd, report: FailureReporting): SegmentEnd {
  if (end.kind !== "error" && end.kind !== "timeout") return end;
  const shown = report.hideInternals
    ? withoutInternals(end.description, run.run_id)
    : end.description;
  report.logger.warn(
    {
      agent: report.agentName(run.agent_id) ?? run.agent_id,
      run_id: run.run_id,
      status: end.kind,
      ...(end.kind === "error" ? { errcode: end.errcode } : {}),
      error: shown,
      ...(shown !== end.description ? { detail: end.description } : {}),
    },
    "run failed",
  );
  return shown === end.description ? end : { ...end, description: shown };
}
