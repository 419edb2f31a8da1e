import type { AgentCard } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  DefaultAgentCardResolver,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";
import type { AgentSelfDescription } from "../config/specs.js";
import type { A2aAdapterConfig } from "./a2a-options.js";

/** The card's names of the bindings the `binding` option chooses between. */
const BINDING_NAMES = { jsonrpc: "JSONRPC", "http-json": "HTTP+JSON" } as const;
const SUPPORTED = new Set<string>(Object.values(BINDING_NAMES));

/** An agent card and the client built from it. */
export interface CardClient {
  card: AgentCard;
  client: Client;
  /** The card says the agent streams: runs use SendStreamingMessage, else send and poll. */
  streaming: boolean;
  fetchedAt: number;
}

/** A card that was read but cannot be used (no interface this adapter may take). */
export class UnusableCard extends Error {
  override readonly name = "UnusableCard";
}

/** Where the card is read: the URL itself when it names a `.json` file, else the well-known path. */
export function cardLocation(url: string): { base: string; path: string | undefined } {
  const parsed = new URL(url);
  return parsed.pathname.endsWith(".json")
    ? { base: url, path: "" }
    : { base: url, path: undefined };
}

/**
 * Fetches the card and builds a client on the interface the `binding` option chooses (the
 * card's first supported one by default). A card with no usable interface is an error naming
 * what the card offers. v0.3 agents are reached through the SDK's compatibility layer.
 */
export async function connect(
  config: A2aAdapterConfig,
  fetchImpl: typeof fetch,
): Promise<CardClient> {
  const legacyCompat = { enabled: true };
  const resolver = new DefaultAgentCardResolver({ fetchImpl, legacyCompat });
  const { base, path } = cardLocation(config.url);
  const card = await resolver.resolve(base, path);
  const offered = (card.supportedInterfaces ?? []).map((i) => i.protocolBinding);
  const wanted =
    config.binding === "auto"
      ? offered.find((name) => SUPPORTED.has(name))
      : BINDING_NAMES[config.binding];
  if (wanted === undefined || !offered.includes(wanted)) {
    const what = wanted ?? "a JSONRPC or HTTP+JSON";
    throw new UnusableCard(
      `its agent card offers no ${what} interface (it offers: ${offered.join(", ") || "none"})`,
    );
  }
  const streaming = card.capabilities?.streaming === true;
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl, legacyCompat }),
      new RestTransportFactory({ fetchImpl, legacyCompat }),
    ],
    preferredTransports: [wanted],
    cardResolver: resolver,
    // Without streaming, a send returns at once and the task is polled.
    clientConfig: { polling: !streaming },
  });
  const client = await factory.createFromAgentCard(card);
  return { card, client, streaming, fetchedAt: Date.now() };
}

/** What the card says of the agent, as plain JSON: the descriptor's and AG-UI face's view. */
export interface CardSummary {
  name: string;
  description: string;
  version: string;
  url: string;
  streaming: boolean;
  pushNotifications: boolean;
  defaultInputModes: string[];
  defaultOutputModes: string[];
  skills: {
    id: string;
    name: string;
    description: string;
    tags: string[];
    examples: string[];
    inputModes: string[];
    outputModes: string[];
  }[];
}

export function summarizeCard(card: AgentCard, url: string): CardSummary {
  // Cards in the wild (and 0.3 cards translated by the SDK) leave out what they do not use.
  const list = (value: readonly string[] | undefined) => (Array.isArray(value) ? [...value] : []);
  const skills: Partial<AgentCard["skills"][number]>[] = Array.isArray(card.skills)
    ? card.skills
    : [];
  return {
    name: card.name ?? "",
    description: card.description ?? "",
    version: card.version ?? "",
    url,
    streaming: card.capabilities?.streaming === true,
    pushNotifications: card.capabilities?.pushNotifications === true,
    defaultInputModes: list(card.defaultInputModes),
    defaultOutputModes: list(card.defaultOutputModes),
    skills: skills.map((skill) => ({
      id: skill.id ?? "",
      name: skill.name ?? "",
      description: skill.description ?? "",
      tags: list(skill.tags),
      examples: list(skill.examples),
      inputModes: list(skill.inputModes),
      outputModes: list(skill.outputModes),
    })),
  };
}

/**
 * The card in the ACP descriptor: its description (where the config's is empty), its URL as
 * the record's, the whole card summary as `x-a2a-card` on the input schema, the accepted and
 * produced media types in the input and output schemas' descriptions, and the skills' examples
 * as input examples.
 */
export function describeCard(card: CardSummary): AgentSelfDescription {
  const modes = (list: string[]) => (list.length > 0 ? list.join(", ") : "unstated");
  const examples = card.skills
    .flatMap((skill) => skill.examples)
    .map((text) => ({ messages: [{ role: "user", content: text }] }));
  const skills = card.skills.map((s) => (s.description ? `${s.name} (${s.description})` : s.name));
  return {
    description: card.description,
    url: card.url,
    input: {
      description:
        `The user messages sent to the A2A agent "${card.name}" (media types it accepts: ` +
        `${modes(card.defaultInputModes)}).${skills.length > 0 ? ` Skills: ${skills.join("; ")}.` : ""}`,
      ...(examples.length > 0 ? { examples } : {}),
      "x-a2a-card": card,
    },
    output: {
      description: `What the A2A agent answers (media types: ${modes(card.defaultOutputModes)}).`,
    },
  };
}
