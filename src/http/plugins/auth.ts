import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { TokenVerifier } from "../../auth/jwt.js";
import {
  ANONYMOUS,
  keyPrincipalId,
  NOBODY,
  type Principal,
  userPrincipalId,
} from "../../auth/principal.js";
import { looksLikeJwt, TokenRefused } from "../../auth/token.js";
import type { AgentRegistry } from "../../config/registry.js";
import type { ApiKey, JwtSettings } from "../../config/settings.js";
import type { RunService } from "../../engine/run-service.js";
import { DomainError } from "../../util/errors.js";
import { sendError } from "../errors.js";
import { PLUGIN } from "./names.js";

declare module "fastify" {
  interface FastifyRequest {
    /**
     * Who is calling (see src/auth/principal.ts), set by the auth hook on every request: the
     * anonymous admin when no authentication is configured.
     */
    caller: Principal;
  }
  interface FastifyInstance {
    /**
     * Who presents `presented` (an API key or bearer token; undefined: none), as the key check
     * of every request decides it: for a binding that is not served over HTTP (A2A's gRPC).
     */
    authenticate(presented: string | undefined): Promise<Authentication>;
  }
}

/** A caller, or why none: 401 (no or bad credentials), 503 (the token issuer unreachable). */
export type Authentication = { caller: Principal } | { refused: 401 | 503; message: string };

export interface AuthOptions {
  keys: readonly ApiKey[];
  /** Bearer tokens of end users, when an issuer is configured. */
  jwt?: JwtSettings;
  registry: AgentRegistry;
  /** Where a run named in the path is looked up, to refuse one of an agent the key may not use. */
  runs: RunService;
  /** Paths served without a key (health, readiness, the protocol documents, …). */
  openPaths: ReadonlySet<string>;
  /**
   * Faces whose clients expect refusals in their own protocol's shape (A2A): a 401 or 503 for a
   * path under `prefix` is sent by `send` instead of as ACP's string error.
   */
  refusals?: readonly Refusal[];
}

export interface Refusal {
  prefix: string;
  send(request: FastifyRequest, reply: FastifyReply, status: number, message: string): FastifyReply;
}

/** Route templates that create a run from a body carrying `agent_id`. */
const RUN_CREATION = new Set([
  "/runs",
  "/runs/stream",
  "/runs/wait",
  "/threads/:thread_id/runs",
  "/threads/:thread_id/runs/stream",
  "/threads/:thread_id/runs/wait",
]);

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/** The key a request presents: `Authorization: Bearer <key>`, else `x-api-key: <key>`. */
export function presentedKey(request: FastifyRequest): string | undefined {
  return presentedCredential(
    first(request.headers.authorization),
    first(request.headers["x-api-key"]),
  );
}

/** The key or token of an `authorization: Bearer <key>` value, else of an `x-api-key` value. */
export function presentedCredential(
  authorization: string | undefined,
  apiKey: string | undefined,
): string | undefined {
  if (authorization) {
    const match = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  return apiKey?.trim() || undefined;
}

const first = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/**
 * Who is calling. With no API keys and no token issuer nothing is checked: every request is
 * the anonymous admin. Otherwise every request but the open paths (and CORS preflights) needs
 * an API key or, with an issuer, a valid bearer token: 401 without one. The principal found
 * owns what the request creates and reaches only what it owns (the services enforce that). A
 * principal restricted to some agents gets 403 for any other agent: agent, descriptor and
 * AG-UI endpoints by path, run creation by `agent_id`, its own runs by their agent.
 */
async function registerAuth(app: FastifyInstance, options: AuthOptions): Promise<void> {
  app.decorateRequest("caller", null as unknown as Principal);
  if (options.keys.length === 0 && options.jwt === undefined) {
    app.decorate("authenticate", async () => ({ caller: ANONYMOUS }));
    app.addHook("onRequest", async (request: FastifyRequest) => {
      request.caller = ANONYMOUS;
    });
    return;
  }

  const { registry, runs, openPaths, refusals = [] } = options;
  const agentIdsOf = (names: readonly string[] | undefined): ReadonlySet<string> | null =>
    names
      ? new Set(
          registry
            .list()
            .filter((a) => names.includes(a.name))
            .map((a) => a.agentId),
        )
      : null;
  const entries = options.keys.map((key) => ({
    digest: digest(key.key),
    principal: Object.freeze({
      id: keyPrincipalId(key.name),
      label: `API key "${key.name}"`,
      admin: key.admin === true,
      agentIds: agentIdsOf(key.agents),
    }) satisfies Principal,
  }));
  // jose (half a MB of heap) loads only with a token issuer configured.
  const tokens: TokenVerifier | null = options.jwt
    ? new (await import("../../auth/jwt.js")).TokenVerifier(options.jwt)
    : null;

  /**
   * Both sides are hashed first, so every comparison is of 32 bytes whatever the key lengths;
   * every key is compared, so the time does not tell which one (or whether one) matched.
   */
  const identify = (presented: string): Principal | null => {
    const presentedDigest = digest(presented);
    let found: Principal | null = null;
    for (const entry of entries) {
      if (timingSafeEqual(presentedDigest, entry.digest) && found === null) {
        found = entry.principal;
      }
    }
    return found;
  };

  const userOf = async (token: string): Promise<Principal> => {
    const user = await tokens!.verify(token);
    return {
      id: userPrincipalId(user.userId),
      label: `user "${user.userId}"`,
      admin: false,
      agentIds: agentIdsOf(user.agents),
    };
  };

  const authenticate = async (presented: string | undefined): Promise<Authentication> => {
    const refused = (message: string) => ({ refused: 401 as const, message });
    if (presented === undefined) {
      return refused(tokens ? "missing API key or bearer token" : "missing or invalid API key");
    }
    const key = identify(presented);
    if (key) return { caller: key };
    if (!tokens || !looksLikeJwt(presented)) {
      return refused(tokens ? "invalid API key or bearer token" : "missing or invalid API key");
    }
    try {
      return { caller: await userOf(presented) };
    } catch (err) {
      if (!(err instanceof TokenRefused)) throw err;
      if (err.kind === "unavailable") return { refused: 503, message: err.message };
      return refused(err.message);
    }
  };
  app.decorate("authenticate", authenticate);

  app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
    request.caller = NOBODY;
    if (request.method === "OPTIONS") return;
    if (openPaths.has(request.url.split("?")[0]!)) return;
    const found = await authenticate(presentedKey(request));
    if ("caller" in found) {
      request.caller = found.caller;
      return;
    }
    if (found.refused === 401) reply.header("www-authenticate", "Bearer");
    const shaped = refusals.find((r) => request.url.startsWith(r.prefix));
    return shaped
      ? shaped.send(request, reply, found.refused, found.message)
      : sendError(reply, found.refused, found.message);
  });

  const refuse = (caller: Principal, agent: string) =>
    new DomainError("forbidden", `${caller.label} may not use agent ${agent}`);

  app.addHook("preHandler", async (request: FastifyRequest) => {
    const caller = request.caller;
    const allowed = caller.agentIds;
    if (!allowed) return;
    const params = (request.params ?? {}) as Record<string, unknown>;
    if (typeof params.agent_id === "string" && !allowed.has(params.agent_id)) {
      throw refuse(caller, params.agent_id);
    }
    if (typeof params.agent_name === "string") {
      const agent = registry.getByName(params.agent_name);
      if (!agent || !allowed.has(agent.agentId)) throw refuse(caller, `"${params.agent_name}"`);
    }
    const route = request.routeOptions.url ?? "";
    if (request.method === "POST" && RUN_CREATION.has(route)) {
      const body = request.body as Record<string, unknown> | undefined;
      const agentId =
        typeof body?.agent_id === "string" ? body.agent_id : registry.defaultAgent()?.agentId;
      // No agent_id and no default agent: the route answers 422 on its own.
      if (agentId !== undefined && !allowed.has(agentId)) throw refuse(caller, agentId);
    }
    if (request.method === "POST" && route === "/runs/search") {
      const agentId = (request.body as Record<string, unknown> | undefined)?.agent_id;
      if (typeof agentId === "string" && !allowed.has(agentId)) throw refuse(caller, agentId);
    }
    if (typeof params.run_id === "string") {
      const run = await runs.findReachable(caller, params.run_id);
      // Someone else's run is not refused here: for this caller it does not exist (404 below).
      if (run && !allowed.has(run.agent_id)) {
        throw refuse(caller, run.agent_id);
      }
    }
  });
}

/**
 * Sets `request.caller` for every request. After CORS (a preflight is answered before the key
 * check); everything that keys on the caller (rate limit, metrics, routes) comes after it.
 */
export const authPlugin = fp<AuthOptions>(async (app, options) => registerAuth(app, options), {
  name: PLUGIN.auth,
  fastify: "5.x",
  dependencies: [PLUGIN.httpConventions, PLUGIN.cors],
});
