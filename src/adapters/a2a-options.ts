import { httpUrl, nonNegativeInteger, positiveInteger } from "../config/schema-fragments.js";

/** `adapter:` of a remote A2A agent in the config file (closed, including its own `type`). */
export const a2aOptionsSchema = {
  type: "object",
  additionalProperties: false,
  required: ["url"],
  properties: {
    type: { const: "a2a" },
    url: httpUrl,
    headers: { type: "object", additionalProperties: { type: "string" } },
    binding: { enum: ["auto", "jsonrpc", "http-json"] },
    connectTimeoutMs: nonNegativeInteger,
    idleTimeoutMs: nonNegativeInteger,
    pollIntervalMs: positiveInteger,
    cardRefreshSeconds: nonNegativeInteger,
    maxStreamBytes: { type: "integer", minimum: 1024 },
  },
  "x-moved": {
    maxEventBytes:
      "the agent's limits.maxEventBytes (beside adapter:) or server.limits.maxEventBytes, which bound every adapter",
  },
} as const;

/** A remote A2A agent's adapter once loaded. */
export interface A2aAdapterConfig {
  type: "a2a";
  /**
   * The agent card's URL (ending in `.json`), or the agent's base URL, whose card is read from
   * `/.well-known/agent-card.json`.
   */
  url: string;
  /** `${ENV}` references already expanded; sent with every request, the card's included. */
  headers: Record<string, string>;
  /** Which of the card's interfaces to use; `auto`: the card's first supported one. */
  binding: "auto" | "jsonrpc" | "http-json";
  /** Longest wait for an answer's headers; 0 = no limit. */
  connectTimeoutMs: number;
  /**
   * Longest wait for the next complete event of an answer (an SSE event; a JSON answer is
   * one) before the run fails; 0 = no limit.
   */
  idleTimeoutMs: number;
  /** Pause between GetTask calls for agents whose card says they do not stream. */
  pollIntervalMs: number;
  /** How often the card is fetched again; 0 = only at start-up (and after a failed fetch). */
  cardRefreshSeconds: number;
  /** Largest total of one streamed answer (one event's size is the agent's `maxEventBytes`). */
  maxStreamBytes: number;
}

export const A2A_DEFAULTS = {
  binding: "auto",
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 300_000,
  pollIntervalMs: 1_000,
  cardRefreshSeconds: 300,
  maxStreamBytes: 64 * 1024 * 1024,
} as const;
