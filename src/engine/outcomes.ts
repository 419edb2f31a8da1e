import type { RunStatus, ThreadStatus } from "../storage/types.js";

/**
 * ACP `RunError.errcode` is an integer; AG-UI codes are strings. Numeric AG-UI codes pass
 * through; every other fault gets one of these, and the description keeps the original code.
 */
export const ERRCODE = {
  agentError: 500,
  protocolViolation: 502,
  serverRestart: 503,
  timeout: 504,
  cancelled: 499,
  shutdown: 503,
  storageFailure: 500,
} as const;

export function errcodeOf(aguiCode: unknown): number {
  if (typeof aguiCode === "number" && Number.isInteger(aguiCode)) return aguiCode;
  if (typeof aguiCode === "string" && /^\d{1,9}$/.test(aguiCode)) return Number(aguiCode);
  return ERRCODE.agentError;
}

/** Why a segment ended, as the engine knows it. */
export type SegmentEnd =
  | { kind: "success"; result?: unknown }
  | { kind: "interrupt"; interrupts: Record<string, unknown>[] }
  | { kind: "cancelled"; description: string; rollback: boolean }
  | { kind: "error"; errcode: number; description: string }
  | { kind: "timeout"; description: string };

/** How a run ends when the server could not store `what` of it (its events, a checkpoint…). */
export function storageFailureEnd(what: string, err: Error): SegmentEnd {
  return {
    kind: "error",
    errcode: ERRCODE.storageFailure,
    description: `the server could not store the run's ${what}: ${err.message}`,
  };
}

/** The bridge page's status table: run status and thread status for each end of segment. */
export function statusesFor(end: SegmentEnd): { run: RunStatus; thread: ThreadStatus } {
  switch (end.kind) {
    case "success":
      return { run: "success", thread: "idle" };
    case "interrupt":
      return { run: "interrupted", thread: "interrupted" };
    case "cancelled":
      return { run: "error", thread: "idle" };
    case "timeout":
      return { run: "timeout", thread: "error" };
    case "error":
      return { run: "error", thread: "error" };
  }
}
