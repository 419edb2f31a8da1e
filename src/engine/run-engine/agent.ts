import type { AgentAdapter } from "../../adapters/types.js";

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
}
