/**
 * Row ↔ record helpers both storage backends share: frames and webhook deliveries map the same
 * way, and timestamps are the contract's `toISOString()` text in both.
 */
import { invalid } from "../util/errors.js";
import type { PushConfigRecord, RunFrame, WebhookDelivery } from "./types.js";

/** A webhook delivery row as both backends select it (SQLite adds an insertion counter). */
export interface WebhookRowFields {
  delivery_id: string;
  run_id: string;
  url: string;
  body: string;
  attempts: number;
  next_attempt_at: string;
  state: string;
  last_error: string | null;
  created_at: string;
  headers?: string | null;
  stream: string;
  target: string | null;
}

/**
 * The next attempt of a parked delivery: one behind an earlier pending delivery of its stream,
 * due only once that one is settled (the storage makes it due then).
 */
export const WEBHOOK_PARKED_AT = "9999-12-31T23:59:59.999Z";

export function toFrame(row: RunFrame): RunFrame {
  return { run_id: row.run_id, seq: row.seq, mode: row.mode, data: row.data };
}

export function toWebhook(row: WebhookRowFields): WebhookDelivery {
  return {
    delivery_id: row.delivery_id,
    run_id: row.run_id,
    url: row.url,
    body: row.body,
    attempts: row.attempts,
    next_attempt_at: row.next_attempt_at,
    state: row.state as WebhookDelivery["state"],
    last_error: row.last_error,
    created_at: row.created_at,
    ...(row.headers ? { headers: JSON.parse(row.headers) as Record<string, string> } : {}),
    stream: row.stream,
    // Deliveries queued before targets were stored have none: the deliverer reads their URL.
    target: row.target ?? "",
  };
}

/** A push config row as stored (the authentication as JSON text). */
export interface PushConfigRow {
  run_id: string;
  config_id: string;
  url: string;
  token: string | null;
  authentication: string | null;
  created_at: string;
}

export function toPushConfig(row: PushConfigRow): PushConfigRecord {
  return {
    run_id: row.run_id,
    config_id: row.config_id,
    url: row.url,
    token: row.token,
    authentication: row.authentication
      ? (JSON.parse(row.authentication) as PushConfigRecord["authentication"])
      : null,
    created_at: row.created_at,
  };
}

export const nowIso = (): string => new Date().toISOString();

export const addMs = (date: Date, ms: number): string =>
  new Date(date.getTime() + ms).toISOString();

/**
 * Normalizes a caller-given timestamp to `toISOString()` form. Timestamps are compared as text
 * (SQLite) and read back in this form (both), so every stored value must have exactly this shape.
 */
export function isoTimestamp(value: string, field: string): string {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw invalid(`${field} is not a valid timestamp: ${value}`);
  return date.toISOString();
}

export function nullableIso(value: string | null, field: string): string | null {
  return value === null ? null : isoTimestamp(value, field);
}
