import type { AgentAdapter } from "../../adapters/types.js";
import type { SegmentBounds } from "../executor.js";

/** What the engine needs to know of each configured agent. */
export interface EngineAgent {
  agentId: string;
  name: string;
  adapter: AgentAdapter;
  runTimeoutSeconds: number;
  maxConcurrentRuns: number;
  /** Re-queue runs a restart interrupted instead of failing them. */
  retryOnRestart: boolean;
  /** Drop RAW events and `rawEvent` fields from what is stored and streamed. */
  dropRaw?: boolean;
  /** How large and deep the agent's events and state may be. */
  bounds?: SegmentBounds;
}
