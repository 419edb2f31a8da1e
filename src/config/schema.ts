/**
 * The config file: its JSON Schema (what the loader validates, and what an editor can use for
 * completion) and the TypeScript shapes of the file as written and of the config once loaded.
 *
 * Every object in the schema is closed (`additionalProperties: false`) so that a misspelt key is
 * an error rather than a silently ignored setting. The only open objects are user JSON Schemas
 * under `specs` and the `headers` map.
 *
 * `x-expected` is our own annotation: a human phrase for what a value must be, used by the
 * loader's error messages where Ajv's own wording would be unhelpful (patterns, `anyOf`).
 */

import {
  RETENTION_DEFAULTS,
  type RetentionSettings,
  retentionConfigSchema,
} from "../retention/settings.js";

export const ADAPTER_TYPES = ["echo", "scripted", "agui-http", "openai", "module"] as const;
export type AdapterType = (typeof ADAPTER_TYPES)[number];

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

const nonNegativeInteger = { type: "integer", minimum: 0 } as const;
const envName = {
  type: "string",
  pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
  "x-expected": "an environment variable name (letters, digits, _)",
} as const;

/** Shorter API keys are refused at start-up: they could be guessed. */
export const MIN_API_KEY_LENGTH = 16;
const positiveInteger = { type: "integer", minimum: 1 } as const;
const httpUrl = {
  type: "string",
  format: "uri",
  pattern: "^https?://",
  "x-expected": "an http:// or https:// URL",
} as const;
/**
 * Where the inspector is served: one or more path segments, no trailing slash, and not under a
 * path of the API itself (the inspector's routes would shadow or clash with it).
 */
const inspectorPath = {
  type: "string",
  pattern:
    "^/(?!(agents|threads|runs|ag-ui|schemas|healthz|readyz|metrics|openapi\\.json)(/|$))[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*$",
  "x-expected":
    "a path such as /ui (no trailing slash, not under /agents, /threads, /runs, /ag-ui, /schemas, /metrics or the probes)",
} as const;
/** A user JSON Schema (OpenAPI 3.1 schema object): any object, checked later by the registry. */
const userSchema = { type: "object", "x-expected": "a JSON Schema object" } as const;

const eventList = {
  type: "array",
  items: {
    type: "object",
    required: ["type"],
    properties: { type: { type: "string" } },
    "x-expected": "an AG-UI event object with a `type`",
  },
} as const;

const scriptSource = {
  "x-expected":
    "a file path, an array of AG-UI events, or an object with a `stream` array of AG-UI events",
  anyOf: [
    { type: "string", minLength: 1 },
    eventList,
    {
      type: "object",
      additionalProperties: false,
      required: ["stream"],
      properties: { stream: eventList },
    },
  ],
} as const;

/** The options of each adapter type, each closed and including its own `type`. */
export const adapterOptionSchemas = {
  echo: {
    type: "object",
    additionalProperties: false,
    properties: { type: { const: "echo" }, delayMs: nonNegativeInteger },
  },
  scripted: {
    type: "object",
    additionalProperties: false,
    properties: {
      type: { const: "scripted" },
      script: scriptSource,
      segments: { type: "array", minItems: 1, items: scriptSource },
      delayMs: nonNegativeInteger,
    },
  },
  "agui-http": {
    type: "object",
    additionalProperties: false,
    required: ["url"],
    properties: {
      type: { const: "agui-http" },
      url: httpUrl,
      headers: { type: "object", additionalProperties: { type: "string" } },
      connectTimeoutMs: nonNegativeInteger,
      idleTimeoutMs: nonNegativeInteger,
      protocol: { enum: ["sse", "proto"] },
      stopUrl: {
        type: "string",
        format: "uri-template",
        pattern: "^https?://",
        "x-expected": "an http:// or https:// URL ({threadId} and {runId} are replaced)",
      },
    },
  },
  openai: {
    type: "object",
    additionalProperties: false,
    required: ["baseUrl", "model"],
    properties: {
      type: { const: "openai" },
      baseUrl: httpUrl,
      model: { type: "string", minLength: 1 },
      apiKeyEnv: {
        type: "string",
        pattern: "^[A-Za-z_][A-Za-z0-9_]*$",
        "x-expected": "an environment variable name (letters, digits, _)",
      },
      systemPrompt: { type: "string" },
      temperature: { type: "number", minimum: 0, maximum: 2 },
      maxTokens: positiveInteger,
      topP: { type: "number", minimum: 0, maximum: 1 },
    },
  },
  module: {
    type: "object",
    additionalProperties: false,
    required: ["path"],
    properties: {
      type: { const: "module" },
      path: { type: "string", minLength: 1 },
      export: { type: "string", minLength: 1 },
    },
  },
} as const satisfies Record<AdapterType, object>;

/**
 * `type` is checked first (enum), then exactly one `if`/`then` applies the options of that
 * type. Unlike a `oneOf`, this yields errors from the matching branch only.
 */
const adapterSchema = {
  type: "object",
  required: ["type"],
  properties: { type: { enum: ADAPTER_TYPES } },
  allOf: ADAPTER_TYPES.map((type) => ({
    if: { required: ["type"], properties: { type: { const: type } } },
    // biome-ignore lint/suspicious/noThenProperty: `then` is the JSON Schema keyword, not a thenable.
    then: adapterOptionSchemas[type],
  })),
};

const capabilitiesSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    threads: { type: "boolean" },
    interrupts: { type: "boolean" },
    callbacks: { type: "boolean" },
    streaming: {
      type: "object",
      additionalProperties: false,
      properties: { values: { type: "boolean" }, custom: { type: "boolean" } },
    },
  },
} as const;

const specsSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    capabilities: capabilitiesSchema,
    input: userSchema,
    output: userSchema,
    config: userSchema,
    thread_state: userSchema,
    custom_streaming_update: userSchema,
    interrupt_payload: userSchema,
    resume_payload: userSchema,
    interrupts: {
      type: "array",
      items: {
        type: "object",
        additionalProperties: false,
        required: ["interrupt_type"],
        properties: {
          interrupt_type: { type: "string", minLength: 1 },
          interrupt_payload: userSchema,
          resume_payload: userSchema,
        },
      },
    },
  },
} as const;

const agentSchema = {
  type: "object",
  additionalProperties: false,
  required: ["name", "version", "description", "adapter"],
  properties: {
    name: {
      type: "string",
      pattern: "^[^\\s@/]+$",
      "x-expected": "a non-empty name without whitespace, '@' or '/'",
    },
    version: {
      type: "string",
      pattern: "^\\S+$",
      "x-expected": "a non-empty version without whitespace, such as 1.0.0",
    },
    description: { type: "string" },
    adapter: adapterSchema,
    specs: specsSchema,
    limits: {
      type: "object",
      additionalProperties: false,
      properties: {
        runTimeoutSeconds: { type: "number", minimum: 0 },
        maxConcurrentRuns: positiveInteger,
        maxQueuedRuns: nonNegativeInteger,
      },
    },
    retryOnRestart: { type: "boolean" },
    events: {
      type: "object",
      additionalProperties: false,
      properties: { dropRaw: { type: "boolean" } },
    },
  },
};

/** JSON Schema (2020-12) of the whole config file. */
export const configFileSchema = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  title: "acp-agui config file",
  type: "object",
  additionalProperties: false,
  required: ["agents"],
  properties: {
    server: {
      type: "object",
      additionalProperties: false,
      properties: {
        port: { type: "integer", minimum: 0, maximum: 65535 },
        host: { type: "string", minLength: 1 },
        database: { type: "string", minLength: 1 },
        keepAliveSeconds: { type: "number", minimum: 0 },
        maxConcurrentRuns: positiveInteger,
        leaseSeconds: { type: "number", exclusiveMinimum: 0 },
        webhooks: {
          type: "object",
          additionalProperties: false,
          properties: {
            allowPrivateTargets: { type: "boolean" },
            maxAttempts: positiveInteger,
          },
        },
        logLevel: { enum: LOG_LEVELS },
        auth: {
          type: "object",
          additionalProperties: false,
          properties: {
            keys: {
              type: "array",
              items: {
                type: "object",
                additionalProperties: false,
                required: ["name"],
                properties: {
                  // Length is checked by the loader, whose message never quotes the key.
                  key: { type: "string" },
                  keyEnv: envName,
                  name: { type: "string", minLength: 1 },
                  agents: { type: "array", items: { type: "string", minLength: 1 } },
                  admin: { type: "boolean" },
                },
              },
            },
            jwt: {
              type: "object",
              additionalProperties: false,
              required: ["issuer", "audience"],
              properties: {
                issuer: { type: "string", minLength: 1 },
                audience: {
                  "x-expected": "a string or a list of strings",
                  anyOf: [
                    { type: "string", minLength: 1 },
                    { type: "array", minItems: 1, items: { type: "string", minLength: 1 } },
                  ],
                },
                jwksUrl: httpUrl,
                publicKey: {
                  type: "string",
                  pattern: "-----BEGIN PUBLIC KEY-----",
                  "x-expected": "a PEM public key (-----BEGIN PUBLIC KEY----- …)",
                },
                algorithms: { type: "array", minItems: 1, items: { type: "string", minLength: 1 } },
                userClaim: { type: "string", minLength: 1 },
                agentsClaim: { type: "string", minLength: 1 },
                clockToleranceSeconds: { type: "number", minimum: 0 },
              },
            },
          },
        },
        cors: {
          type: "object",
          additionalProperties: false,
          properties: {
            origins: {
              type: "array",
              items: {
                type: "string",
                pattern: "^(\\*|https?://[^/\\s]+)$",
                "x-expected": 'an origin such as https://app.example.com (no path), or "*"',
              },
            },
          },
        },
        metrics: {
          type: "object",
          additionalProperties: false,
          properties: { enabled: { type: "boolean" }, public: { type: "boolean" } },
        },
        inspector: {
          type: "object",
          additionalProperties: false,
          properties: { enabled: { type: "boolean" }, path: inspectorPath },
        },
        copilotkit: {
          type: "object",
          additionalProperties: false,
          properties: {
            enabled: { type: "boolean" },
            basePath: {
              type: "string",
              // Not under a path the server's own routes use.
              pattern:
                "^/(?!(agents|threads|runs|ag-ui|schemas|healthz|readyz|metrics|openapi\\.json)(/|$))[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*$",
              "x-expected":
                "a path such as /copilotkit (no trailing slash, not under /agents, /threads, /runs, /ag-ui, /schemas, /metrics or the probes)",
            },
          },
        },
        rateLimit: {
          type: "object",
          additionalProperties: false,
          properties: {
            max: nonNegativeInteger,
            windowSeconds: { type: "number", exclusiveMinimum: 0 },
          },
        },
        limits: {
          type: "object",
          additionalProperties: false,
          properties: {
            maxBodyBytes: { type: "integer", minimum: 1024 },
            maxJsonDepth: positiveInteger,
            maxStringLength: positiveInteger,
            maxOpenStreams: nonNegativeInteger,
            maxEventsPerRun: nonNegativeInteger,
          },
        },
        retention: retentionConfigSchema,
      },
    },
    agents: { type: "array", minItems: 1, items: agentSchema },
  },
};

// ---------------------------------------------------------------------------------------------
// The file as written (after schema validation).

/** A JSON Schema / OpenAPI 3.1 schema object, as given by the user. */
export type JsonSchemaObject = Record<string, unknown>;

/** One AG-UI event as written in a script (only `type` is checked at load time). */
export type ScriptEvent = Record<string, unknown> & { type: string };
export type ScriptSourceInput = string | ScriptEvent[] | { stream: ScriptEvent[] };

export interface CapabilityOverrides {
  threads?: boolean;
  interrupts?: boolean;
  callbacks?: boolean;
  streaming?: { values?: boolean; custom?: boolean };
}

/** `specs` as written: every key optional, deep-merged over the defaults by the registry. */
export interface AgentSpecsOverrides {
  capabilities?: CapabilityOverrides;
  input?: JsonSchemaObject;
  output?: JsonSchemaObject;
  config?: JsonSchemaObject;
  thread_state?: JsonSchemaObject;
  custom_streaming_update?: JsonSchemaObject;
  /** Shorthand: the interrupt payload schema of every interrupt type. */
  interrupt_payload?: JsonSchemaObject;
  /** Shorthand: the resume payload schema of every interrupt type. */
  resume_payload?: JsonSchemaObject;
  /** ACP's own form: one entry per interrupt type (AG-UI `reason`). */
  interrupts?: {
    interrupt_type: string;
    interrupt_payload?: JsonSchemaObject;
    resume_payload?: JsonSchemaObject;
  }[];
}

// ---------------------------------------------------------------------------------------------
// The config once loaded: defaults filled, paths resolved, env references expanded.

export interface ServerConfig {
  port: number;
  host: string;
  /** As written: a SQLite path (relative to the working directory), ":memory:" or a URL. */
  database: string;
  /** Seconds between SSE keep-alive comment lines (see src/http/sse.ts); 0 turns them off. */
  keepAliveSeconds: number;
  /** Runs executing at once across all agents. */
  maxConcurrentRuns: number;
  /** How long a replica's claim on a run holds unrenewed (replicas on a shared database). */
  leaseSeconds: number;
  webhooks: { allowPrivateTargets: boolean; maxAttempts: number };
  logLevel: LogLevel;
  /** Keys resolved (`keyEnv` read); agents checked against the config's agent names. */
  auth: AuthSettings;
  /** Browser origins allowed by CORS; empty = CORS off. `"*"` allows any origin. */
  cors: { origins: string[] };
  /** `GET /metrics`: served at all, and served without an API key when auth is on. */
  metrics: { enabled: boolean; public: boolean };
  /** The browser inspector: served at all, and at which path. */
  inspector: { enabled: boolean; path: string };
  /** CopilotKit's runtime protocol (REST mode) under `basePath`, for CopilotKit apps. */
  copilotkit: CopilotKitSettings;
  /** Requests per window and client (API key, or IP without one); `max: 0` = off. */
  rateLimit: { max: number; windowSeconds: number };
  limits: RequestLimits;
  /** What the retention sweeps remove, and when (see docs/storage.md). */
  retention: RetentionSettings;
}

export interface CopilotKitSettings {
  enabled: boolean;
  /** The app's `runtimeUrl` is this server's origin followed by this path. */
  basePath: string;
}

/**
 * One API key. `agents` (names) restricts what the key may use; absent = every agent. An
 * `admin` key reaches every principal's threads and runs; any other key only its own.
 */
export interface ApiKey {
  key: string;
  name: string;
  agents?: string[];
  admin?: boolean;
}

/**
 * End users' bearer tokens (JWTs) from one issuer. Exactly one of `jwksUrl` (the issuer's key
 * set, fetched and cached) and `publicKey` (a PEM key) checks the signature.
 */
export interface JwtSettings {
  issuer: string;
  audience: string | string[];
  jwksUrl?: string;
  publicKey?: string;
  /** Allowed `alg` values; default: whatever the key supports. */
  algorithms?: string[];
  /** The claim holding the user id (default `sub`). */
  userClaim: string;
  /** A claim listing the agent names the user may use; absent = every agent. */
  agentsClaim?: string;
  /** Leeway for `exp`/`nbf` against clock skew (default 0). */
  clockToleranceSeconds?: number;
}

export interface AuthSettings {
  keys: ApiKey[];
  /** When set, bearer tokens from this issuer are accepted as end users. */
  jwt?: JwtSettings;
}

export interface RequestLimits {
  /** Largest accepted request body (413 beyond). */
  maxBodyBytes: number;
  /** Deepest nesting of objects and arrays in a JSON body (422 beyond). */
  maxJsonDepth: number;
  /** Longest string (value or key) in a JSON body, in characters (422 beyond). */
  maxStringLength: number;
  /** SSE and AG-UI streams open at once (429 beyond). */
  maxOpenStreams: number;
  /** Events one adapter stream (a run's start or one resume) may yield; 0 = no limit. */
  maxEventsPerRun: number;
}

export const DEFAULT_LIMITS: RequestLimits = {
  maxBodyBytes: 1024 * 1024,
  maxJsonDepth: 64,
  maxStringLength: 512 * 1024,
  maxOpenStreams: 1000,
  maxEventsPerRun: 100_000,
};

export const SERVER_DEFAULTS: ServerConfig = {
  port: 8000,
  host: "127.0.0.1",
  database: "./data/acp-agui.db",
  keepAliveSeconds: 15,
  maxConcurrentRuns: 64,
  leaseSeconds: 15,
  webhooks: { allowPrivateTargets: false, maxAttempts: 5 },
  logLevel: "info",
  auth: { keys: [] },
  cors: { origins: [] },
  metrics: { enabled: true, public: false },
  inspector: { enabled: true, path: "/ui" },
  copilotkit: { enabled: true, basePath: "/copilotkit" },
  rateLimit: { max: 0, windowSeconds: 60 },
  limits: DEFAULT_LIMITS,
  retention: RETENTION_DEFAULTS,
};

export interface AgentLimits {
  /** Wall-clock limit of one run (all its segments' execution); 0 = no limit. */
  runTimeoutSeconds: number;
  /** Runs of this agent executing at once. */
  maxConcurrentRuns: number;
  /** Runs of this agent waiting for a slot; beyond this, new runs are refused. */
  maxQueuedRuns: number;
}

/** What of an agent's events is kept (stored and streamed). */
export interface AgentEventOptions {
  /**
   * Drop RAW events and the `rawEvent` field of every event: the provider-native payloads an
   * agent relays for debugging, which can outweigh the content many times over.
   */
  dropRaw: boolean;
}

export const EVENT_DEFAULTS: AgentEventOptions = { dropRaw: false };

export const LIMIT_DEFAULTS: AgentLimits = {
  runTimeoutSeconds: 300,
  maxConcurrentRuns: 8,
  maxQueuedRuns: 1000,
};

/** A script: a file (absolute path; JSON, checked to exist and parse) or events given inline. */
export type ScriptSource =
  | { kind: "file"; path: string }
  | { kind: "inline"; events: ScriptEvent[] };

export interface EchoAdapterConfig {
  type: "echo";
  delayMs: number;
}

export interface ScriptedAdapterConfig {
  type: "scripted";
  /**
   * One script per AG-UI run segment: the first start plays `segments[0]`, each resume the
   * next. A config `script: X` is loaded as `segments: [X]`.
   */
  segments: ScriptSource[];
  delayMs: number;
}

export interface AguiHttpAdapterConfig {
  type: "agui-http";
  url: string;
  /** `${ENV}` references already expanded. */
  headers: Record<string, string>;
  connectTimeoutMs: number;
  /** Longest silence between events before the run fails; 0 = no limit. */
  idleTimeoutMs: number;
  protocol: "sse" | "proto";
  /**
   * Where to POST `{runId}` when a run is stopped before it ends; `{threadId}` and
   * `{runId}` in it are replaced. For remotes that keep a run going after its client leaves.
   */
  stopUrl?: string;
}

export interface OpenAiAdapterConfig {
  type: "openai";
  baseUrl: string;
  model: string;
  /** Name of the environment variable holding the API key (read by the adapter, not here). */
  apiKeyEnv?: string;
  systemPrompt?: string;
  temperature?: number;
  maxTokens?: number;
  topP?: number;
}

export interface ModuleAdapterConfig {
  type: "module";
  /** As written in the config. */
  path: string;
  /** What to `import()`: a `file://` URL for a file path, else the package name as written. */
  specifier: string;
  /** The named export holding the adapter (default `"default"`). */
  export: string;
}

export type AdapterConfig =
  | EchoAdapterConfig
  | ScriptedAdapterConfig
  | AguiHttpAdapterConfig
  | OpenAiAdapterConfig
  | ModuleAdapterConfig;

export const ADAPTER_DEFAULTS = {
  delayMs: 0,
  connectTimeoutMs: 10_000,
  idleTimeoutMs: 300_000,
  protocol: "sse",
  export: "default",
} as const;

export interface AgentConfig {
  name: string;
  version: string;
  description: string;
  adapter: AdapterConfig;
  /** As written (`{}` when absent); the registry merges it over the defaults. */
  specs: AgentSpecsOverrides;
  limits: AgentLimits;
  /** Re-queue this agent's runs interrupted by a server restart instead of failing them. */
  retryOnRestart: boolean;
  events: AgentEventOptions;
  /** Position in the config's `agents` list (for messages). */
  index: number;
}

/** A path of keys and indexes into the config document. */
export type KeyPath = readonly (string | number)[];

export interface SourcePosition {
  line: number;
  column: number;
}

export interface LoadedConfig {
  /** The file name as given to the loader, used in messages. */
  file: string;
  /** Absolute directory that relative paths under `agents` were resolved against. */
  baseDir: string;
  server: ServerConfig;
  agents: AgentConfig[];
  /**
   * Line and column (1-based) of a key path in the file (the nearest existing ancestor when
   * the path itself is absent), or null when positions are unknown. The registry uses it for
   * errors it finds after loading.
   */
  locate(path: KeyPath, at?: "key" | "value"): SourcePosition | null;
}
