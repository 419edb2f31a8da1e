import { httpUrl, nonNegativeInteger } from "../config/schema-fragments.js";

/** `adapter:` of a remote AG-UI agent in the config file (closed, including its own `type`). */
export const aguiHttpOptionsSchema = {
  type: "object",
  additionalProperties: false,
  required: ["url"],
  properties: {
    type: { const: "agui-http" },
    url: httpUrl,
    headers: { type: "object", additionalProperties: { type: "string" } },
    connectTimeoutMs: nonNegativeInteger,
    idleTimeoutMs: nonNegativeInteger,
    protocol: { enum: ["sse", "proto"] },
    threadIdPrefix: { type: "string", minLength: 1, maxLength: 200 },
    stopUrl: {
      type: "string",
      format: "uri-template",
      pattern: "^https?://",
      "x-expected": "an http:// or https:// URL ({threadId} and {runId} are replaced)",
    },
  },
} as const;

/** A remote AG-UI agent's adapter once loaded. */
export interface AguiHttpAdapterConfig {
  type: "agui-http";
  url: string;
  /** `${ENV}` references already expanded. */
  headers: Record<string, string>;
  connectTimeoutMs: number;
  /** Longest silence between events before the run fails; 0 = no limit. */
  idleTimeoutMs: number;
  protocol: "sse" | "proto";
  /**
   * Put before the thread id the remote is sent. For a remote that is this server (or one
   * sharing its database): there the run's own thread id names the run's own, busy thread.
   */
  threadIdPrefix?: string;
  /**
   * Where to POST `{runId}` when a run is stopped before it ends; `{threadId}` and
   * `{runId}` in it are replaced. For remotes that keep a run going after its client leaves.
   */
  stopUrl?: string;
}

export const AGUI_HTTP_DEFAULTS = {
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 300_000,
  protocol: "sse",
} as const;
