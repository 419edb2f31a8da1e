/** Rows as SQLite returns them, and their conversion to the contract's records. */
import { invalid } from "../../util/errors.js";
import type { WebhookRowFields } from "../records.js";
import type {
  AcpMessage,
  CheckpointRecord,
  RunRecord,
  SegmentRecord,
  ThreadRecord,
  ThreadStatus,
} from "../types.js";
import { fromJson } from "./json.js";
import { outputWithState, type StoredState } from "./output-state.js";
import { unpackJson } from "./packed-json.js";

export { addMs, isoTimestamp, nowIso, nullableIso, toFrame, toWebhook } from "../records.js";

export interface ThreadRow {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: string;
  status: string;
  values: string | Buffer;
  messages: string | Buffer;
  checkpoint_id: string | null;
  hidden: number;
  principal: string | null;
}

export interface CheckpointRow {
  seq: number;
  checkpoint_id: string;
  thread_id: string;
  parent_checkpoint_id: string | null;
  created_at: string;
  values: string | Buffer;
  messages: string | Buffer;
  metadata: string;
}

export interface RunRow {
  seq: number;
  run_id: string;
  thread_id: string | null;
  agent_id: string;
  kind: string;
  status: string;
  created_at: string;
  updated_at: string;
  creation: string;
  metadata: string;
  /** JSON text, or packed when long (packed-json.ts). */
  output: string | Buffer;
  interrupts: string;
  resume: string;
  segments: string;
  start_after: string;
  checkpoint_before: string | null;
  owner: string | null;
  lease_expires_at: string | null;
  lease_epoch: number;
  cancel_requested: string | null;
  last_seq: number;
  principal: string | null;
  trace_context: string | null;
  face: string | null;
}

export interface WebhookRow extends WebhookRowFields {
  seq: number;
}

export function toThread(row: ThreadRow): ThreadRecord {
  return {
    thread_id: row.thread_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    metadata: fromJson<Record<string, unknown>>(row.metadata),
    status: row.status as ThreadStatus,
    values: unpackJson<unknown>(row.values),
    messages: unpackJson<AcpMessage[] | null>(row.messages),
    checkpoint_id: row.checkpoint_id,
    hidden: row.hidden === 1,
    principal: row.principal,
  };
}

export function toCheckpoint(row: CheckpointRow): CheckpointRecord {
  return {
    checkpoint_id: row.checkpoint_id,
    thread_id: row.thread_id,
    parent_checkpoint_id: row.parent_checkpoint_id,
    created_at: row.created_at,
    values: unpackJson<unknown>(row.values),
    messages: unpackJson<AcpMessage[] | null>(row.messages),
    metadata: fromJson<Record<string, unknown>>(row.metadata),
  };
}

/**
 * `outputParts`: reads the parts of an output stored in parts (packed-json.ts); `stateOf`: a
 * checkpoint's state, for an output stored with its checkpoint's (output-state.ts).
 */
export function toRun(
  row: RunRow,
  outputParts?: (runId: string) => Buffer[],
  stateOf?: (seq: number) => StoredState | undefined,
): RunRecord {
  return {
    run_id: row.run_id,
    thread_id: row.thread_id,
    agent_id: row.agent_id,
    kind: row.kind as RunRecord["kind"],
    status: row.status as RunRecord["status"],
    created_at: row.created_at,
    updated_at: row.updated_at,
    creation: fromJson<Record<string, unknown>>(row.creation),
    metadata: fromJson<Record<string, unknown>>(row.metadata),
    output:
      (stateOf && outputWithState(row.output, stateOf)) ??
      unpackJson<Record<string, unknown> | null>(
        row.output,
        outputParts && (() => outputParts(row.run_id)),
      ),
    interrupts: fromJson<Record<string, unknown>[]>(row.interrupts),
    resume: fromJson<Record<string, unknown>[] | null>(row.resume),
    segments: fromJson<SegmentRecord[]>(row.segments),
    start_after: row.start_after,
    checkpoint_before: row.checkpoint_before,
    owner: row.owner,
    lease_expires_at: row.lease_expires_at,
    lease_epoch: row.lease_epoch,
    cancel_requested: row.cancel_requested as RunRecord["cancel_requested"],
    last_seq: row.last_seq,
    principal: row.principal,
    trace_context: row.trace_context ?? null,
    face: row.face ?? null,
  };
}

/** better-sqlite3 reports constraint failures as `SqliteError` with a `code` such as this. */
export function sqliteCode(err: unknown): string | undefined {
  if (err instanceof Error && "code" in err && typeof err.code === "string") return err.code;
  return undefined;
}

/** Rethrows CHECK failures (a bad enum value from a caller) as `invalid`. */
export function rethrowCheck(err: unknown, what: string): never {
  if (sqliteCode(err) === "SQLITE_CONSTRAINT_CHECK") {
    throw invalid(`${what}: a field has a value outside its allowed set`);
  }
  throw err;
}
