import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { AgentRegistry } from "../../config/registry.js";
import { DomainError } from "../../errors.js";
import type { ApiKey } from "../../settings.js";
import type { Storage } from "../../storage/types.js";
import { sendError } from "../errors.js";

/** Who is calling: the API key's name and, for a restricted key, the agent ids it may use. */
export interface Caller {
  name: string;
  /** `null`: every agent. */
  agentIds: ReadonlySet<string> | null;
}

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the auth hook when API keys are configured and one was presented. */
    caller: Caller | null;
  }
}

export interface AuthOptions {
  keys: readonly ApiKey[];
  registry: AgentRegistry;
  storage: Storage;
  /** Paths served without a key (health, readiness, the protocol documents, …). */
  openPaths: ReadonlySet<string>;
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

/** Route templates answering lists of agents or runs, filtered for a restricted key. */
const AGENT_LISTS = new Set(["/agents/search"]);
const RUN_LISTS = new Set(["/runs/search", "/threads/:thread_id/runs"]);

const digest = (value: string): Buffer => createHash("sha256").update(value, "utf8").digest();

/** The key a request presents: `Authorization: Bearer <key>`, else `x-api-key: <key>`. */
export function presentedKey(request: FastifyRequest): string | undefined {
  const authorization = first(request.headers.authorization);
  if (authorization) {
    const match = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  const header = first(request.headers["x-api-key"]);
  return header?.trim() || undefined;
}

const first = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/**
 * API keys. With none configured nothing is checked. Otherwise every request but the open
 * paths (and CORS preflights) needs a key: 401 without one. A key restricted to some agents
 * gets 403 for any other agent: agent, descriptor and AG-UI endpoints by path, run creation by
 * `agent_id`, existing runs by their agent; agent and run lists come back filtered.
 */
export function registerAuth(app: FastifyInstance, options: AuthOptions): void {
  app.decorateRequest("caller", null);
  if (options.keys.length === 0) return;

  const { registry, storage, openPaths } = options;
  const entries = options.keys.map((key) => ({
    digest: digest(key.key),
    caller: {
      name: key.name,
      agentIds: key.agents
        ? new Set(
            registry
              .list()
              .filter((a) => key.agents!.includes(a.name))
              .map((a) => a.agentId),
          )
        : null,
    } satisfies Caller,
  }));

  /**
   * Both sides are hashed first, so every comparison is of 32 bytes whatever the key lengths;
   * every key is compared, so the time does not tell which one (or whether one) matched.
   */
  const identify = (presented: string): Caller | null => {
    const presentedDigest = digest(presented);
    let found: Caller | null = null;
    for (const entry of entries) {
      if (timingSafeEqual(presentedDigest, entry.digest) && found === null) found = entry.caller;
    }
    return found;
  };

  app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
    if (request.method === "OPTIONS") return;
    if (openPaths.has(request.url.split("?")[0]!)) return;
    const key = presentedKey(request);
    const caller = key === undefined ? null : identify(key);
    if (!caller) {
      reply.header("www-authenticate", "Bearer");
      return sendError(reply, 401, "missing or invalid API key");
    }
    request.caller = caller;
  });

  const refuse = (caller: Caller, agent: string) =>
    new DomainError("forbidden", `API key "${caller.name}" may not use agent ${agent}`);

  app.addHook("preHandler", async (request: FastifyRequest) => {
    const allowed = request.caller?.agentIds;
    if (!allowed) return;
    const caller = request.caller!;
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
      const run = await storage.getRun(params.run_id);
      if (run && !allowed.has(run.agent_id)) throw refuse(caller, run.agent_id);
    }
  });

  app.addHook("preSerialization", async (request: FastifyRequest, _reply, payload: unknown) => {
    const allowed = request.caller?.agentIds;
    if (!allowed || !Array.isArray(payload)) return payload;
    const route = request.routeOptions.url ?? "";
    if (AGENT_LISTS.has(route) || RUN_LISTS.has(route)) {
      return payload.filter((item: { agent_id?: unknown }) => allowed.has(item.agent_id as string));
    }
    return payload;
  });
}
