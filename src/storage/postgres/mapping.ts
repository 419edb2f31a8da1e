/**
 * Rows as pg returns them (json columns already parsed, timestamptz already ISO text, see
 * connection.ts), their conversion to the contract's records, and error translation.
 */
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
import { pgCode } from "./connection.js";

export { addMs, isoTimestamp, nowIso, nullableIso, toFrame, toWebhook } from "../records.js";

/** Column lists without the digest columns, which never leave the database. */
export const THREAD_COLUMNS = `thread_id, created_at, updated_at, metadata, status, "values",
  messages, checkpoint_id, hidden, principal`;
export const CHECKPOINT_COLUMNS = `checkpoint_id, thread_id, parent_checkpoint_id, created_at,
  "values", messages, metadata`;
export const RUN_COLUMNS = `run_id, thread_id, agent_id, kind, status, created_at, updated_at,
  creation, metadata, output, interrupts, resume, segments, start_after, checkpoint_before, owner,
  lease_expires_at, lease_epoch, cancel_requested, last_seq, principal, trace_context, face`;
export const WEBHOOK_COLUMNS = `delivery_id, run_id, url, body, attempts, next_attempt_at, state,
  last_error, created_at, headers, stream, target`;

export interface ThreadRow {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  status: string;
  values: unknown;
  messages: AcpMessage[] | null;
  checkpoint_id: string | null;
  hidden: boolean;
  principal: string | null;
}

export interface CheckpointRow {
  checkpoint_id: string;
  thread_id: string;
  parent_checkpoint_id: string | null;
  created_at: string;
  values: unknown;
  messages: AcpMessage[] | null;
  metadata: Record<string, unknown>;
}

export interface RunRow {
  run_id: string;
  thread_id: string | null;
  agent_id: string;
  kind: string;
  status: string;
  created_at: string;
  updated_at: string;
  creation: Record<string, unknown>;
  metadata: Record<string, unknown>;
  output: Record<string, unknown> | null;
  interrupts: Record<string, unknown>[];
  resume: Record<string, unknown>[] | null;
  segments: SegmentRecord[];
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

export type WebhookRow = WebhookRowFields;

export function toThread(row: ThreadRow): ThreadRecord {
  return {
    thread_id: row.thread_id,
    created_at: row.created_at,
    updated_at: row.updated_at,
    metadata: row.metadata,
    status: row.status as ThreadStatus,
    values: row.values,
    messages: row.messages,
    checkpoint_id: row.checkpoint_id,
    hidden: row.hidden,
    principal: row.principal,
  };
}

export function toCheckpoint(row: CheckpointRow): CheckpointRecord {
  return {
    checkpoint_id: row.checkpoint_id,
    thread_id: row.thread_id,
    parent_checkpoint_id: row.parent_checkpoint_id,
    created_at: row.created_at,
    values: row.values,
    messages: row.messages,
    metadata: row.metadata,
  };
}

export function toRun(row: RunRow): RunRecord {
  return {
    run_id: row.run_id,
    thread_id: row.thread_id,
    agent_id: row.agent_id,
    kind: row.kind as RunRecord["kind"],
    status: row.status as RunRecord["status"],
    created_at: row.created_at,
    updated_at: row.updated_at,
    creation: row.creation,
    metadata: row.metadata,
    output: row.output,
    interrupts: row.interrupts,
    resume: row.resume,
    segments: row.segments,
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

/** Rethrows a CHECK failure (a value outside an enum, from a caller) as `invalid`. */
export function rethrowInvalid(err: unknown, what: string): never {
  if (pgCode(err) === "23514")
    throw invalid(`${what}: a field has a value outside its allowed set`);
  throw err;
}
