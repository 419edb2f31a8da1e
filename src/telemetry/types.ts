/** The tracing's types, shared by the facade (index.ts) and the SDK behind it (sdk.ts). */

/** `server.telemetry` in the config file, after defaults. */
export interface TelemetrySettings {
  /**
   * `true` traces, `false` never does; absent: traces when an OTLP endpoint is set in the
   * environment (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`).
   */
  enabled?: boolean;
  /** Export messages, tool arguments and results (user data); default false. */
  captureContent: boolean;
  /** The resource's `service.name` when `OTEL_SERVICE_NAME` does not say; default `acp-agui`. */
  serviceName?: string;
}

/**
 * A span's W3C trace context as stored with a run: `traceparent`, and `tracestate` after a
 * newline when there is one. Opaque outside this folder.
 */
export type StoredTraceContext = string;

/** What the run's executor says of the agent it invokes (the `invoke_agent` span). */
export interface SegmentInfo {
  agentName: string;
  agentId: string;
  runId: string;
  threadId: string | null;
  /** 0 for a run's start, 1 for its first resume, … */
  segment: number;
  /** The run's stored trace context: the segment's parent, whichever replica runs it. */
  parent: StoredTraceContext | null;
  /**
   * The request that started this segment (a resume), linked when it is of another trace; null:
   * whatever is active where the segment starts.
   */
  linked?: StoredTraceContext | null;
}

/** How a segment ended, as the `invoke_agent` span records it. */
export interface SegmentResult {
  /** The run's status after the segment: success, error, timeout, interrupted, cancelled. */
  status: string;
  /** For a failed segment: the ACP error code (`error.type`) and its description. */
  errorType?: string;
  description?: string;
}

/** One segment's `invoke_agent` span and the `execute_tool` spans under it. */
export interface SegmentSpan {
  /** Runs `fn` with the segment's span active: logs and outgoing calls inside belong to it. */
  within<T>(fn: () => Promise<T>): Promise<T>;
  /** Each AG-UI event the pipeline let through (tool calls, usage, messages). */
  event(event: { type: string } & Record<string, unknown>): void;
  /** The input the agent was given (exported only with `captureContent`). */
  input(messages: unknown): void;
  end(result: SegmentResult): void;
}

/** The tracing the server does while it is on. */
export interface Tracing {
  readonly captureContent: boolean;
  /** The active span's context, to store with a run created now; null when none. */
  activeContext(): StoredTraceContext | null;
  startSegment(info: SegmentInfo): SegmentSpan;
  /**
   * Runs `fn` with a W3C trace context given in a message rather than in headers (an MCP
   * request's `_meta.traceparent`) as the active one: a run created there joins that trace.
   */
  withParent<T>(carrier: Record<string, string>, fn: () => T): T;
  /** Adds `traceparent` (and `tracestate`) of the active span to an outgoing request's headers. */
  inject(headers: Record<string, string>): void;
  /** `trace_id` and `span_id` of the active span, for log lines. */
  logFields(): Record<string, string>;
  /** The Fastify plugin that opens each request's span (incoming `traceparent` honoured). */
  fastifyPlugin(): unknown;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}
