import type { AgentLimits } from "./schema.js";
import type { RequestLimits } from "./settings.js";

/**
 * What one agent may send the server: its own `limits` where it sets them, else the server's.
 * `keys` name where each value came from, so that a run stopped by one names the key to raise.
 */
export interface AgentBounds {
  maxEventBytes: number;
  maxStateBytes: number;
  maxEventDepth: number;
  keys: { maxEventBytes: string; maxStateBytes: string; maxEventDepth: string };
}

const NAMES = ["maxEventBytes", "maxStateBytes", "maxEventDepth"] as const;

export function agentBounds(
  server: Pick<RequestLimits, (typeof NAMES)[number]>,
  agent: Partial<AgentLimits> = {},
): AgentBounds {
  const bounds = { keys: {} } as AgentBounds;
  for (const name of NAMES) {
    const own = agent[name];
    bounds[name] = own ?? server[name];
    bounds.keys[name] = own === undefined ? `server.limits.${name}` : `limits.${name}`;
  }
  return bounds;
}
