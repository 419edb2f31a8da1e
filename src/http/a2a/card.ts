import type { Principal } from "../../auth/principal.js";
import {
  A2A_PROTOCOL_VERSION,
  type AgentCard,
  type SecurityRequirement,
  type SecurityScheme,
} from "../../bridge/a2a/index.js";
import type { RegisteredAgent } from "../../config/registry.js";

/** How the server authenticates, as a card declares it. */
export interface CardAuth {
  apiKeys: boolean;
  jwt: boolean;
}

/** Whether callers authenticate: then cards offer the extended card. */
const authenticates = (auth: CardAuth) => auth.apiKeys || auth.jwt;

/** The extension the extended card carries: what only an authenticated caller learns. */
export const AGENT_EXTENSION_URI = "urn:acp-agui:agent";

/** Where the request reached the server, and who made it: what the extended card tells. */
export interface ExtendedCardContext {
  /** `{protocol}://{host}` as the request reached the server. */
  origin: string;
  caller: Principal;
}

/** The media types an agent takes and gives (its `a2a` settings, see config/schema.ts). */
export interface CardModes {
  inputModes: readonly string[];
  outputModes: readonly string[];
}

function skillOf(agent: RegisteredAgent, modes: CardModes) {
  const description = agent.config.description ?? `the ${agent.name} agent`;
  return {
    id: agent.name,
    name: agent.name,
    description,
    tags: [agent.config.adapter.type],
    inputModes: [...modes.inputModes],
    outputModes: [...modes.outputModes],
  };
}

/** The card's schemes: an API key (header or bearer) and end users' bearer tokens. */
function security(auth: CardAuth) {
  const schemes: Record<string, SecurityScheme> = {};
  const requirements: SecurityRequirement[] = [];
  if (auth.apiKeys) {
    schemes.apiKey = {
      apiKeySecurityScheme: {
        description: "an API key of this server (server.auth.keys)",
        location: "header",
        name: "x-api-key",
      },
    };
    requirements.push({ schemes: { apiKey: { list: [] } } });
  }
  if (auth.apiKeys || auth.jwt) {
    schemes.bearer = {
      httpAuthSecurityScheme: {
        description: auth.jwt
          ? "a bearer token: an end user's JWT from the configured issuer, or an API key"
          : "an API key as a bearer token",
        scheme: "Bearer",
        ...(auth.jwt ? { bearerFormat: "JWT" } : {}),
      },
    };
    requirements.push({ schemes: { bearer: { list: [] } } });
  }
  return { schemes, requirements };
}

/**
 * The A2A 1.0 agent card of an agent whose interface is at `url`; with the gRPC binding on, its
 * address (`host:port`) too, where the agent is the `tenant` its requests name.
 */
export function agentCard(
  agent: RegisteredAgent,
  url: string,
  auth: CardAuth,
  modes: CardModes,
  grpcAddress?: string,
): AgentCard {
  const { schemes, requirements } = security(auth);
  const supportedInterfaces: AgentCard["supportedInterfaces"] = [
    { url, protocolBinding: "JSONRPC", protocolVersion: A2A_PROTOCOL_VERSION },
    { url, protocolBinding: "HTTP+JSON", protocolVersion: A2A_PROTOCOL_VERSION },
  ];
  if (grpcAddress !== undefined) {
    supportedInterfaces.push({
      url: grpcAddress,
      protocolBinding: "GRPC",
      protocolVersion: A2A_PROTOCOL_VERSION,
      tenant: agent.name,
    });
  }
  supportedInterfaces.push({ url, protocolBinding: "JSONRPC", protocolVersion: "0.3" });
  const card: AgentCard = {
    name: agent.name,
    description: agent.config.description ?? `the ${agent.name} agent`,
    supportedInterfaces,
    version: agent.version,
    capabilities: {
      streaming: true,
      pushNotifications: true,
      extendedAgentCard: authenticates(auth),
    },
    defaultInputModes: [...modes.inputModes],
    defaultOutputModes: [...modes.outputModes],
    skills: [skillOf(agent, modes)],
  };
  if (requirements.length > 0) {
    card.securitySchemes = schemes;
    card.securityRequirements = requirements;
  }
  return card;
}

/** The A2A 0.3 card (`/.well-known/agent.json`), for clients of that version. */
export function legacyAgentCard(
  agent: RegisteredAgent,
  url: string,
  auth: CardAuth,
  modes: CardModes,
): Record<string, unknown> {
  const card: Record<string, unknown> = {
    protocolVersion: "0.3.0",
    name: agent.name,
    description: agent.config.description ?? `the ${agent.name} agent`,
    url,
    preferredTransport: "JSONRPC",
    additionalInterfaces: [{ url, transport: "JSONRPC" }],
    version: agent.version,
    capabilities: { streaming: true, pushNotifications: false, stateTransitionHistory: false },
    supportsAuthenticatedExtendedCard: authenticates(auth),
    defaultInputModes: [...modes.inputModes],
    defaultOutputModes: [...modes.outputModes],
    skills: [skillOf(agent, modes)],
  };
  const schemes: Record<string, unknown> = {};
  if (auth.apiKeys) schemes.apiKey = { type: "apiKey", in: "header", name: "x-api-key" };
  if (auth.apiKeys || auth.jwt) {
    schemes.bearer = {
      type: "http",
      scheme: "bearer",
      ...(auth.jwt ? { bearerFormat: "JWT" } : {}),
    };
  }
  if (Object.keys(schemes).length > 0) {
    card.securitySchemes = schemes;
    card.security = Object.keys(schemes).map((name) => ({ [name]: [] }));
  }
  return card;
}

/**
 * What the extended card adds to the public one, as an extension's params: the agent's ACP id
 * and where the same agent is served over ACP and AG-UI (a task's id is its ACP run id), who
 * the server takes the caller for, and the limits this agent's runs have. None of it is for
 * anonymous readers of the public card.
 */
function agentExtension(agent: RegisteredAgent, context: ExtendedCardContext) {
  const { runTimeoutSeconds, maxConcurrentRuns, maxQueuedRuns } = agent.config.limits;
  return {
    uri: AGENT_EXTENSION_URI,
    description: "this agent on the server's other faces, the caller, and the limits of its runs",
    required: false,
    params: {
      agentId: agent.agentId,
      acp: `${context.origin}/agents/${agent.agentId}`,
      agui: `${context.origin}/ag-ui/${encodeURIComponent(agent.name)}`,
      caller: context.caller.id ?? context.caller.label,
      limits: { runTimeoutSeconds, maxConcurrentRuns, maxQueuedRuns },
    },
  };
}

/** The A2A 1.0 extended card: the public card and the agent extension above. */
export function extendedAgentCard(
  agent: RegisteredAgent,
  url: string,
  auth: CardAuth,
  modes: CardModes,
  context: ExtendedCardContext,
  grpcAddress?: string,
): AgentCard {
  const card = agentCard(agent, url, auth, modes, grpcAddress);
  card.capabilities.extensions = [agentExtension(agent, context)];
  return card;
}

/** The same for 0.3's `agent/getAuthenticatedExtendedCard`, in 0.3's card shape. */
export function legacyExtendedAgentCard(
  agent: RegisteredAgent,
  url: string,
  auth: CardAuth,
  modes: CardModes,
  context: ExtendedCardContext,
): Record<string, unknown> {
  const card = legacyAgentCard(agent, url, auth, modes);
  (card.capabilities as Record<string, unknown>).extensions = [agentExtension(agent, context)];
  return card;
}
