import Fastify, { type FastifyInstance, LogController } from "fastify";
import type { Logger } from "pino";
import pino from "pino";
import { type AgentAdapter, createAdapter } from "./adapters/index.js";
import { parseRunCommand } from "./bridge/acp/run-command.js";
import { agentBounds } from "./config/agent-bounds.js";
import type { AgentRegistry } from "./config/registry.js";
import { hidesInternals, type ServerSettings, servedFaces } from "./config/settings.js";
import { toAcpRun } from "./engine/acp-mapping.js";
import { catalogOf } from "./engine/agent-catalog.js";
import { type FrameBus, LocalFrameBus } from "./engine/frame-bus.js";
import { OpsService } from "./engine/ops-service.js";
import { PushConfigService } from "./engine/push-config-service.js";
import { ResponseSchemas } from "./engine/response-schemas.js";
import { lazyChild } from "./engine/run-engine/lazy-logger.js";
import { RunEngine } from "./engine/run-engine.js";
import { observeRun, runQueues } from "./engine/run-metrics.js";
import { RunService } from "./engine/run-service.js";
import { ThreadService } from "./engine/thread-service.js";
import {
  a2aCardPaths,
  a2aFace,
  a2aRouteHint,
  sendA2aFrameworkError,
  sendA2aRefusal,
} from "./http/a2a/index.js";
import { acpFace } from "./http/acp/index.js";
import { aguiFace, aguiRouteHint } from "./http/agui/index.js";
import { copilotkitFace, copilotkitRouteHint } from "./http/copilotkit/index.js";
import { sendFrameworkError } from "./http/errors.js";
import { createInspector, inspectorOpenPaths, inspectorPlugin } from "./http/inspector/index.js";
import { langgraphFace, sendDetail } from "./http/langgraph/index.js";
import { mcpFace, mcpOpenPaths, mcpRefusals, sendMcpFrameworkError } from "./http/mcp/index.js";
import { metaRoutes } from "./http/meta.js";
import { authPlugin, type Refusal } from "./http/plugins/auth.js";
import { corsPlugin } from "./http/plugins/cors.js";
import { httpConventions } from "./http/plugins/http-conventions.js";
import { metricsPlugin } from "./http/plugins/metrics.js";
import { pagingBoundsPlugin } from "./http/plugins/paging.js";
import { rateLimitPlugin } from "./http/plugins/rate-limit.js";
import { logEachRequest } from "./http/plugins/request-log.js";
import { shutdown, shutdownTimeoutMs } from "./http/plugins/shutdown.js";
import { LongRequests, longRequestsPlugin } from "./http/plugins/streams.js";
import { schemaErrorFormatter } from "./http/validator-compiler.js";
import { Metrics } from "./metrics/metrics.js";
import { RetentionMetrics } from "./retention/metrics.js";
import { RunExpiries } from "./retention/run-expiries.js";
import { RetentionSweeper } from "./retention/sweeper.js";
import type { Storage } from "./storage/types.js";
import { startTelemetry } from "./telemetry/index.js";
import { aguiValidator, describeErrors } from "./validation/index.js";
import { WebhookDeliverer } from "./webhooks/deliverer.js";
import type { ResolveHost } from "./webhooks/target-guard.js";

/** What every route may use; built once per app, shared through `app.deps`. */
export interface AppDeps {
  settings: ServerSettings;
  registry: AgentRegistry;
  threads: ThreadService;
  runs: RunService;
  ops: OpsService;
  engine: RunEngine;
  webhooks: WebhookDeliverer;
  /** A2A push notification configs (the A2A face). */
  pushConfigs: PushConfigService;
  /** Runs deleted a while after their creation (MCP tasks' ttl); the sweeper deletes them. */
  runExpiries: RunExpiries;
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
  /**
   * One short line per request (a person at a terminal) instead of Fastify's request and
   * response lines (a log collector's JSON); see plugins/request-log.ts.
   */
  compactRequestLog?: boolean;
  /** How webhook host names resolve (tests give names answers of their own); default DNS. */
  resolveWebhookHost?: ResolveHost;
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
    // Every request log line (and `request.log` child) carries `request_id`. On a terminal,
    // plugins/request-log.ts logs one short line per request instead of Fastify's two.
    logController: new LogController({
      requestIdLogLabel: "request_id",
      disableRequestLogging: options.compactRequestLog === true,
    }),
    // Each request's child logger is made when the request logs something (rarely).
    childLoggerFactory: (parent, bindings, options) =>
      Object.keys(options).length === 0
        ? lazyChild(parent as Logger, bindings)
        : parent.child(bindings, options),
    // Malformed URLs are refused by the router before any route: an ACP string error, or under
    // the A2A, LangGraph or MCP face's prefix, that face's own shape.
    frameworkErrors: (err, request, reply) => {
      const { enabled, basePath } = settings.a2a;
      if (enabled && request.url.startsWith(`${basePath}/`)) {
        return sendA2aFrameworkError(basePath, request, reply, err.code);
      }
      const langgraph = settings.langgraph;
      if (langgraph.enabled && request.url.startsWith(`${langgraph.basePath}/`)) {
        return sendDetail(reply, err.code === "FST_ERR_MAX_PARAM_LENGTH" ? 414 : 400, err.message);
      }
      if (settings.mcp.enabled && request.url.startsWith(`${settings.mcp.basePath}/`)) {
        return sendMcpFrameworkError(reply, err.code);
      }
      return sendFrameworkError(err, request, reply);
    },
    // Our own 503 during shutdown (below), an ACP string error like every other.
    return503OnClosing: false,
    // Bounds start-up plugins and close hooks alike: the shutdown's grace period must fit.
    pluginTimeout: shutdownTimeoutMs(options.shutdownGraceMs ?? 0),
    schemaErrorFormatter,
  }) as unknown as FastifyInstance;

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

  const webhookSettings = settings.webhooks;
  const webhooks = new WebhookDeliverer({
    storage,
    logger,
    allowPrivateTargets: webhookSettings.allowPrivateTargets,
    maxAttempts: webhookSettings.maxAttempts,
    timeoutMs: webhookSettings.timeoutSeconds * 1000,
    connectTimeoutMs: webhookSettings.connectTimeoutSeconds * 1000,
    concurrency: webhookSettings.concurrency,
    perTargetConcurrency: webhookSettings.perTargetConcurrency,
    resolve: options.resolveWebhookHost,
    // The deliveries a dead replica had claimed come back as soon as its runs do (at least
    // 3 s: claims are renewed every third of it); until then its runs' later deliveries wait.
    leaseMs: Math.max(3000, settings.leaseSeconds * 1000),
  });
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
    hideInternals: hidesInternals(settings),
    onEvent: metrics && ((agent, rejected) => metrics.event(agent, rejected)),
    onDeviation: metrics && ((agent) => metrics.deviation(agent)),
    agents: await Promise.all(
      registry.list().map(async (agent) => {
        const bounds = agentBounds(limits, agent.config.limits);
        return {
          agentId: agent.agentId,
          name: agent.name,
          adapter: selfDescribed(
            registry,
            agent.agentId,
            await createAdapter(agent.config, { logger, bounds }),
          ),
          bounds,
          runTimeoutSeconds: agent.config.limits.runTimeoutSeconds,
          maxConcurrentRuns: agent.config.limits.maxConcurrentRuns,
          retryOnRestart: agent.config.retryOnRestart,
          dropRaw: agent.config.events.dropRaw,
        };
      }),
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
    checkWebhook: (url) => webhooks.checkTarget(url),
  });
  const deps: AppDeps = {
    settings,
    registry,
    engine,
    runs,
    webhooks,
    ops: new OpsService(storage, engine.tails),
    threads: new ThreadService(storage),
    pushConfigs: new PushConfigService(storage),
    runExpiries: new RunExpiries(storage),
  };
  app.decorate("deps", deps);

  const openPaths = new Set(OPEN_PATHS);
  if (settings.metrics.public) openPaths.add("/metrics");
  const inspector = settings.inspector.enabled
    ? createInspector(settings.inspector.path, options.inspectorRoot)
    : null;
  for (const path of inspector ? inspectorOpenPaths(inspector) : []) openPaths.add(path);
  // Agent cards are public, as A2A discovery expects; the operations need a key.
  if (settings.a2a.enabled) {
    for (const path of a2aCardPaths(settings.a2a.basePath, registry.list())) openPaths.add(path);
  }
  // With users' tokens, MCP hosts discover the token issuer from these, before signing in.
  if (settings.mcp.enabled) {
    const tokens = settings.auth.jwt !== undefined;
    for (const path of mcpOpenPaths(settings.mcp.basePath, tokens, registry)) openPaths.add(path);
  }

  // Always on, even with every retention rule off: it also deletes runs at their expiry.
  const sweeper = new RetentionSweeper({
    storage,
    settings: settings.retention,
    logger,
    metrics: metrics && new RetentionMetrics(metrics.registry),
  });

  // Tracing, when on, opens each request's span before anything else runs for it.
  const tracing = await startTelemetry(settings.telemetry, logger);
  if (tracing) {
    await app.register(tracing.fastifyPlugin() as Parameters<typeof app.register>[0]);
    app.addHook("onClose", () => tracing.shutdown());
  }
  // Each plugin names the ones it needs before it (see plugins/names.ts): Fastify refuses to
  // start when this order breaks one of those.
  if (options.compactRequestLog) {
    logEachRequest(app, settings.inspector.enabled ? settings.inspector.path : null);
  }
  await app.register(httpConventions, {
    limits,
    routeHints: [
      ...(settings.agui.enabled ? [aguiRouteHint(settings.agui.basePath)] : []),
      ...(settings.copilotkit.enabled ? [copilotkitRouteHint(settings.copilotkit.basePath)] : []),
      ...(settings.a2a.enabled ? [a2aRouteHint(settings.a2a.basePath)] : []),
    ],
  });
  await app.register(shutdown, {
    stopEngine: (graceMs) => engine.stop(graceMs),
    stopBackground: async () => {
      await sweeper.stop();
      await webhooks.stop();
    },
    longRequests,
    graceMs: options.shutdownGraceMs ?? 0,
  });
  await app.register(corsPlugin, settings.cors);
  await app.register(authPlugin, {
    keys: settings.auth.keys,
    jwt: settings.auth.jwt,
    registry,
    runs,
    openPaths,
    refusals: [
      ...(settings.a2a.enabled
        ? [
            {
              prefix: `${settings.a2a.basePath}/`,
              send: (request, reply, status, message) =>
                sendA2aRefusal(settings.a2a.basePath, request, reply, status, message),
            } satisfies Refusal,
          ]
        : []),
      // LangGraph's client reads `detail` from every error body.
      ...(settings.langgraph.enabled
        ? [
            {
              prefix: `${settings.langgraph.basePath}/`,
              send: (_request, reply, status, message) => sendDetail(reply, status, message),
            } satisfies Refusal,
          ]
        : []),
      ...(settings.mcp.enabled
        ? [mcpRefusals(settings.mcp.basePath, settings.auth.jwt !== undefined)]
        : []),
    ],
  });
  await app.register(rateLimitPlugin, { ...settings.rateLimit, openPaths });
  await app.register(longRequestsPlugin, { tracker: longRequests });
  await app.register(pagingBoundsPlugin);
  if (metrics) await app.register(metricsPlugin, { metrics });
  await app.register(metaRoutes, {
    inspectorPath: inspector ? settings.inspector.path : null,
    faces: servedFaces(settings),
  });
  if (inspector) await app.register(inspectorPlugin, { inspector, metrics });
  // The faces: one line each, each switched by its settings section (docs/config.md).
  const { acp, agui, copilotkit, a2a, langgraph, mcp } = settings;
  if (acp.enabled) await app.register(acpFace);
  if (agui.enabled) await app.register(aguiFace, { basePath: agui.basePath });
  if (copilotkit.enabled) await app.register(copilotkitFace, { basePath: copilotkit.basePath });
  if (a2a.enabled) await app.register(a2aFace, { basePath: a2a.basePath });
  if (langgraph.enabled) await app.register(langgraphFace, { basePath: langgraph.basePath });
  if (mcp.enabled) await app.register(mcpFace, mcp);

  await engine.start({ recoverAllOwned: storage.kind === "sqlite" });
  webhooks.start();
  sweeper.start();
  return app;
}

/** Served without an API key: probes and the (public) protocol documents. */
const OPEN_PATHS = [
  "/",
  "/healthz",
  "/readyz",
  "/openapi.json",
  "/schemas/acp.openapi.json",
  "/schemas/ag-ui.schema.json",
];

/** An adapter that says what its agent is (an A2A card) refines the agent's descriptor. */
function selfDescribed(registry: AgentRegistry, agentId: string, adapter: AgentAdapter) {
  if (adapter.describe) registry.describeWith(agentId, () => adapter.describe?.());
  return adapter;
}
