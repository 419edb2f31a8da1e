import Fastify, { type FastifyInstance, LogController } from "fastify";
import type { Logger } from "pino";
import pino from "pino";
import { createAdapter } from "./adapters/index.js";
import { parseRunCommand } from "./bridge/run-command.js";
import type { AgentRegistry } from "./config/registry.js";
import type { ServerSettings } from "./config/settings.js";
import { toAcpRun } from "./engine/acp-mapping.js";
import { catalogOf } from "./engine/agent-catalog.js";
import { type FrameBus, LocalFrameBus } from "./engine/frame-bus.js";
import { ResponseSchemas } from "./engine/response-schemas.js";
import { RunEngine } from "./engine/run-engine.js";
import { observeRun, runQueues } from "./engine/run-metrics.js";
import { RunService } from "./engine/run-service.js";
import { ThreadService } from "./engine/thread-service.js";
import { registerErrorHandling, sendError, sendFrameworkError } from "./http/errors.js";
import { createInspector, inspectorOpenPaths, registerInspector } from "./http/inspector/index.js";
import { registerJsonBodyParser } from "./http/json-body.js";
import { registerAuth } from "./http/plugins/auth.js";
import { registerCors } from "./http/plugins/cors.js";
import { registerMetrics } from "./http/plugins/metrics.js";
import { registerPagingBounds } from "./http/plugins/paging.js";
import { registerRateLimit } from "./http/plugins/rate-limit.js";
import { LongRequests } from "./http/plugins/streams.js";
import { agentRoutes } from "./http/routes/agents.js";
import { aguiRoutes } from "./http/routes/agui.js";
import { copilotkitRoutes } from "./http/routes/copilotkit.js";
import { metaRoutes } from "./http/routes/meta.js";
import { statelessRunRoutes } from "./http/routes/stateless-runs.js";
import { threadRunRoutes } from "./http/routes/thread-runs.js";
import { threadRoutes } from "./http/routes/threads.js";
import { RunHandlers } from "./http/run-handlers.js";
import { registerValidatorCompiler, schemaErrorFormatter } from "./http/validator-compiler.js";
import { Metrics } from "./metrics/metrics.js";
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
  /** Where the built inspector is read from; defaults to dist/ui (tests point elsewhere). */
  inspectorRoot?: string;
}

/**
 * Builds the Fastify app and the run engine around an already opened storage. Touches nothing
 * of the process (no listen, no signals): the CLI does that, and tests call this with `inject`.
 * Closing the app stops the engine; the caller closes the storage.
 */
export async function buildApp(options: BuildAppOptions): Promise<FastifyInstance> {
  const { settings, registry, storage } = options;
  const { limits } = settings;
  const logger = options.logger ?? pino({ level: "silent" });
  const app = Fastify({
    loggerInstance: logger,
    bodyLimit: limits.maxBodyBytes,
    // Every request log line (and `request.log` child) carries `request_id`.
    logController: new LogController({ requestIdLogLabel: "request_id" }),
    // Malformed URLs are refused by the router before any route: still an ACP string error.
    frameworkErrors: sendFrameworkError,
    // Our own 503 during shutdown (below), an ACP string error like every other.
    return503OnClosing: false,
    schemaErrorFormatter,
  }) as unknown as FastifyInstance;
  // The default text/plain parser would hand strings to JSON routes; without it a wrong
  // content type is a clear 415 instead of a confusing schema error.
  app.removeContentTypeParser("text/plain");
  registerJsonBodyParser(app, limits);

  const longRequests = new LongRequests(limits.maxOpenStreams);
  const metrics: Metrics | undefined = settings.metrics.enabled
    ? new Metrics({
        runQueues: () => runQueues(registry, storage, engine),
        openStreams: () => longRequests.openStreams,
        webhooks: () => webhooks.stats(),
        storageWrites: () => ({ backend: storage.kind, ...storage.writeCounts() }),
      })
    : undefined;
  const agentNames = new Map(registry.list().map((agent) => [agent.agentId, agent.name]));

  const { allowPrivateTargets, maxAttempts } = settings.webhooks;
  const webhooks = new WebhookDeliverer({ storage, logger, allowPrivateTargets, maxAttempts });
  const engine = new RunEngine({
    storage,
    onStatusChange: (run) => {
      if (metrics) observeRun(metrics, agentNames.get(run.agent_id) ?? run.agent_id, run);
      const url = parseRunCommand(run.creation).webhook;
      if (url !== undefined) return webhooks.enqueue(run, url, toAcpRun(run));
    },
    bus: options.bus ?? new LocalFrameBus(),
    logger,
    maxConcurrentRuns: settings.maxConcurrentRuns,
    leaseMs: settings.leaseSeconds * 1000,
    maxEventsPerRun: limits.maxEventsPerRun,
    onEvent: metrics && ((agent, rejected) => metrics.event(agent, rejected)),
    agents: await Promise.all(
      registry.list().map(async (agent) => ({
        agentId: agent.agentId,
        name: agent.name,
        adapter: await createAdapter(agent.config),
        runTimeoutSeconds: agent.config.limits.runTimeoutSeconds,
        maxConcurrentRuns: agent.config.limits.maxConcurrentRuns,
        retryOnRestart: agent.config.retryOnRestart,
        dropRaw: agent.config.events.dropRaw,
      })),
    ),
  });
  const responseSchemas = new ResponseSchemas(logger);
  const runs = new RunService({
    engine,
    catalog: catalogOf(registry),
    validateResponse: (interrupt, payload, at) => responseSchemas.check(interrupt, payload, at),
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
  registerErrorHandling(app, { maxBodyBytes: limits.maxBodyBytes });
  // Set once shutdown begins: a request still arriving on an open connection is refused.
  let closing = false;
  app.addHook("onRequest", async (_request, reply) => {
    if (!closing) return;
    reply.header("connection", "close");
    return sendError(reply, 503, "the server is shutting down");
  });
  // Order matters: CORS answers preflights before the key check; the rate limit keys on the
  // caller the key check found; all of them before the routes they apply to.
  const openPaths = new Set(OPEN_PATHS);
  if (settings.metrics.public) openPaths.add("/metrics");
  const inspector = settings.inspector.enabled
    ? createInspector(settings.inspector.path, options.inspectorRoot)
    : null;
  for (const path of inspector ? inspectorOpenPaths(inspector) : []) openPaths.add(path);
  await registerCors(app, settings.cors);
  registerAuth(app, {
    keys: settings.auth.keys,
    jwt: settings.auth.jwt,
    registry,
    storage,
    openPaths,
  });
  await registerRateLimit(app, { ...settings.rateLimit, openPaths });
  longRequests.register(app);
  registerPagingBounds(app);
  if (metrics) registerMetrics(app, metrics);
  await app.register(metaRoutes);
  await app.register(agentRoutes);
  await app.register(threadRoutes);
  await app.register(threadRunRoutes);
  await app.register(statelessRunRoutes);
  await app.register(aguiRoutes);
  if (inspector) await registerInspector(app, inspector, { metrics });
  if (settings.copilotkit.enabled) {
    await app.register(copilotkitRoutes, { prefix: settings.copilotkit.basePath });
  }

  await engine.start({ recoverAllOwned: storage.kind === "sqlite" });
  webhooks.start();
  // Before Fastify waits for open connections to end: the streams and waits among them only
  // end once their runs do, so the engine must stop (and end them) first.
  app.addHook("preClose", async () => {
    closing = true;
    // No new connections during the grace period: it is for the runs in flight.
    if (app.server.listening) app.server.close();
    await engine.stop(options.shutdownGraceMs ?? 0);
    // The runs just ended wrote their final frames; give streams a moment to deliver them.
    await longRequests.drain(STREAM_DRAIN_MS);
  });
  app.addHook("onClose", async () => {
    await webhooks.stop();
  });
  return app;
}

/** Served without an API key: probes and the (public) protocol documents. */
const OPEN_PATHS = [
  "/healthz",
  "/readyz",
  "/openapi.json",
  "/schemas/acp.openapi.json",
  "/schemas/ag-ui.schema.json",
];

/** How long open streams get, once the engine stopped, to deliver their final frames. */
const STREAM_DRAIN_MS = 1000;
