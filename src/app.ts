import Fastify, { type FastifyInstance } from "fastify";
import type { Logger } from "pino";
import pino from "pino";
import { createAdapter } from "./adapters/index.js";
import type { AgentRegistry, RegisteredAgent } from "./config/registry.js";
import { toAcpRun } from "./engine/acp-mapping.js";
import { type FrameBus, LocalFrameBus } from "./engine/frame-bus.js";
import { RunEngine } from "./engine/run-engine.js";
import { type AgentCatalog, RunService } from "./engine/run-service.js";
import { ThreadService } from "./engine/thread-service.js";
import { registerErrorHandling } from "./http/errors.js";
import { registerJsonBodyParser } from "./http/json-body.js";
import { agentRoutes } from "./http/routes/agents.js";
import { aguiRoutes } from "./http/routes/agui.js";
import { metaRoutes } from "./http/routes/meta.js";
import { statelessRunRoutes } from "./http/routes/stateless-runs.js";
import { threadRunRoutes } from "./http/routes/thread-runs.js";
import { threadRoutes } from "./http/routes/threads.js";
import { RunHandlers } from "./http/run-handlers.js";
import { registerValidatorCompiler, schemaErrorFormatter } from "./http/validator-compiler.js";
import type { ServerSettings } from "./settings.js";
import type { Storage } from "./storage/types.js";
import { aguiValidator, describeErrors } from "./validation/index.js";
import { WebhookDeliverer } from "./webhooks/deliverer.js";
import { checkWebhookUrlSyntax } from "./webhooks/target-guard.js";

/** What every route may use; built once per app, shared through `app.deps`. */
export interface AppDeps {
  settings: ServerSettings;
  registry: AgentRegistry;
  storage: Storage;
  threads: ThreadService;
  runs: RunService;
  runHandlers: RunHandlers;
  engine: RunEngine;
  webhooks: WebhookDeliverer;
}

declare module "fastify" {
  interface FastifyInstance {
    deps: AppDeps;
  }
}

export interface BuildAppOptions {
  settings: ServerSettings;
  registry: AgentRegistry;
  storage: Storage;
  logger?: Logger;
  /** How replicas hear each other; defaults to the in-process bus of a single server. */
  bus?: FrameBus;
  /** Grace period for running runs when the app closes. */
  shutdownGraceMs?: number;
}

/**
 * Builds the Fastify app and the run engine around an already opened storage. Touches nothing
 * of the process (no listen, no signals): the CLI does that, and tests call this with `inject`.
 * Closing the app stops the engine; the caller closes the storage.
 */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { settings, registry, storage } = options;
  const logger = options.logger ?? pino({ level: "silent" });
  const app = Fastify({
    loggerInstance: logger,
    bodyLimit: settings.bodyLimitBytes,
    schemaErrorFormatter,
  }) as unknown as FastifyInstance;
  // The default text/plain parser would hand strings to JSON routes; without it a wrong
  // content type is a clear 415 instead of a confusing schema error.
  app.removeContentTypeParser("text/plain");
  registerJsonBodyParser(app);

  const { allowPrivateTargets, maxAttempts } = settings.webhooks;
  const webhooks = new WebhookDeliverer({ storage, logger, allowPrivateTargets, maxAttempts });
  const engine = new RunEngine({
    storage,
    onStatusChange: (run) => {
      const url = run.creation.webhook;
      if (typeof url === "string") return webhooks.enqueue(run, url, toAcpRun(run));
    },
    bus: options.bus ?? new LocalFrameBus(),
    logger,
    maxConcurrentRuns: settings.maxConcurrentRuns,
    leaseMs: settings.leaseSeconds * 1000,
    agents: await Promise.all(
      registry.list().map(async (agent) => ({
        agentId: agent.agentId,
        name: agent.name,
        adapter: await createAdapter(agent.config),
        runTimeoutSeconds: agent.config.limits.runTimeoutSeconds,
        maxConcurrentRuns: agent.config.limits.maxConcurrentRuns,
        retryOnRestart: agent.config.retryOnRestart,
      })),
    ),
  });
  const runs = new RunService({
    engine,
    catalog: catalogOf(registry),
    validateResumeEntry: (entry) => {
      const validate = aguiValidator("ResumeEntry");
      return validate(entry) ? null : describeErrors(validate.errors, "entry");
    },
    checkWebhook: (url) => void checkWebhookUrlSyntax(url, { allowPrivateTargets }),
  });
  const deps: AppDeps = {
    settings,
    registry,
    storage,
    engine,
    runs,
    webhooks,
    threads: new ThreadService(storage),
    runHandlers: new RunHandlers(runs, settings.keepAliveSeconds),
  };
  app.decorate("deps", deps);

  registerValidatorCompiler(app);
  registerErrorHandling(app);
  await app.register(metaRoutes);
  await app.register(agentRoutes);
  await app.register(threadRoutes);
  await app.register(threadRunRoutes);
  await app.register(statelessRunRoutes);
  await app.register(aguiRoutes);

  await engine.start({ recoverAllOwned: storage.kind === "sqlite" });
  webhooks.start();
  app.addHook("onClose", async () => {
    await engine.stop(options.shutdownGraceMs ?? 0);
    await webhooks.stop();
  });
  return app;
}

function catalogOf(registry: AgentRegistry): AgentCatalog {
  const wrap = (agent: ReturnType<AgentRegistry["get"]>) =>
    agent && {
      agentId: agent.agentId,
      validateInput: (data: unknown) => agent.validateInput(data),
      validateConfig: (data: unknown) => agent.validateConfig(data),
      validateResume: (type: string, data: unknown) => agent.validateResume(data, type),
      maxPendingRuns: agent.config.limits.maxQueuedRuns + agent.config.limits.maxConcurrentRuns,
      streamModes: declaredStreamModes(agent),
    };
  return {
    get: (agentId) => wrap(registry.get(agentId)) ?? undefined,
    defaultAgent: () => wrap(registry.defaultAgent()),
  };
}

function declaredStreamModes(agent: RegisteredAgent): Set<string> {
  const streaming = (agent.descriptor.specs.capabilities as { streaming?: Record<string, boolean> })
    .streaming;
  return new Set(
    Object.entries(streaming ?? {})
      .filter(([, on]) => on)
      .map(([mode]) => mode),
  );
}
