/**
 * How an AG-UI run ends, in ACP terms: the end of a segment as the engine knows it, the run and
 * thread statuses it leads to, and the run's ACP `output`.
 */

import type { Interrupt } from "@ag-ui/core";
import type { TerminalInfo } from "../../pipeline/types.js";
import type { RunStatus, ThreadStatus } from "../../validation/acp-types.js";
import { toAcpInterrupt } from "./interrupts.js";

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

/** How the agent's own terminal event (or its absence) ends the segment. */
export function terminalEnd(terminal: TerminalInfo | undefined): SegmentEnd {
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

/** The ACP `output` of a run whose segment ended so, with the run's values and messages. */
export function runOutput(
  runId: string,
  end: SegmentEnd,
  values: Record<string, unknown>,
  messages: unknown[],
): Record<string, unknown> {
  switch (end.kind) {
    case "success":
      return end.result === undefined
        ? { type: "result", values, messages }
        : { type: "result", values, messages, result: end.result };
    case "interrupt":
      return interruptOutput(end.interrupts);
    case "cancelled":
      return {
        type: "error",
        run_id: runId,
        errcode: ERRCODE.cancelled,
        description: end.description,
      };
    case "timeout":
      return {
        type: "error",
        run_id: runId,
        errcode: ERRCODE.timeout,
        description: end.description,
      };
    case "error":
      return { type: "error", run_id: runId, errcode: end.errcode, description: end.description };
  }
}

export function interruptOutput(interrupts: Record<string, unknown>[]): Record<string, unknown> {
  return { type: "interrupt", interrupt: toAcpInterrupt(interrupts as unknown as Interrupt[]) };
}
