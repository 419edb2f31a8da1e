import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { A2aError } from "../../bridge/a2a/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import { DomainError, isDomainError } from "../../util/errors.js";
import { registerJsonBodyParser } from "../json-body.js";
import {
  agentCard,
  type CardAuth,
  extendedAgentCard,
  legacyAgentCard,
  legacyExtendedAgentCard,
} from "./card.js";
import { asA2aError, retryAfterOverload } from "./errors.js";
import { A2aFace } from "./face.js";
import { idOf, serveJsonRpc } from "./jsonrpc.js";
import { type ExtendedCards, operationsFor } from "./operations.js";
import { A2aPush } from "./push.js";
import { registerRestBinding, sendRestError } from "./rest.js";
import { requestedVersion } from "./version.js";

export const CARD_PATH = "/.well-known/agent-card.json";
export const LEGACY_CARD_PATH = "/.well-known/agent.json";

const JSON_RPC_ROUTE = "/:agent";

/** The card paths of every agent (by name and by name@version), served without a key. */
export function a2aCardPaths(
  basePath: string,
  agents: readonly Pick<RegisteredAgent, "name" | "version">[],
): string[] {
  const paths: string[] = [];
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

/**
 * Every agent as an A2A agent under `{basePath}/{name}` (or `{name}@{version}`): its cards, the
 * JSON-RPC binding at the base itself, and the HTTP+JSON binding's paths beneath it. Tasks are
 * the agent's ACP runs (see face.ts).
 */
export const a2aRoutes: FastifyPluginAsync<{ basePath: string }> = async (app, { basePath }) => {
  const { registry, runs, settings } = app.deps;
  const auth: CardAuth = {
    apiKeys: settings.auth.keys.length > 0,
    jwt: settings.auth.jwt !== undefined,
  };
  for (const contentType of ["application/json", "application/a2a+json"]) {
    registerJsonBodyParser(app, settings.limits, { allowEmpty: true, contentType });
  }
  const faces = new Map<string, A2aFace>();
  // Push notifications go through the webhook deliverer: stored, retried, targets guarded.
  const closing = new AbortController();
  app.addHook("onClose", async () => closing.abort());
  const push = new A2aPush(
    app.deps.pushConfigs,
    app.deps.webhooks,
    closing.signal,
    settings.a2a.maxPushConfigsPerTask,
  );
  // Relays a stopped server left behind start again once this one is ready (its engine has
  // recovered the runs it finds), and are looked for again as often as leases are checked.
  app.addHook("onReady", async () => {
    push.startSweeps(
      app.deps.engine.owner,
      registry.list().map((agent) => agent.agentId),
      (agentId) => {
        const agent = registry.get(agentId);
        return agent ? faceFor(agent).tasks : undefined;
      },
      Math.max(1000, (settings.leaseSeconds * 1000) / 3),
      (err) => app.log.error({ err }, "A2A push relay sweep failed"),
    );
  });

  /** The agent the path names; `forCard`: anyone may read its card (the caller is not checked). */
  const agentOf = (request: FastifyRequest, forCard = false): RegisteredAgent => {
    const ref = (request.params as { agent: string }).agent;
    const at = ref.indexOf("@");
    const agent =
      at === -1 ? registry.getByName(ref) : registry.getByName(ref.slice(0, at), ref.slice(at + 1));
    if (!agent)
      throw new DomainError("not_found", `agent ${JSON.stringify(ref.slice(0, 300))} not found`);
    const allowed = request.caller.agentIds;
    if (!forCard && allowed && !allowed.has(agent.agentId)) {
      throw new DomainError("forbidden", `${request.caller.label} may not use agent ${agent.name}`);
    }
    return agent;
  };
  const faceOf = (request: FastifyRequest): A2aFace => faceFor(agentOf(request));
  const faceFor = (agent: RegisteredAgent): A2aFace => {
    let face = faces.get(agent.agentId);
    if (!face) {
      face = new A2aFace(runs, agent, push);
      faces.set(agent.agentId, face);
    }
    return face;
  };
  /** The agent's interface URL as this request reached the server. */
  const baseUrl = (request: FastifyRequest, agent: RegisteredAgent) =>
    `${request.protocol}://${request.host}${basePath}/${encodeURIComponent(agent.name)}`;

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const jsonRpc = request.routeOptions.url?.endsWith(JSON_RPC_ROUTE) === true;
    // The agent itself is missing (the route's own faults are A2A errors already), or a key or
    // token is restricted to other agents; the rate limit, a full queue: refused in the
    // binding's own shape.
    const refusal =
      err instanceof DomainError && err.code === "not_found"
        ? new A2aError("AgentNotFound", err.message)
        : err;
    if (jsonRpc) return sendJsonRpcError(reply, refusal, request);
    return sendRestError(request, reply, refusal);
  });

  // The version is checked on the bindings only: the cards are for every client.
  app.addHook("preHandler", async (request) => {
    if (request.method === "GET" && request.url.includes("/.well-known/")) return;
    requestedVersion(request);
  });

  app.get(`/:agent${CARD_PATH}`, { schema: { params: agentParams } }, async (request) => {
    const agent = agentOf(request, true);
    return agentCard(agent, baseUrl(request, agent), auth);
  });
  app.get(`/:agent${LEGACY_CARD_PATH}`, { schema: { params: agentParams } }, async (request) => {
    const agent = agentOf(request, true);
    return legacyAgentCard(agent, baseUrl(request, agent), auth);
  });

  /** The caller's extended cards of the agent the path names (it must be allowed to use it). */
  const cardsOf = (request: FastifyRequest): ExtendedCards => {
    if (!auth.apiKeys && !auth.jwt) return null;
    const agent = agentOf(request);
    const context = { origin: `${request.protocol}://${request.host}`, caller: request.caller };
    const url = baseUrl(request, agent);
    return {
      v1: () => extendedAgentCard(agent, url, auth, context),
      v03: () => legacyExtendedAgentCard(agent, url, auth, context),
    };
  };

  app.post(
    JSON_RPC_ROUTE,
    { schema: { params: agentParams }, config: { longRequest: "stream" } },
    async (request, reply) =>
      serveJsonRpc(
        request,
        reply,
        faceOf(request),
        operationsFor,
        settings.keepAliveSeconds,
        cardsOf(request),
      ),
  );
  registerRestBinding(app, faceOf, cardsOf, settings.keepAliveSeconds);
};

function sendJsonRpcError(reply: FastifyReply, err: unknown, request: FastifyRequest) {
  const status = (err as { statusCode?: number }).statusCode;
  let error: A2aError;
  if (err instanceof A2aError || isDomainError(err) || status === 429) {
    error = asA2aError(err, request.log);
    retryAfterOverload(reply, err);
  } else if (typeof status === "number" && status < 500) {
    // The body parser's and the route schema's refusals: the request never became a call.
    error = new A2aError("ParseError", (err as Error).message);
  } else {
    request.log.error({ err }, "A2A request failed");
    error = new A2aError("Internal", "internal error");
  }
  return reply
    .code(error.rpcHttpStatus)
    .type("application/json")
    .send({ jsonrpc: "2.0", id: idOf(request.body), error: error.toJsonRpc() });
}
