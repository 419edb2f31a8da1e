import type { Logger } from "pino";
import type { AgentBounds } from "../config/agent-bounds.js";
import type { AgentConfig } from "../config/schema.js";
import { EchoAdapter } from "./echo.js";
import { ScriptedAdapter } from "./scripted.js";
import type { AgentAdapter } from "./types.js";

export type { AgentAdapter } from "./types.js";

/**
 * Builds the adapter a configured agent names. Runs at start-up, so a script that cannot be
 * read or a module that does not load fails the start, naming the agent.
 */
export async function createAdapter(
  agent: AgentConfig,
  options: { logger?: Logger; bounds?: AgentBounds } = {},
): Promise<AgentAdapter> {
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
      // Loaded only when a config uses them: their HTTP clients cost memory at start-up.
      case "agui-http": {
        const { AguiHttpAdapter } = await import("./agui-http.js");
        return new AguiHttpAdapter(adapter, options.bounds);
      }
      case "openai": {
        const { OpenAiAdapter } = await import("./openai.js");
        return new OpenAiAdapter(adapter, process.env, options.bounds);
      }
      case "a2a": {
        const { A2aAdapter } = await import("./a2a.js");
        const a2a = new A2aAdapter(adapter, options.bounds);
        // Reads the agent card; one that cannot be read is logged, never a failed start.
        await a2a.start(options.logger);
        return a2a;
      }
      case "module": {
        const { loadModuleAdapter } = await import("./module.js");
        // Awaited here so a load error gets the agent's name from the catch below.
        return await loadModuleAdapter(adapter);
      }
      default: {
        const unknown: { type: string } = adapter;
        throw new Error(`unknown adapter type "${unknown.type}"`);
      }
    }
  } catch (err) {
    throw new Error(`agent ${agent.name}@${agent.version}: ${(err as Error).message}`);
  }
}
