import type { FastifyInstance } from "fastify";
import { A2aAgents } from "./agents.js";
import { A2aPush } from "./push.js";

/**
 * The A2A operations layer of this server: every agent's face, with push notifications through
 * the webhook deliverer (stored, retried, targets guarded). Made once, by the face's plugin,
 * and shared by every binding: the JSON-RPC and HTTP+JSON routes here, and any other binding
 * through `app.a2aAgents` (see agents.ts and operations.ts).
 */
export function createA2aAgents(app: FastifyInstance): A2aAgents {
  const { registry, runs, threads, settings, pushConfigs, webhooks } = app.deps;
  const closing = new AbortController();
  app.addHook("onClose", async () => closing.abort());
  const push = new A2aPush(
    pushConfigs,
    webhooks,
    closing.signal,
    settings.a2a.maxPushConfigsPerTask,
  );
  const agents = new A2aAgents(registry, runs, threads, push);
  // Relays a stopped server left behind start again once this one is ready (its engine has
  // recovered the runs it finds), and are looked for again as often as leases are checked.
  app.addHook("onReady", async () => {
    push.startSweeps(
      app.deps.engine.owner,
      registry.list().map((agent) => agent.agentId),
      (agentId) => {
        const agent = registry.get(agentId);
        return agent ? agents.faceFor(agent).tasks : undefined;
      },
      Math.max(1000, (settings.leaseSeconds * 1000) / 3),
      (err) => app.log.error({ err }, "A2A push relay sweep failed"),
    );
  });
  return agents;
}
