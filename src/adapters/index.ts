import type { AgentConfig } from "../config/schema.js";
import { EchoAdapter } from "./echo.js";
import { ScriptedAdapter } from "./scripted.js";
import type { AgentAdapter } from "./types.js";

export type { AgentAdapter } from "./types.js";

/**
 * Builds the adapter a configured agent names. Runs at start-up, so a script that cannot be
 * read or a module that does not load fails the start, naming the agent.
 */
export async function createAdapter(agent: AgentConfig): Promise<AgentAdapter> {
  const { adapter } = agent;
  try {
    switch (adapter.type) {
      case "echo":
        return new EchoAdapter({ delayMs: adapter.delayMs });
      case "scripted":
        return new ScriptedAdapter({
          segments: adapter.segments.map((source) =>
            source.kind === "file" ? source.path : source.events,
          ),
          delayMs: adapter.delayMs,
        });
      default:
        throw new Error(`adapter type "${adapter.type}" is not available in this build yet`);
    }
  } catch (err) {
    throw new Error(`agent ${agent.name}@${agent.version}: ${(err as Error).message}`);
  }
}
