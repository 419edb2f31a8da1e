import { parseArgs } from "node:util";
import { LOG_LEVELS, type LogLevel } from "../config/settings.js";

export const CLI_OPTIONS = {
  config: { type: "string", short: "c" },
  port: { type: "string", short: "p" },
  host: { type: "string" },
  db: { type: "string" },
  "log-level": { type: "string" },
  grace: { type: "string" },
  owner: { type: "string" },
  help: { type: "boolean", short: "h" },
  version: { type: "boolean", short: "v" },
} as const;

type OptionName = keyof typeof CLI_OPTIONS;

/** Names people reach for that are spelt differently here. */
const ALIASES: Record<string, OptionName> = {
  database: "db",
  "db-path": "db",
  loglevel: "log-level",
  log_level: "log-level",
  level: "log-level",
  "shutdown-grace": "grace",
};

/** A mistake in how the command was called: one line for the user, who then sees the usage. */
export class UsageError extends Error {
  override name = "UsageError";
}

export interface CommandLine {
  help: boolean;
  /** `--version`: print the package's version and exit. */
  version?: boolean;
  command?: "serve" | "assign-owner";
  owner?: string;
  config?: string;
  port?: string;
  host?: string;
  db?: string;
  logLevel?: string;
  grace?: string;
}

/** The command line, checked: an unknown flag, a flag without its value or a stray argument is a UsageError. */
export function parseCommandLine(args: string[]): CommandLine {
  let parsed: ReturnType<typeof parseStrict>;
  try {
    parsed = parseStrict(args);
  } catch (err) {
    throw new UsageError(describeParseError(args, err));
  }
  const { values, positionals } = parsed;
  if (values.help) return { help: true };
  if (values.version) return { help: false, version: true };
  const [command = "serve", ...extra] = positionals;
  if (command !== "serve" && command !== "assign-owner") {
    throw new UsageError(`unknown command "${command}" (the commands are serve and assign-owner)`);
  }
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  for (const [name, value] of Object.entries(values)) {
    if (value === "") throw new UsageError(`--${name} needs a value`);
  }
  if (command === "serve" && values.owner !== undefined) {
    throw new UsageError("--owner belongs to assign-owner, not serve");
  }
  return {
    help: false,
    command,
    owner: values.owner,
    config: values.config,
    port: values.port,
    host: values.host,
    db: values.db,
    logLevel: values["log-level"],
    grace: values.grace,
  };
}

/** A non-negative integer from a flag or an environment variable; absent or empty is undefined. */
export function integerArg(
  name: string,
  value: string | undefined,
  max = Number.MAX_SAFE_INTEGER,
): number | undefined {
  if (value === undefined || value === "") return undefined;
  const parsed = /^\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed) || parsed > max) {
    const range =
      max === Number.MAX_SAFE_INTEGER ? "a non-negative integer" : `an integer 0–${max}`;
    throw new UsageError(`${name} must be ${range} (got "${value}")`);
  }
  return parsed;
}

/** A log level from a flag or an environment variable; absent or empty is undefined. */
export function logLevelArg(name: string, value: string | undefined): LogLevel | undefined {
  if (value === undefined || value === "") return undefined;
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new UsageError(`${name} must be one of ${LOG_LEVELS.join(", ")} (got "${value}")`);
  }
  return value as LogLevel;
}

function parseStrict(args: string[]) {
  return parseArgs({ args, options: CLI_OPTIONS, allowPositionals: true, strict: true });
}

/**
 * Node's parseArgs messages are long and speak of its own API; this finds the offending
 * argument again (a lenient parse keeps every token) and names it the way a user typed it.
 */
function describeParseError(args: string[], err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code !== "string" || !code.startsWith("ERR_PARSE_ARGS_")) throw err;
  const { tokens } = parseArgs({
    args,
    options: CLI_OPTIONS,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  for (const token of tokens) {
    if (token.kind !== "option") continue;
    const spec = (CLI_OPTIONS as Record<string, { type: string }>)[token.name];
    if (!spec) return unknownOption(token.rawName, token.name);
    if (spec.type === "string") {
      if (token.value === undefined) return `${token.rawName} needs a value`;
      if (!token.inlineValue && token.value.startsWith("-")) {
        return `${token.rawName} needs a value, and "${token.value}" looks like an option (write ${token.rawName}=${token.value} if it is the value)`;
      }
    } else if (token.value !== undefined) {
      return `${token.rawName} takes no value`;
    }
  }
  return (err as Error).message.split("\n")[0]!;
}

function unknownOption(rawName: string, name: string): string {
  const suggestion = ALIASES[name] ?? closestOption(name);
  return suggestion
    ? `unknown option ${rawName} (did you mean --${suggestion}?)`
    : `unknown option ${rawName}`;
}

/** A known option within two edits (one for a three-letter name), or one the name begins. */
function closestOption(name: string): OptionName | undefined {
  if (name.length < 3) return undefined;
  let best: OptionName | undefined;
  let bestDistance = name.length >= 4 ? 3 : 2;
  for (const option of Object.keys(CLI_OPTIONS) as OptionName[]) {
    if (option.startsWith(name)) return option;
    const distance = editDistance(name, option);
    if (distance < bestDistance) {
      best = option;
      bestDistance = distance;
    }
  }
  return best;
}

/** Levenshtein distance; the names are a few characters long. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min(previous[j]! + 1, current[j - 1]! + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length]!;
}
