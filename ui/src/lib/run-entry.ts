import { utf8Length } from "./format";
import type { AcpMessage } from "./types";

/** One frame of a run as the inspector holds it: parsed once, kept small. */

export type FrameMode = "custom" | "subagent" | "values" | "final";

/** One ACP frame of the run, with the AG-UI event it carries (custom frames). */
export interface Entry {
  seq: number;
  mode: FrameMode;
  /** The frame's data as sent (one JSON line). */
  raw: string;
  data: Record<string, unknown>;
  /** The AG-UI event of a custom frame. */
  event?: Record<string, unknown>;
  /** The AG-UI event type, or `values` / `final` for the ACP-only frames. */
  type: string;
  /** The subagent run the event belongs to (its lane), if any. */
  lane: string | null;
  size: number;
  /** Messages a values or final frame carries (the messages themselves stay in `raw`). */
  messageCount?: number;
  /** When the page received it (ms since epoch); null for frames read back from storage. */
  receivedAt: number | null;
}

/** The run's values and messages after one values (or final) frame, and what it changed. */
export interface StateVersion {
  seq: number;
  values: Record<string, unknown>;
  messages: AcpMessage[];
  changed: Set<string>;
}

export type Connection = "connecting" | "live" | "ended" | "replaying" | "failed";

/**
 * An entry for a frame: its AG-UI event (custom and subagent frames), its type and lane, its
 * size, and for values and final frames the messages it carries (returned apart: only the
 * newest state version keeps them parsed).
 */
export function makeEntry(
  seq: number,
  mode: FrameMode,
  data: Record<string, unknown>,
  receivedAt: number | null,
  raw?: string,
): { entry: Entry; messages: AcpMessage[] | null } {
  const event =
    mode === "custom" || mode === "subagent"
      ? (data.update as Record<string, unknown> | undefined)
      : undefined;
  const text = raw ?? JSON.stringify(data);
  // Every values frame repeats all messages so far: only the newest version keeps them parsed
  // (a long run's frames would otherwise hold its conversation once per frame).
  let messages: AcpMessage[] | null = null;
  let kept = data;
  if (mode === "values" || mode === "final") {
    messages = (data.messages ?? []) as AcpMessage[];
    const { messages: _dropped, ...rest } = data;
    kept = rest;
  }
  const entry: Entry = {
    seq,
    mode: mode === "custom" && event?.subagentRunId ? "subagent" : mode,
    raw: text,
    data: kept,
    messageCount: messages?.length,
    event,
    type: event ? String(event.type ?? "?") : mode,
    lane: laneOf(event),
    size: utf8Length(text),
    receivedAt,
  };
  return { entry, messages };
}

export function modeOf(data: Record<string, unknown>): FrameMode {
  if (data.type === "custom") return "custom";
  if ("output" in data || (typeof data.status === "string" && data.status !== "pending")) {
    return "final";
  }
  return "values";
}

export function laneOf(event: Record<string, unknown> | undefined): string | null {
  if (!event) return null;
  if (typeof event.subagentRunId === "string") return event.subagentRunId;
  return null;
}
