import type { FastifyRequest } from "fastify";
import type { AgentRegistry, RegisteredAgent } from "../../config/registry.js";
import type { RunEngine } from "../../engine/run-engine.js";
import { DomainError, notFound } from "../../util/errors.js";

/**
 * The agent a CopilotKit URL names: its name (the highest version of it), or `name@version`
 * for one version exactly. 404 for an unknown one, 403 for one the caller's API key may not use.
 */
export function agentFor(
  registry: AgentRegistry,
  request: FastifyRequest,
  key: string,
): RegisteredAgent {
  const at = key.indexOf("@");
  const agent =
    at === -1 ? registry.getByName(key) : registry.getByName(key.slice(0, at), key.slice(at + 1));
  if (!agent) throw notFound("agent", `"${key}"`);
  const allowed = request.caller.agentIds;
  if (allowed && !allowed.has(agent.agentId)) {
    throw new DomainError("forbidden", `${request.caller.label} may not use agent "${key}"`);
  }
  return agent;
}

/** The agents the caller may use, one entry per name (its highest version). */
export function visibleAgents(registry: AgentRegistry, request: FastifyRequest) {
  const allowed = request.caller.agentIds;
  const names = new Set(registry.list().map((agent) => agent.name));
  return [...names]
    .map((name) => registry.getByName(name)!)
    .filter((agent) => !allowed || allowed.has(agent.agentId));
}

/**
 * `GET {base}/info` as CopilotKit's runtime answers it: REST mode (`mode: "sse"`), the agents
 * by name with their AG-UI capabilities, and thread views served from storage (list, inspect,
 * rename/archive/delete; no realtime channel: the list is fetched again instead).
 */
export function runtimeInfo(
  version: string,
  agents: RegisteredAgent[],
  engine: RunEngine,
): Record<string, unknown> {
  return {
    version,
    agents: Object.fromEntries(
      agents.map((agent) => {
        const supplied = engine.capabilitiesOf(agent.agentId);
        const capabilities = {
          ...supplied,
          identity: { name: agent.name, version: agent.version, type: agent.config.adapter.type },
          // Every run's events are stored: `connect` rejoins a thread and its run in progress.
          transport: { ...(supplied.transport as object), resumable: true },
        };
        const description = {
          name: agent.name,
          className: `acp-agui:${agent.config.adapter.type}`,
          description: agent.descriptor.metadata.description,
          capabilities,
        };
        return [agent.name, description];
      }),
    ),
    audioFileTranscriptionEnabled: false,
    mode: "sse",
    threadEndpoints: { list: true, inspect: true, mutations: true, realtimeMetadata: false },
    suggestions: false,
    a2uiEnabled: false,
    openGenerativeUIEnabled: false,
    telemetryDisabled: true,
  };
}
