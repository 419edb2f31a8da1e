import { nonNegativeInteger } from "../config/schema-fragments.js";

/** `adapter:` of an echo agent in the config file (closed, including its own `type`). */
export const echoOptionsSchema = {
  type: "object",
  additionalProperties: false,
  properties: { type: { const: "echo" }, delayMs: nonNegativeInteger },
} as const;

/** An echo agent's adapter once loaded. */
export interface EchoAdapterConfig {
  type: "echo";
  delayMs: number;
}

export const ECHO_DEFAULTS = { delayMs: 0 } as const;
