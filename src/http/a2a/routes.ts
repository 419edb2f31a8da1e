import type { FastifyError, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import { A2aError } from "../../bridge/a2a/index.js";
import { a2aOptionsOf } from "../../config/agent-a2a.js";
import { isDomainError } from "../../util/errors.js";
import { registerJsonBodyParser } from "../json-body.js";
import type { A2aAgents } from "./agents.js";
import { type CardAuth, extendedAgentCard, legacyExtendedAgentCard } from "./card.js";
import { registerCards } from "./cards.js";
import { asA2aError, retryAfterOverload } from "./errors.js";
import type { A2aFace } from "./face.js";
import { idOf, serveJsonRpc } from "./jsonrpc.js";
import { type ExtendedCards, operationsFor } from "./operations.js";
import { registerRestBinding, sendRestError } from "./rest.js";
import { unrouted } from "./unrouted.js";
import { requestedVersion } from "./version.js";

export { a2aCardPaths } from "./cards.js";

/** The JSON-RPC binding's routes: the agent's interface URL, with or without a trailing slash. */
const JSON_RPC_ROUTES = new Set(["/:agent", "/:agent/"]);

/** The media types a request body may have (the JSON-RPC binding's and HTTP+JSON's). */
const JSON_TYPES = ["application/json", "application/a2a+json"];

const agentParams = {
  type: "object",
  properties: { agent: { type: "string", minLength: 1, maxLength: 300 } },
  required: ["agent"],
} as const;

/**
 * Every agent as an A2A agent under `{basePath}/{name}` (or `{name}@{version}`): its cards, the
 * JSON-RPC binding at the base itself (any POST to `{base}` or `{base}/`), and the HTTP+JSON
 * binding's paths beneath it. Tasks are the agent's ACP runs (see face.ts). Every refusal under
 * the prefix is in its binding's shape: a JSON-RPC error for the interface URL, a
 * google.rpc.Status for the rest (unrouted.ts).
 */
export const a2aRoutes: FastifyPluginAsync<{
  basePath: string;
  agents: A2aAgents;
  /** The gRPC binding's address for a client that reached `hostname` (none: it is off). */
  grpcAddress?: (hostname: string) => string | undefined;
}> = async (app, { basePath, agents, grpcAddress }) => {
  const { settings } = app.deps;
  const auth: CardAuth = {
    apiKeys: settings.auth.keys.length > 0,
    jwt: settings.auth.jwt !== undefined,
  };
  // An empty body reaches the binding, which answers it in its own terms (JSON-RPC: -32700).
  for (const contentType of JSON_TYPES) {
    registerJsonBodyParser(app, settings.limits, { allowEmpty: true, contentType });
  }
  const faceOf = (request: FastifyRequest): A2aFace =>
    agents.faceOf((request.params as { agent: string }).agent, request.caller);

  app.setErrorHandler((err: FastifyError, request, reply) => {
    const refusal = transportRefusal(err, request) ?? err;
    const route = (request.routeOptions.url ?? "").slice(basePath.length);
    if (JSON_RPC_ROUTES.has(route)) {
      return sendJsonRpcError(reply, refusal, request);
    }
    return sendRestError(request, reply, refusal);
  });

  // Under the prefix, a path that is no operation is refused in its binding's shape too.
  app.setNotFoundHandler((request, reply) => {
    const refused = unrouted(basePath, request.method, request.url, (ref) => {
      try {
        return agents.agent(ref) !== undefined;
      } catch {
        return false;
      }
    });
    if (refused.allow) reply.header("allow", refused.allow);
    if (refused.jsonRpc) {
      return reply
        .code(refused.error.rpcHttpStatus)
        .type("application/json")
        .send({ jsonrpc: "2.0", id: null, error: refused.error.toJsonRpc() });
    }
    return sendRestError(request, reply, refused.error);
  });

  // The version is checked on the bindings only: the cards are for every client.
  app.addHook("preHandler", async (request) => {
    if (request.is404) return;
    if (request.method === "GET" && request.url.includes("/.well-known/")) return;
    requestedVersion(request);
  });

  registerCards(app, agents, {
    basePath,
    auth,
    maxAgeSeconds: settings.a2a.cardMaxAgeSeconds,
    grpcAddress,
  });

  /** The caller's extended cards of the agent the path names (it must be allowed to use it). */
  const cardsOf = (request: FastifyRequest): ExtendedCards => {
    if (!auth.apiKeys && !auth.jwt) return null;
    const { agent } = faceOf(request);
    const context = { origin: `${request.protocol}://${request.host}`, caller: request.caller };
    const url = `${context.origin}${basePath}/${encodeURIComponent(agent.name)}`;
    const modes = a2aOptionsOf(agent.config);
    const grpc = grpcAddress?.(request.hostname);
    return {
      v1: () => extendedAgentCard(agent, url, auth, modes, context, grpc),
      v03: () => legacyExtendedAgentCard(agent, url, auth, modes, context),
    };
  };

  for (const route of JSON_RPC_ROUTES) {
    app.post(
      route,
      { schema: { params: agentParams }, config: { longRequest: "stream" } },
      async (request, reply) =>
        serveJsonRpc(request, reply, {
          faceOf: () => faceOf(request),
          operations: operationsFor,
          keepAliveSeconds: settings.keepAliveSeconds,
          cards: () => cardsOf(request),
        }),
    );
  }
  registerRestBinding(app, {
    faceOf,
    cardsOf,
    keepAliveSeconds: settings.keepAliveSeconds,
    refuse: (request) => unrouted(basePath, request.method, request.url, () => true),
  });
};

/**
 * What the transport itself refused, as the A2A error each binding answers: a body whose
 * content type the server does not take is ContentTypeNotSupported with HTTP 415 (JSON-RPC code
 * -32005); undefined for anything else.
 */
function transportRefusal(err: FastifyError, request: FastifyRequest): A2aError | undefined {
  if (err.statusCode !== 415) return undefined;
  const given = request.headers["content-type"];
  const what = given
    ? `content-type ${JSON.stringify(given.slice(0, 100))} is not accepted`
    : "the request has a body but no content-type";
  return new A2aError(
    "ContentTypeNotSupported",
    `${what}: send JSON with content-type ${JSON_TYPES.join(" or ")}`,
    {},
    415,
  );
}

function sendJsonRpcError(reply: FastifyReply, err: unknown, request: FastifyRequest) {
  const status = (err as { statusCode?: number }).statusCode;
  const refusedBody =
    !(err instanceof A2aError) &&
    !isDomainError(err) &&
    typeof status === "number" &&
    status < 500 &&
    status !== 429;
  // The body parser's and the route schema's refusals: the request never became a call.
  const error = refusedBody
    ? new A2aError("ParseError", (err as Error).message)
    : asA2aError(err, request.log);
  retryAfterOverload(reply, err);
  return reply
    .code(error.rpcHttpStatus)
    .type("application/json")
    .send({ jsonrpc: "2.0", id: idOf(request.body), error: error.toJsonRpc() });
}
