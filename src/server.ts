import type { FastifyInstance } from "fastify";
import type { Logger } from "pino";
import { buildApp } from "./app.js";
import { loadConfig } from "./config/load.js";
import { AgentRegistry } from "./config/registry.js";
import { DEFAULT_SETTINGS, mergeSettings, type ServerSettings } from "./config/settings.js";
import type { FrameBus } from "./engine/frame-bus.js";
import { createStorage } from "./storage/index.js";
import type { Storage } from "./storage/types.js";

export interface StartOptions {
  configPath: string;
  /** Overrides from the environment and flags, highest precedence last. */
  overrides: Array<Partial<ServerSettings>>;
  logger: Logger;
  shutdownGraceMs: number;
  /** One short log line per request: the logger writes to a terminal (see app.ts). */
  compactRequestLog?: boolean;
}

export interface RunningServer {
  app: FastifyInstance;
  storage: Storage;
  settings: ServerSettings;
  url: string;
  /** Stops accepting, lets runs finish within the grace period, closes storage. */
  close(): Promise<void>;
}

/** Connections the kernel queues for `accept` (see `listen` below). */
const LISTEN_BACKLOG = 4096;

/** Loads the config, opens storage, builds the app and listens. Used by the CLI and tests. */
export async function startServer(options: StartOptions): Promise<RunningServer> {
  const config = await loadConfig(options.configPath);
  const settings = mergeSettings(DEFAULT_SETTINGS, config.server, ...options.overrides);
  // The logger exists before the config is read (to report its errors); the file's `logLevel`
  // applies from here on unless a flag or the environment named one. Set before anything takes
  // a child logger, since children keep the level they were made with.
  options.logger.level = settings.logLevel;
  const registry = new AgentRegistry(config);
  const storage = createStorage(settings.database);
  await storage.open();
  let app: FastifyInstance;
  let bus: FrameBus | undefined;
  try {
    // Replicas sharing PostgreSQL hear each other through LISTEN/NOTIFY; SQLite is one process.
    if (storage.kind === "postgres") {
      const { PostgresFrameBus } = await import("./storage/postgres/frame-bus.js");
      bus = await PostgresFrameBus.connect(settings.database, options.logger, storage);
    }
    app = await buildApp({
      settings,
      registry,
      storage,
      bus,
      logger: options.logger,
      shutdownGraceMs: options.shutdownGraceMs,
      compactRequestLog: options.compactRequestLog,
    });
    // Node's default listen backlog is 511 connections waiting to be accepted. Thousands of
    // clients opening streams within a second (a UI's conversations after a deploy or a
    // reconnect) overflow it while the event loop is busy, and the overflow shows as
    // connection resets and connect timeouts. The kernel caps the figure at
    // net.core.somaxconn (4096 by default since Linux 5.4).
    await listenQuietly(app, options.logger, settings);
  } catch (err) {
    await bus?.close();
    await storage.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : settings.port;
  return {
    app,
    storage,
    settings,
    url: `http://${settings.host.includes(":") ? `[${settings.host}]` : settings.host}:${port}`,
    async close() {
      await app.close();
      await bus?.close();
      await storage.close();
    },
  };
}

/**
 * Listens without Fastify's own "Server listening at …" line: the CLI logs one summary of
 * what is served where, and two start-up lines saying the same thing were one too many.
 * Fastify has no option for it; its line is logged at info while the level is raised.
 */
async function listenQuietly(
  app: FastifyInstance,
  logger: Logger,
  settings: ServerSettings,
): Promise<void> {
  const level = logger.level;
  if (logger.isLevelEnabled("info")) logger.level = "warn";
  try {
    // Node's default listen backlog is 511 connections waiting to be accepted. Thousands of
    // clients opening streams within a second (a UI's conversations after a deploy or a
    // reconnect) overflow it while the event loop is busy, and the overflow shows as
    // connection resets and connect timeouts. The kernel caps the figure at
    // net.core.somaxconn (4096 by default since Linux 5.4).
    await app.listen({ port: settings.port, host: settings.host, backlog: LISTEN_BACKLOG });
  } finally {
    logger.level = level;
  }
}
