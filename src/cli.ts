#!/usr/bin/env node
import { parseArgs } from "node:util";
import { MIN_API_KEY_LENGTH } from "./config/schema.js";
import { createLogger } from "./logging.js";
import { startServer } from "./server.js";
import type { ApiKey, ServerSettings } from "./settings.js";

const USAGE = `Usage: acp-agui serve --config FILE [--port N] [--host H] [--db PATH]

Starts the ACP server with the agents of a config file (YAML or JSON).

  --config FILE   config file (env ACP_AGUI_CONFIG)
  --port N        port to listen on (env PORT; default 8000)
  --host H        address to bind (env HOST; default 127.0.0.1)
  --db PATH       SQLite file or ":memory:" (env DATABASE_URL; default ./data/acp-agui.db)
  --log-level L   fatal|error|warn|info|debug|trace|silent (env LOG_LEVEL; default info)
  --grace S       seconds running runs get to finish on SIGTERM (env SHUTDOWN_GRACE_SECONDS; default 10)

API keys: server.auth.keys in the config, and/or ACP_AGUI_API_KEYS (comma-separated).
`;

function fail(message: string): never {
  process.stderr.write(`acp-agui: ${message}\n`);
  process.exit(1);
}

function integer(name: string, value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 0)
    fail(`${name} must be a non-negative integer (got "${value}")`);
  return parsed;
}

/** `ACP_AGUI_API_KEYS`: comma-separated keys, each for every agent, named env-1, env-2, … */
function keysFromEnv(value: string | undefined): ApiKey[] | undefined {
  if (!value?.trim()) return undefined;
  const keys = value
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key !== "");
  keys.forEach((key, index) => {
    if (key.length < MIN_API_KEY_LENGTH)
      fail(`ACP_AGUI_API_KEYS: key ${index + 1} is shorter than ${MIN_API_KEY_LENGTH} characters`);
  });
  return keys.map((key, index) => ({ key, name: `env-${index + 1}` }));
}

const LOOPBACK = /^(127\.|localhost$|::1$|\[::1\]$)/;

/** Beyond the grace period, how long shutdown may take before the process gives up on it. */
const SHUTDOWN_MARGIN_MS = 15_000;

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      port: { type: "string", short: "p" },
      host: { type: "string" },
      db: { type: "string" },
      "log-level": { type: "string" },
      grace: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const command = positionals[0] ?? "serve";
  if (command !== "serve") fail(`unknown command "${command}"\n\n${USAGE}`);

  const env = process.env;
  const configPath = values.config ?? env.ACP_AGUI_CONFIG;
  if (!configPath) fail(`no config file: pass --config FILE or set ACP_AGUI_CONFIG\n\n${USAGE}`);

  const fromEnv: Partial<ServerSettings> = {
    port: integer("PORT", env.PORT),
    host: env.HOST || undefined,
    database: env.DATABASE_URL || undefined,
    logLevel: env.LOG_LEVEL || undefined,
    auth: { keys: keysFromEnv(env.ACP_AGUI_API_KEYS) ?? [] },
  };
  const fromFlags: Partial<ServerSettings> = {
    port: integer("--port", values.port),
    host: values.host,
    database: values.db,
    logLevel: values["log-level"],
  };
  const level = fromFlags.logLevel ?? fromEnv.logLevel ?? "info";
  const logger = createLogger(level);
  const grace = integer("--grace", values.grace ?? env.SHUTDOWN_GRACE_SECONDS) ?? 10;

  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer({
      configPath,
      overrides: [fromEnv, fromFlags],
      logger,
      shutdownGraceMs: grace * 1000,
    });
  } catch (err) {
    fail((err as Error).message);
  }
  logger.info({ url: server.url, database: server.settings.database }, "acp-agui listening");
  const { settings } = server;
  if (settings.auth.keys.length === 0 && !LOOPBACK.test(settings.host)) {
    logger.warn(
      { host: settings.host },
      "no API keys configured: anyone who reaches this address can use every agent",
    );
  }

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, graceSeconds: grace }, "shutting down");
    // A stuck close (a storage that never answers) must not keep the process alive forever.
    setTimeout(
      () => {
        logger.error("shutdown did not finish in time; exiting");
        process.exit(1);
      },
      grace * 1000 + SHUTDOWN_MARGIN_MS,
    ).unref();
    server
      .close()
      .then(() => process.exit(0))
      .catch((err) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      });
  };
  process.on("SIGTERM", () => shutdown("SIGTERM"));
  process.on("SIGINT", () => shutdown("SIGINT"));
}

void main();
