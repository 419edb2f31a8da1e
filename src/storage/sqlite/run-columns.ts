/**
 * The columns the run repository (runs.ts) reads back after a write, the columns a patch may set,
 * and how each patch value is stored.
 */
import type { RunPatch } from "../types.js";
import { toJson } from "./json.js";
import { isoTimestamp, nullableIso } from "./mapping.js";

/** Every column `toRun` reads but `output`, which is returned as the literal "null". */
export const RETURNING_ALL_BUT_OUTPUT = [
  "seq",
  "run_id",
  "thread_id",
  "agent_id",
  "kind",
  "status",
  "created_at",
  "updated_at",
  "creation",
  "metadata",
  "'null' AS output",
  "interrupts",
  "resume",
  "segments",
  "start_after",
  "checkpoint_before",
  "owner",
  "lease_expires_at",
  "lease_epoch",
  "cancel_requested",
  "last_seq",
  "principal",
  "trace_context",
  "face",
].join(", ");

/** The columns a RunPatch may set, in a fixed order (one cached statement per combination). */
export const PATCH_COLUMNS = [
  "status",
  "output",
  "interrupts",
  "resume",
  "segments",
  "start_after",
  "checkpoint_before",
  "owner",
  "lease_expires_at",
  "cancel_requested",
] as const satisfies readonly (keyof RunPatch)[];

export function patchValue(column: (typeof PATCH_COLUMNS)[number], value: unknown): unknown {
  switch (column) {
    case "interrupts":
    case "resume":
    case "segments":
      return toJson(value);
    case "start_after":
      return isoTimestamp(value as string, "start_after");
    case "lease_expires_at":
      return nullableIso(value as string | null, "lease_expires_at");
    default:
      return value;
  }
}
