import type { AgentRegistry, RegisteredAgent } from "../config/registry.js";
import type { AgentCatalog, RunnableAgent } from "./run-service.js";

/** The configured agents as run creation sees them: their validators, queue bound and modes. */
export function catalogOf(registry: AgentRegistry): AgentCatalog {
  const wrap = (agent: RegisteredAgent | null | undefined): RunnableAgent | null | undefined =>
    agent && {
      agentId: agent.agentId,
      validateInput: (data: unknown) => agent.validateInput(data),
      validateConfig: (data: unknown) => agent.validateConfig(data),
      validateResume: (type: string, data: unknown) => agent.validateResume(data, type),
      maxPendingRuns: agent.config.limits.maxQueuedRuns + agent.config.limits.maxConcurrentRuns,
      streamModes: declaredStreamModes(agent),
    };
  return {
    get: (agentId) => wrap(registry.get(agentId)) ?? undefined,
    defaultAgent: () => wrap(registry.defaultAgent()) ?? null,
  };
}

/** The stream modes an agent's descriptor declares (`specs.capabilities.streaming`). */
export function declaredStreamModes(agent: RegisteredAgent): Set<string> {
  const streaming = (agent.descriptor.specs.capabilities as { streaming?: Record<string, boolean> })
    .streaming;
  return new Set(
    Object.entries(streaming ?? {})
      .filter(([, on]) => on)
      .map(([mode]) => mode),
  );
}
