import type { RunFrame, RunStatus } from "../../storage/types.js";

/**
 * The run frame format: the only module that writes a frame's `data` or reads it back.
 *
 * A frame's data is the ACP `RunOutputStream` item sent as an SSE event's data, byte for byte:
 * - custom / subagent: `{"type":"custom","run_id":…,"status":"pending","update":<AG-UI event>}`
 * - values: `{"type":"values","run_id":…,"status":"pending","values":…,"messages":…}`
 * - final: `{"type":"values","run_id":…,"status":<run status>,"values":…,"messages":…,"output":…}`
 *
 * The key order is part of the format: `endsForGood` reads a final frame's status from its
 * first bytes instead of parsing frames that can be megabytes long.
 */

/** A custom frame's data: one AG-UI event. Run ids are UUIDs, written without escaping. */
export function customFrameData(runId: string, event: unknown): string {
  return `{"type":"custom","run_id":"${runId}","status":"pending","update":${JSON.stringify(event)}}`;
}

/** A values frame's data: the run's state and messages so far. */
export function valuesFrameData(runId: string, values: unknown, messages: unknown): string {
  return JSON.stringify({ type: "values", run_id: runId, status: "pending", values, messages });
}

/** A final frame's data: how the run (segment) ended, with its values, messages and output. */
export function finalFrameData(
  runId: string,
  status: RunStatus,
  values: unknown,
  messages: unknown,
  output: unknown,
): string {
  return JSON.stringify({ type: "values", run_id: runId, status, values, messages, output });
}

/** A final frame's status prefix, as `finalFrameData` writes it. */
const FINAL_STATUS = /^\{"type":"values","run_id":"[^"\\]*","status":"(success|error|timeout)"/;

/**
 * True for a final frame that ends the run for good: a terminal status (success, error,
 * timeout) is never followed by another segment or frame. An `interrupted` final frame (or one
 * not in this format) is left to the caller to decide.
 */
export function endsForGood(frame: RunFrame): boolean {
  return frame.mode === "final" && FINAL_STATUS.test(frame.data);
}

/** What a final frame says of the run's end. */
export interface FinalFrame {
  status: RunStatus;
  output: Record<string, unknown> | null;
}

/** A final frame's status and output; `undefined` for any other frame. */
export function readFinal(frame: RunFrame): FinalFrame | undefined {
  if (frame.mode !== "final") return undefined;
  const data = JSON.parse(frame.data) as { status: RunStatus; output?: FinalFrame["output"] };
  return { status: data.status, output: data.output as FinalFrame["output"] };
}

/** The AG-UI event a custom or subagent frame carries; `undefined` for any other frame. */
export function readUpdate(frame: RunFrame): Record<string, unknown> | undefined {
  if (frame.mode !== "custom" && frame.mode !== "subagent") return undefined;
  const data = JSON.parse(frame.data) as { update?: Record<string, unknown> };
  return data.update ?? undefined;
}
