import type { Principal } from "../../auth/principal.js";
import { toolOf } from "../../bridge/mcp/index.js";
import type { AgentRegistry, RegisteredAgent } from "../../config/registry.js";

/**
 * The agents a session serves as tools: every agent its caller may use (one tool per agent
 * name, its highest version), or the one agent of `{basePath}/{agent}`.
 */
export class ToolScope {
  constructor(
    private readonly registry: AgentRegistry,
    /** The one agent (`{basePath}/{agent}`); undefined: every agent. */
    private readonly only?: RegisteredAgent,
  ) {}

  /** The agent of a run the caller may reach through this scope; undefined for another. */
  agentOfRun(who: Principal, agentId: string): RegisteredAgent | undefined {
    const agent = this.only
      ? this.only.agentId === agentId
        ? this.only
        : undefined
      : (this.registry.get(agentId) ?? undefined);
    if (!agent || (who.agentIds && !who.agentIds.has(agent.agentId))) return undefined;
    return agent;
  }

  /** The agent ids of this scope the caller may use (undefined: every agent). */
  agentIdsFor(who: Principal): string[] | undefined {
    if (this.only) return [this.only.agentId];
    return who.agentIds ? [...who.agentIds] : undefined;
  }

  /** The caller's tools, by tool name. */
  agentsFor(who: Principal): Map<string, RegisteredAgent> {
    const candidates = this.only ? [this.only] : this.highestVersions();
    const tools = new Map<string, RegisteredAgent>();
    for (const agent of candidates) {
      if (who.agentIds && !who.agentIds.has(agent.agentId)) continue;
      tools.set(toolOf(agent).name, agent);
    }
    return tools;
  }

  private highestVersions(): RegisteredAgent[] {
    const names = new Set(this.registry.list().map((agent) => agent.name));
    return [...names].flatMap((name) => this.registry.getByName(name) ?? []);
  }
}
