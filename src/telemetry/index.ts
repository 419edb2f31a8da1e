/**
 * Tracing (OpenTelemetry), off unless asked for: docs/telemetry.md.
 *
 * This file is all the server loads while tracing is off. It imports no OpenTelemetry package:
 * `startTelemetry` loads the SDK (./sdk.js) only when tracing is on, and until then `tracing()`
 * is `undefined`, so a hot path pays one check (`tracing()?.…`) and nothing else.
 */

import type { StoredTraceContext, TelemetrySettings, Tracing } from "./types.js";

export type {
  SegmentInfo,
  SegmentResult,
  SegmentSpan,
  StoredTraceContext,
  TelemetrySettings,
  Tracing,
} from "./types.js";

export const TELEMETRY_DEFAULTS: TelemetrySettings = { captureContent: false };

let active: Tracing | undefined;

/** The tracing in effect, or undefined while tracing is off. */
export function tracing(): Tracing | undefined {
  return active;
}

/**
 * Log fields of the active span (none while tracing is off): the logger's mixin. A new object
 * each time: pino merges the line's own fields into it.
 */
export function traceLogFields(): Record<string, string> {
  return active === undefined ? {} : active.logFields();
}

/** Adds the active trace context to an outgoing request's headers; nothing while off. */
export function injectTraceHeaders(headers: Record<string, string>): Record<string, string> {
  active?.inject(headers);
  return headers;
}

/** A W3C `traceparent` (version 00): what a message may carry to continue its sender's trace. */
const TRACEPARENT = /^[\da-f]{2}-[\da-f]{32}-[\da-f]{16}-[\da-f]{2}$/;

/**
 * Runs `fn` in the trace a message names (`traceparent`, and `tracestate`, as MCP's `_meta`
 * carries them), so that a run it creates continues its sender's trace; as it is otherwise
 * (tracing off, nothing or nothing valid named).
 */
export function withMessageTraceContext<T>(meta: unknown, fn: () => T): T {
  if (active === undefined || typeof meta !== "object" || meta === null) return fn();
  const { traceparent, tracestate } = meta as Record<string, unknown>;
  if (typeof traceparent !== "string" || !TRACEPARENT.test(traceparent)) return fn();
  const carrier: Record<string, string> = { traceparent };
  if (typeof tracestate === "string" && tracestate.length <= 512) carrier.tracestate = tracestate;
  return active.withParent(carrier, fn);
}

/**
 * The headers that put a request in a run's trace (its stored context): for work done on the
 * run's behalf outside its segments, such as webhook deliveries. None while tracing is off.
 */
export function storedTraceHeaders(
  stored: StoredTraceContext | null | undefined,
): Record<string, string> {
  if (active === undefined || !stored) return {};
  const [traceparent, tracestate] = stored.split("\n");
  return tracestate ? { traceparent: traceparent!, tracestate } : { traceparent: traceparent! };
}

/** Whether these settings and this environment turn tracing on. */
export function tracingWanted(settings: TelemetrySettings, env: NodeJS.ProcessEnv): boolean {
  if (isTrue(env.OTEL_SDK_DISABLED) || env.OTEL_TRACES_EXPORTER?.trim() === "none") return false;
  if (settings.enabled !== undefined) return settings.enabled;
  return Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
}

interface WarnLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/**
 * Turns tracing on when the settings and environment ask for it (loading the SDK then only);
 * returns the tracing, or undefined when off. One tracing per process: a second start while
 * one is on returns that one.
 */
export async function startTelemetry(
  settings: TelemetrySettings,
  logger: WarnLogger,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Tracing | undefined> {
  if (!tracingWanted(settings, env)) return undefined;
  if (active) return active;
  const { startSdk } = await import("./sdk.js");
  const started = await startSdk(settings, env, logger, () => {
    if (active === started) active = undefined;
  });
  active = started;
  return active;
}

function isTrue(value: string | undefined): boolean {
  return value?.trim().toLowerCase() === "true";
}
