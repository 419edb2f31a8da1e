import { createHash } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { A2aError } from "../../bridge/a2a/index.js";
import { a2aOptionsOf } from "../../config/agent-a2a.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { A2aAgents } from "./agents.js";
import { agentCard, type CardAuth, legacyAgentCard } from "./card.js";
import { cardHint } from "./unrouted.js";

export const CARD_PATH = "/.well-known/agent-card.json";
export const LEGACY_CARD_PATH = "/.well-known/agent.json";

/** The card paths of every agent (by name and by name@version), served without a key. */
export function a2aCardPaths(
  basePath: string,
  agents: readonly Pick<RegisteredAgent, "name" | "version">[],
): string[] {
  // The base's own card paths: the one agent's card, or where cards are.
  const paths: string[] = [`${basePath}${CARD_PATH}`, `${basePath}${LEGACY_CARD_PATH}`];
  for (const agent of agents) {
    for (const ref of [
      agent.name,
      `${agent.name}@${agent.version}`,
      `${agent.name}%40${agent.version}`,
    ]) {
      paths.push(`${basePath}/${ref}${CARD_PATH}`, `${basePath}/${ref}${LEGACY_CARD_PATH}`);
    }
  }
  return paths;
}

const agentParams = {
  type: "object",
  properties: { agent: { type: "string", minLength: 1, maxLength: 300 } },
  required: ["agent"],
} as const;

/** A card's answer headers: its validators, and how long it may be kept (specification §8.6). */
interface Validators {
  etag: string;
  lastModified: string;
}

/** The strong ETag of a card's bytes. */
const etagOf = (body: string) =>
  `"${createHash("sha256").update(body).digest("base64url").slice(0, 32)}"`;

/** Whether the client's copy (If-None-Match, else If-Modified-Since) is the card as it is. */
function fresh(request: FastifyRequest, validators: Validators): boolean {
  const match = request.headers["if-none-match"];
  if (typeof match === "string") {
    // A weak validator matches too (If-None-Match compares weakly, RFC 9110 §13.1.2).
    return match
      .split(",")
      .map((tag) => tag.trim().replace(/^W\//, ""))
      .some((tag) => tag === "*" || tag === validators.etag);
  }
  const since = request.headers["if-modified-since"];
  if (typeof since !== "string") return false;
  const time = Date.parse(since);
  return !Number.isNaN(time) && Date.parse(validators.lastModified) <= time;
}

/**
 * The agent cards: `{agent}/.well-known/agent-card.json` (1.0) and `…/agent.json` (0.3), public,
 * with `Cache-Control: max-age`, a strong `ETag` (a digest of the card's bytes, the same on every
 * replica) and `Last-Modified` (when this server started: the card changes only with its
 * config), and `304 Not Modified` for a conditional request that has the card already. The
 * base's own card paths answer the one agent's card when one agent is configured, else a 404
 * saying where cards are.
 */
export function registerCards(
  app: FastifyInstance,
  agents: A2aAgents,
  options: {
    basePath: string;
    auth: CardAuth;
    maxAgeSeconds: number;
    /** The gRPC binding's address for a client that reached `hostname` (none: it is off). */
    grpcAddress?: (hostname: string) => string | undefined;
  },
): void {
  const { basePath, auth, maxAgeSeconds, grpcAddress } = options;
  // Seconds: Last-Modified has no finer unit, and If-Modified-Since compares to the second.
  const lastModified = new Date(Math.floor(Date.now() / 1000) * 1000).toUTCString();
  /** The agent's interface URL as this request reached the server. */
  const baseUrl = (request: FastifyRequest, agent: RegisteredAgent) =>
    `${request.protocol}://${request.host}${basePath}/${encodeURIComponent(agent.name)}`;

  const send = (request: FastifyRequest, reply: FastifyReply, card: unknown) => {
    const body = JSON.stringify(card);
    const validators = { etag: etagOf(body), lastModified };
    reply
      .header("cache-control", `public, max-age=${maxAgeSeconds}`)
      .header("etag", validators.etag)
      .header("last-modified", lastModified);
    if (fresh(request, validators)) return reply.code(304).send();
    return reply.type("application/json").send(body);
  };
  const cardOf = (
    request: FastifyRequest,
    agent: RegisteredAgent,
    url: string,
    legacy: boolean,
  ) => {
    const modes = a2aOptionsOf(agent.config);
    if (legacy) return legacyAgentCard(agent, url, auth, modes);
    return agentCard(agent, url, auth, modes, grpcAddress?.(request.hostname));
  };

  for (const [path, legacy] of [
    [CARD_PATH, false],
    [LEGACY_CARD_PATH, true],
  ] as const) {
    app.get(`/:agent${path}`, { schema: { params: agentParams } }, async (request, reply) => {
      const agent = agents.agent((request.params as { agent: string }).agent);
      return send(request, reply, cardOf(request, agent, baseUrl(request, agent), legacy));
    });
    // A client that resolved the card against the base rather than the agent's URL (the JS
    // SDK's createFromUrl("…/a2a/echo") without a trailing slash does).
    app.get(path, async (request, reply) => {
      const [only, ...others] = agents.list();
      if (!only || others.length > 0) {
        throw new A2aError("NotFound", `no card at ${basePath}${path}: ${cardHint(basePath)}`);
      }
      return send(request, reply, cardOf(request, only, baseUrl(request, only), legacy));
    });
  }
}
