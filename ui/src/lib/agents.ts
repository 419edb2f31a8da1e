import { api } from "./api";
import type { AcpAgent, AcpDescriptor } from "./types";

/** Agents and their descriptors; read once per page load (they come from the config). */
let agents: Promise<AcpAgent[]> | null = null;
const descriptors = new Map<string, Promise<AcpDescriptor>>();

export function listAgents(): Promise<AcpAgent[]> {
  agents ??= api<AcpAgent[]>("/agents/search", { body: { limit: 1000 } }).catch((error) => {
    agents = null;
    throw error;
  });
  return agents;
}

export function descriptorOf(agentId: string): Promise<AcpDescriptor> {
  let found = descriptors.get(agentId);
  if (!found) {
    found = api<AcpDescriptor>(`/agents/${agentId}/descriptor`).catch((error) => {
      descriptors.delete(agentId);
      throw error;
    });
    descriptors.set(agentId, found);
  }
  return found;
}

export async function agentName(agentId: string): Promise<string> {
  const agent = (await listAgents()).find((a) => a.agent_id === agentId);
  return agent ? agent.metadata.ref.name : agentId.slice(0, 8);
}

/** Forgets cached answers (after the API key changed). */
export function forgetAgents(): void {
  agents = null;
  descriptors.clear();
}
