#!/usr/bin/env node
import { parseArgs } from "node:util";
import pino, { type Logger } from "pino";
import { startServer } from "./server.js";
import type { ServerSettings } from "./settings.js";

const USAGE = `Usage: acp-agui serve --config FILE [--port N] [--host H] [--db PATH]

Starts the ACP server with the agents of a config file (YAML or JSON).

  --config FILE   config file (env ACP_AGUI_CONFIG)
  --port N        port to listen on (env PORT; default 8000)
  --host H        address to bind (env HOST; default 127.0.0.1)
  --db PATH       SQLite file or ":memory:" (env DATABASE_URL; default ./data/acp-agui.db)
  --log-level L   fatal|error|warn|info|debug|trace|silent (env LOG_LEVEL; default info)
  --grace S       seconds running runs get to finish on SIGTERM (env SHUTDOWN_GRACE_SECONDS; default 10)
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

function createLogger(level: string): Logger {
  // Pretty output only for a person at a terminal; containers and files get one JSON per line.
  if (process.stdout.isTTY) {
    return pino({
      level,
      transport: { target: "pino-pretty", options: { translateTime: "SYS:HH:MM:ss" } },
    });
  }
  return pino({ level });
}

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

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, graceSeconds: grace }, "shutting down");
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
