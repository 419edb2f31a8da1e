#!/usr/bin/env node
// First: holds V8's compilers of hot code while the server loads (see the module). The
// server's modules are imported in main(), not here: a static import is parsed before any
// module of the program runs, this one included.
import "./cli/startup-v8.js";
import { parsePrincipalId } from "./auth/principal.js";
import { integerArg, logLevelArg, parseCommandLine, UsageError } from "./cli/args.js";
import { startupSummary } from "./cli/startup-summary.js";
import { releaseAfterStartUp } from "./cli/startup-v8.js";
import { ConfigFileUnreadable } from "./config/errors.js";
import type { ApiKey, ServerSettings } from "./config/settings.js";
import { MIN_API_KEY_LENGTH } from "./config/settings.js";
import type { RunningServer } from "./server.js";
import { createLogger } from "./util/logging.js";

const USAGE = `Usage: acp-agui serve --config FILE [--port N] [--host H] [--db PATH]
       acp-agui assign-owner --db PATH|URL --owner key:NAME|user:ID
       acp-agui --version

Serves the agents of a config file (YAML or JSON) to ACP, AG-UI, CopilotKit, A2A, MCP and LangGraph API clients.

  --config FILE   config file (env ACP_AGUI_CONFIG)
  --port N        port to listen on (env PORT; default 8000)
  --host H        address to bind (env HOST; default 127.0.0.1)
  --db PATH       SQLite file or ":memory:" (env DATABASE_URL; default ./data/acp-agui.db)
  --log-level L   fatal|error|warn|info|debug|trace|silent (env LOG_LEVEL; default info)
  --grace S       seconds running runs get to finish on SIGTERM (env SHUTDOWN_GRACE_SECONDS; default 10)

API keys: server.auth.keys in the config, and/or ACP_AGUI_API_KEYS (comma-separated).

assign-owner gives every thread and run without an owner (data from before ownership, or
from a server without authentication) to one principal: an API key (key:NAME, its name in
the config) or a token user (user:ID, the user id claim). Stop the server first (SQLite).
  --owner P       key:NAME or user:ID
`;

/** A failure to start (a config that does not validate, a port in use): exit status 1. */
function fail(message: string): never {
  process.stderr.write(`acp-agui: ${message}\n`);
  process.exit(1);
}

/** A mistake in how the command was called: one line, where the usage is, exit status 2. */
function usage(message: string): never {
  process.stderr.write(`acp-agui: ${message}\nRun acp-agui --help for the usage.\n`);
  process.exit(2);
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
      throw new UsageError(
        `ACP_AGUI_API_KEYS: key ${index + 1} is shorter than ${MIN_API_KEY_LENGTH} characters`,
      );
  });
  return keys.map((key, index) => ({ key, name: `env-${index + 1}` }));
}

const MAX_PORT = 65_535;

const LOOPBACK = /^(127\.|localhost$|::1$|\[::1\]$)/;

/** Beyond the grace period, how long shutdown may take before the process gives up on it. */
const SHUTDOWN_MARGIN_MS = 15_000;

async function main(): Promise<void> {
  let commandLine: ReturnType<typeof settingsFromCommandLine>;
  try {
    commandLine = settingsFromCommandLine(process.argv.slice(2), process.env);
  } catch (err) {
    if (err instanceof UsageError) usage(err.message);
    throw err;
  }
  if (commandLine === "help") {
    process.stdout.write(USAGE);
    return;
  }
  if (commandLine === "version") {
    const { packageVersion } = await import("./util/paths.js");
    process.stdout.write(`${packageVersion()}\n`);
    return;
  }
  if ("assign" in commandLine) {
    const { database, owner } = commandLine;
    const { assignOwner } = await import("./cli/assign-owner.js");
    const done = await assignOwner(database, owner).catch((err: Error) => fail(err.message));
    process.stdout.write(
      `assigned ${done.threads} threads and ${done.runs} runs without an owner to ${owner}\n`,
    );
    return;
  }
  const { configPath, fromEnv, fromFlags, level, grace } = commandLine;
  const logger = createLogger(level);

  let server: RunningServer;
  try {
    const { startServer } = await import("./server.js");
    server = await startServer({
      configPath,
      overrides: [fromEnv, fromFlags],
      logger,
      shutdownGraceMs: grace * 1000,
      // A person reads a terminal: one short line per request (a collector gets JSON lines).
      compactRequestLog: process.stdout.isTTY === true,
    });
  } catch (err) {
    if (err instanceof ConfigFileUnreadable) usage(err.message);
    fail((err as Error).message);
  }
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) {
      // The operator does not want to wait (a second Ctrl-C): runs still executing are left
      // as they are, and the next start ends them as interrupted by a restart.
      logger.warn({ signal }, "second signal during shutdown: exiting at once");
      process.exit(1);
    }
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
  // Announced once the signals are handled: whoever waits for this line may stop the server
  // right away, and a SIGTERM before the handlers would kill it without its shutdown.
  releaseAfterStartUp();
  logger.info(startupSummary(server), "acp-agui listening");
  const { settings } = server;
  if (settings.auth.keys.length === 0 && !LOOPBACK.test(settings.host)) {
    logger.warn(
      { host: settings.host },
      "no API keys configured: anyone who reaches this address can use every agent",
    );
  }
}

/** Flags and environment, checked; "help" when the user asked for the usage. */
function settingsFromCommandLine(args: string[], env: NodeJS.ProcessEnv) {
  const flags = parseCommandLine(args);
  if (flags.help) return "help" as const;
  if (flags.version) return "version" as const;
  if (flags.command === "assign-owner") {
    const database = flags.db ?? (env.DATABASE_URL || undefined);
    if (!database) throw new UsageError("assign-owner needs --db PATH|URL (or DATABASE_URL)");
    if (flags.owner === undefined)
      throw new UsageError("assign-owner needs --owner key:NAME|user:ID");
    const owner = parsePrincipalId(flags.owner);
    if (owner === null) {
      throw new UsageError(
        `--owner must be key:NAME (an API key's name) or user:ID (a token's user id), got "${flags.owner}"`,
      );
    }
    const assign: { assign: true; database: string; owner: string } = {
      assign: true,
      database,
      owner,
    };
    return assign;
  }
  const configPath = flags.config ?? env.ACP_AGUI_CONFIG;
  if (!configPath)
    throw new UsageError("no config file: pass --config FILE or set ACP_AGUI_CONFIG");

  const fromEnv: Partial<ServerSettings> = {
    port: integerArg("PORT", env.PORT, MAX_PORT),
    host: env.HOST || undefined,
    database: env.DATABASE_URL || undefined,
    logLevel: logLevelArg("LOG_LEVEL", env.LOG_LEVEL),
    auth: { keys: keysFromEnv(env.ACP_AGUI_API_KEYS) ?? [] },
  };
  const fromFlags: Partial<ServerSettings> = {
    port: integerArg("--port", flags.port, MAX_PORT),
    host: flags.host,
    database: flags.db,
    logLevel: logLevelArg("--log-level", flags.logLevel),
  };
  const level = fromFlags.logLevel ?? fromEnv.logLevel ?? "info";
  const grace =
    integerArg("--grace", flags.grace) ??
    integerArg("SHUTDOWN_GRACE_SECONDS", env.SHUTDOWN_GRACE_SECONDS) ??
    10;
  return { configPath, fromEnv, fromFlags, level, grace };
}

main().catch((err: unknown) => {
  // Whatever went wrong, the user gets one line, not a stack trace.
  fail(err instanceof Error ? err.message : String(err));
});
