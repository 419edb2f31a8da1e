import { createHash } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { dirname, isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { A2A_DEFAULTS, type A2aAdapterConfig } from "../adapters/a2a-options.js";
import { AGUI_HTTP_DEFAULTS, type AguiHttpAdapterConfig } from "../adapters/agui-http-options.js";
import { ECHO_DEFAULTS } from "../adapters/echo-options.js";
import { MODULE_DEFAULTS } from "../adapters/module-options.js";
import type { OpenAiAdapterConfig } from "../adapters/openai-options.js";
import {
  SCRIPTED_DEFAULTS,
  type ScriptEvent,
  type ScriptSource,
  type ScriptSourceInput,
} from "../adapters/scripted-options.js";
import { configSchemaDigest, validateConfigFile } from "../validation/config-file.js";
import { ajvIssues } from "./ajv-issues.js";
import { ConfigError, ConfigFileUnreadable } from "./errors.js";
import { issue, type ResolveContext } from "./resolve-context.js";
import { type RawServer, resolveServer } from "./resolve-server.js";
import {
  type AdapterConfig,
  type AgentConfig,
  type AgentEventOptions,
  type AgentLimits,
  type AgentSpecsOverrides,
  configFileSchema,
  EVENT_DEFAULTS,
  type KeyPath,
  LIMIT_DEFAULTS,
  type LoadedConfig,
} from "./schema.js";
import { type ConfigFormat, formatFromFilename, parseSource } from "./source.js";

export interface LoadOptions {
  /** Environment for `${VAR}` references in headers (default `process.env`). */
  env?: Record<string, string | undefined>;
}

export interface ParseOptions extends LoadOptions {
  /** Name used in messages; its directory is the base for relative paths unless `baseDir`. */
  filename: string;
  /** Default: from the filename (`.json` → json, else yaml). */
  format?: ConfigFormat;
  baseDir?: string;
}

/** Reads, validates and resolves a config file. Throws ConfigError listing every problem. */
export async function loadConfig(
  filePath: string,
  options: LoadOptions = {},
): Promise<LoadedConfig> {
  let text: string;
  try {
    text = await readFile(filePath, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const message =
      code === "ENOENT"
        ? `config file not found (looked for ${resolve(filePath)})`
        : code === "EISDIR"
          ? "this is a directory, not a config file"
          : `config file could not be read: ${(err as Error).message}`;
    throw new ConfigFileUnreadable(filePath, message);
  }
  return parseConfig(text, { ...options, filename: filePath });
}

/** Like `loadConfig` for text already in hand (tests, stdin). */
export async function parseConfig(text: string, options: ParseOptions): Promise<LoadedConfig> {
  const file = options.filename;
  const format = options.format ?? formatFromFilename(file);
  const { data, locate } = parseSource(text, file, format);
  if (data === null || data === undefined) {
    throw new ConfigError(file, [
      {
        path: [],
        message: "the file is empty; a config needs at least an `agents` list",
        position: null,
      },
    ]);
  }

  const validate = configValidator();
  if (!validate(data)) {
    throw new ConfigError(
      file,
      ajvIssues(validate.errors ?? [], data, { locate, yaml: format === "yaml" }),
    );
  }

  const raw = data as RawConfig;
  const context: ResolveContext = {
    baseDir: options.baseDir ?? dirname(resolve(file)),
    env: options.env ?? process.env,
    issues: [],
    locate,
  };
  const agents: AgentConfig[] = [];
  for (const [index, agent] of raw.agents.entries()) {
    agents.push(await resolveAgent(agent, index, context));
  }
  reportDuplicates(agents, context);
  if (context.issues.length > 0) throw new ConfigError(file, context.issues);

  const server = resolveServer(raw.server, agents, context);
  if (context.issues.length > 0) throw new ConfigError(file, context.issues);

  return { file, baseDir: context.baseDir, server, agents, locate };
}

let checked = false;

/**
 * The config schema's validator, precompiled by `npm run generate`: compiling it here cost some
 * 11 MB of allocations at every start, which grew V8's young generation for good. A validator
 * built from another version of the schema (edited since) would accept the wrong files.
 */
function configValidator() {
  if (!checked) {
    const digest = createHash("sha256").update(JSON.stringify(configFileSchema)).digest("hex");
    if (digest !== configSchemaDigest) {
      throw new Error(
        "the precompiled config validator is out of date with src/config/schema.ts: run `npm run generate`",
      );
    }
    checked = true;
  }
  return validateConfigFile;
}

// The file's shape once the schema has passed (only what resolving reads).
interface RawConfig {
  server?: RawServer;
  agents: RawAgent[];
}

interface RawAgent {
  name: string;
  version: string;
  description: string;
  adapter: RawAdapter;
  specs?: AgentSpecsOverrides;
  limits?: Partial<AgentLimits>;
  retryOnRestart?: boolean;
  events?: Partial<AgentEventOptions>;
}

type RawAdapter =
  | { type: "echo"; delayMs?: number }
  | {
      type: "scripted";
      script?: ScriptSourceInput;
      segments?: ScriptSourceInput[];
      delayMs?: number;
    }
  | (Partial<Omit<AguiHttpAdapterConfig, "url">> & { type: "agui-http"; url: string })
  | OpenAiAdapterConfig
  | { type: "module"; path: string; export?: string }
  | (Partial<Omit<A2aAdapterConfig, "url">> & { type: "a2a"; url: string });

async function resolveAgent(
  raw: RawAgent,
  index: number,
  context: ResolveContext,
): Promise<AgentConfig> {
  return {
    name: raw.name,
    version: raw.version,
    description: raw.description,
    adapter: await resolveAdapter(raw.adapter, ["agents", index, "adapter"], context),
    specs: raw.specs ?? {},
    limits: { ...LIMIT_DEFAULTS, ...raw.limits },
    retryOnRestart: raw.retryOnRestart ?? false,
    events: { ...EVENT_DEFAULTS, ...raw.events },
    index,
  };
}

async function resolveAdapter(
  raw: RawAdapter,
  at: KeyPath,
  context: ResolveContext,
): Promise<AdapterConfig> {
  switch (raw.type) {
    case "echo":
      return { type: "echo", delayMs: raw.delayMs ?? ECHO_DEFAULTS.delayMs };
    case "scripted":
      return {
        type: "scripted",
        segments: await resolveSegments(raw.script, raw.segments, at, context),
        delayMs: raw.delayMs ?? SCRIPTED_DEFAULTS.delayMs,
      };
    case "agui-http":
      return {
        type: "agui-http",
        url: raw.url,
        headers: expandHeaders(raw.headers ?? {}, [...at, "headers"], context),
        connectTimeoutMs: raw.connectTimeoutMs ?? AGUI_HTTP_DEFAULTS.connectTimeoutMs,
        idleTimeoutMs: raw.idleTimeoutMs ?? AGUI_HTTP_DEFAULTS.idleTimeoutMs,
        protocol: raw.protocol ?? AGUI_HTTP_DEFAULTS.protocol,
        ...(raw.stopUrl ? { stopUrl: raw.stopUrl } : {}),
        ...(raw.threadIdPrefix ? { threadIdPrefix: raw.threadIdPrefix } : {}),
      };
    case "openai":
      return { ...raw };
    case "a2a":
      return {
        ...A2A_DEFAULTS,
        ...raw,
        headers: expandHeaders(raw.headers ?? {}, [...at, "headers"], context),
      };
    case "module":
      return {
        type: "module",
        path: raw.path,
        specifier: await resolveModule(raw.path, [...at, "path"], context),
        export: raw.export ?? MODULE_DEFAULTS.export,
      };
  }
}

async function resolveSegments(
  script: ScriptSourceInput | undefined,
  segments: ScriptSourceInput[] | undefined,
  at: KeyPath,
  context: ResolveContext,
): Promise<ScriptSource[]> {
  if (script !== undefined && segments !== undefined) {
    issue(context, at, "has both `script` and `segments`: give one (`script` is one segment)");
    return [];
  }
  if (script !== undefined) return [await resolveScript(script, [...at, "script"], context)];
  if (segments !== undefined) {
    const out: ScriptSource[] = [];
    for (const [i, segment] of segments.entries()) {
      out.push(await resolveScript(segment, [...at, "segments", i], context));
    }
    return out;
  }
  issue(context, at, "needs `script` (one run) or `segments` (one script per run segment)");
  return [];
}

async function resolveScript(
  source: ScriptSourceInput,
  at: KeyPath,
  context: ResolveContext,
): Promise<ScriptSource> {
  if (Array.isArray(source)) return { kind: "inline", events: source };
  if (typeof source === "object") return { kind: "inline", events: source.stream as ScriptEvent[] };
  const path = resolve(context.baseDir, source);
  let text: string;
  try {
    if (!(await stat(path)).isFile()) {
      issue(context, at, `names ${source}, which is not a file (${path})`);
      return { kind: "file", path };
    }
    text = await readFile(path, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    issue(
      context,
      at,
      code === "ENOENT"
        ? `names script file ${source}, which was not found (looked for ${path})`
        : `names script file ${source}, which could not be read: ${(err as Error).message}`,
    );
    return { kind: "file", path };
  }
  try {
    JSON.parse(text);
  } catch (err) {
    issue(
      context,
      at,
      `names script file ${source}, which is not valid JSON: ${(err as Error).message}`,
    );
  }
  return { kind: "file", path };
}

/**
 * A module path is a file when it starts with `.`, `/` or `file:`, is absolute, or names a
 * file that exists next to the config; anything else is a package name, imported as written.
 */
async function resolveModule(path: string, at: KeyPath, context: ResolveContext): Promise<string> {
  const explicit = path.startsWith(".") || path.startsWith("file:") || isAbsolute(path);
  const absolute = path.startsWith("file:") ? fileURLToPath(path) : resolve(context.baseDir, path);
  const exists = await stat(absolute).then(
    (s) => s.isFile(),
    () => false,
  );
  if (exists) return pathToFileURL(absolute).href;
  if (explicit) {
    issue(context, at, `names module file ${path}, which was not found (looked for ${absolute})`);
    return pathToFileURL(absolute).href;
  }
  return path;
}

const ENV_REFERENCE = /\$(\$?)\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** `${NAME}` → the variable's value; `$${NAME}` → a literal `${NAME}`. */
function expandHeaders(
  headers: Record<string, string>,
  at: KeyPath,
  context: ResolveContext,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    out[name] = value.replace(ENV_REFERENCE, (match, escaped: string, variable: string) => {
      if (escaped) return match.slice(1);
      const found = context.env[variable];
      if (found === undefined) {
        issue(context, [...at, name], `uses environment variable ${variable}, which is not set`);
        return "";
      }
      return found;
    });
  }
  return out;
}

function reportDuplicates(agents: AgentConfig[], context: ResolveContext): void {
  const first = new Map<string, AgentConfig>();
  for (const agent of agents) {
    const key = `${agent.name}@${agent.version}`;
    const earlier = first.get(key);
    if (!earlier) {
      first.set(key, agent);
      continue;
    }
    const where = context.locate(["agents", earlier.index]);
    issue(
      context,
      ["agents", agent.index],
      `repeats ${key}, already registered by agents[${earlier.index}]` +
        (where ? ` (line ${where.line})` : "") +
        ": name@version must be unique (it is the agent id)",
    );
  }
}
