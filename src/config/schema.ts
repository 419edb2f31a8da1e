/**
 * The config file: its JSON Schema (what the loader validates, and what an editor can use for
 * completion) and the TypeScript shapes of the file as written and of the config once loaded.
 * The `server:` section loads into `ServerSettings` (settings.ts, with the one table of
 * defaults); each adapter's option schema and type are declared next to the adapter
 * (src/adapters/*-options.ts) and composed here.
 *
 * Every object in the schema is closed (`additionalProperties: false`) so that a misspelt key is
 * an error rather than a silently ignored setting. The only open objects are user JSON Schemas
 * under `specs` and the `headers` map.
 *
 * `x-expected` is our own annotation: a human phrase for what a value must be, used by the
 * loader's error messages where Ajv's own wording would be unhelpful (patterns, `anyOf`).
 * `x-moved` (on an object) maps a key that an earlier release accepted there to where that
 * setting lives now, so an old config's error says where to move it.
 */

import { type A2aAdapterConfig, a2aOptionsSchema } from "../adapters/a2a-options.js";
import {
  type AguiHttpAdapterConfig,
  aguiHttpOptionsSchema,
} from "../adapters/agui-http-options.js";
import { type EchoAdapterConfig, echoOptionsSchema } from "../adapters/echo-options.js";
import { type ModuleAdapterConfig, moduleOptionsSchema } from "../adapters/module-options.js";
import { type OpenAiAdapterConfig, openAiOptionsSchema } from "../adapters/openai-options.js";
import { type ScriptedAdapterConfig, scriptedOptionsSchema } from "../adapters/scripted-options.js";
import { retentionConfigSchema } from "../retention/settings.js";
import { type AgentA2aOptions, agentA2aSchema } from "./agent-a2a.js";
import { envName, httpUrl, nonNegativeInteger, positiveInteger } from "./schema-fragments.js";
import { LOG_LEVELS, type ServerSettings } from "./settings.js";

export const ADAPTER_TYPES = ["echo", "scripted", "agui-http", "openai", "module", "a2a"] as const;

export type AdapterType = (typeof ADAPTER_TYPES)[number];

/**
 * A path the server serves something under (the inspector, a face): one or more segments, no
 * trailing slash, and not under a path of the ACP face, the AG-UI face's default or the probes
 * (it would shadow or clash). The AG-UI face's own base path may be its default (`ownPath`).
 */
function servedPath(example: string, ownPath?: "ag-ui") {
  const reserved = ["agents", "threads", "runs", "ag-ui", "schemas", "healthz", "readyz", "metrics"]
    .filter((segment) => segment !== ownPath)
    .concat("openapi\\.json");
  const named = ["/agents", "/threads", "/runs", "/ag-ui", "/schemas", "/metrics"]
    .filter((path) => path !== `/${ownPath}`)
    .join(", ");
  return {
    type: "string",
    pattern: `^/(?!(${reserved.join("|")})(/|$))[A-Za-z0-9._~-]+(/[A-Za-z0-9._~-]+)*$`,
    "x-expected": `a path such as ${example} (no trailing slash, not under ${named} or the probes)`,
  } as const;
}

/**
 * A face's settings section (`server.<face>`): on or off, where it is served when it has a path
 * of its own (docs/architecture.md, "Adding a face"), and the face's own settings (`more`).
 */
function faceSection(
  exampleBasePath?: string,
  ownPath?: "ag-ui",
  more: Record<string, object> = {},
) {
  return {
    type: "object",
    additionalProperties: false,
    properties: {
      enabled: { type: "boolean" },
      ...(exampleBasePath ? { basePath: servedPath(exampleBasePath, ownPath) } : {}),
      ...more,
    },
  };
}

/** A user JSON Schema (OpenAPI 3.1 schema object): any object, checked later by the registry. */
const userSchema = { type: "object", "x-expected": "a JSON Schema object" } as const;

/** The options of each adapter type, each closed and including its own `type`. */
export const adapterOptionSchemas = {
  echo: echoOptionsSchema,
  scripted: scriptedOptionsSchema,
  "agui-http": aguiHttpOptionsSchema,
  openai: openAiOptionsSchema,
  module: moduleOptionsSchema,
  a2a: a2aOptionsSchema,
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
        maxEventBytes: nonNegativeInteger,
        maxStateBytes: nonNegativeInteger,
        maxEventDepth: positiveInteger,
      },
    },
    retryOnRestart: { type: "boolean" },
    events: {
      type: "object",
      additionalProperties: false,
      properties: { dropRaw: { type: "boolean" } },
    },
    a2a: agentA2aSchema,
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
        hideInternals: { type: "boolean" },
        webhooks: {
          type: "object",
          additionalProperties: false,
          properties: {
            allowPrivateTargets: { type: "boolean" },
            maxAttempts: positiveInteger,
            timeoutSeconds: { type: "number", exclusiveMinimum: 0, maximum: 300 },
            connectTimeoutSeconds: { type: "number", exclusiveMinimum: 0, maximum: 300 },
            concurrency: { type: "integer", minimum: 1, maximum: 10000 },
            perTargetConcurrency: { type: "integer", minimum: 1, maximum: 10000 },
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
          properties: { enabled: { type: "boolean" }, path: servedPath("/ui") },
        },
        acp: faceSection(),
        agui: faceSection("/ag-ui", "ag-ui"),
        copilotkit: faceSection("/copilotkit"),
        a2a: faceSection("/a2a", undefined, {
          maxPushConfigsPerTask: { type: "integer", minimum: 1, maximum: 1000000 },
          cardMaxAgeSeconds: nonNegativeInteger,
        }),
        mcp: faceSection("/mcp", undefined, {
          allowedOrigins: {
            type: "array",
            items: { type: "string", pattern: "^(\\*|https?://[^/]+)$", maxLength: 300 },
            maxItems: 100,
          },
        }),
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
            maxEventBytes: nonNegativeInteger,
            maxStateBytes: nonNegativeInteger,
            maxEventDepth: positiveInteger,
          },
        },
        retention: retentionConfigSchema,
        telemetry: {
          type: "object",
          additionalProperties: false,
          properties: {
            enabled: { type: "boolean" },
            captureContent: { type: "boolean" },
            serviceName: { type: "string", minLength: 1 },
          },
        },
      },
    },
    agents: { type: "array", minItems: 1, items: agentSchema },
  },
};

// ---------------------------------------------------------------------------------------------
// The file as written (after schema validation).

/** A JSON Schema / OpenAPI 3.1 schema object, as given by the user. */
export type JsonSchemaObject = Record<string, unknown>;

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

export interface AgentLimits {
  /** Wall-clock limit of one run (all its segments' execution); 0 = no limit. */
  runTimeoutSeconds: number;
  /** Runs of this agent executing at once. */
  maxConcurrentRuns: number;
  /** Runs of this agent waiting for a slot; beyond this, new runs are refused. */
  maxQueuedRuns: number;
  /** Overrides `server.limits.maxEventBytes` for this agent. */
  maxEventBytes?: number;
  /** Overrides `server.limits.maxStateBytes` for this agent. */
  maxStateBytes?: number;
  /** Overrides `server.limits.maxEventDepth` for this agent. */
  maxEventDepth?: number;
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

/** An agent's adapter once loaded; each type's options are declared next to its adapter. */
export type AdapterConfig =
  | EchoAdapterConfig
  | ScriptedAdapterConfig
  | AguiHttpAdapterConfig
  | OpenAiAdapterConfig
  | ModuleAdapterConfig
  | A2aAdapterConfig;

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
  /** The agent as an A2A agent (defaults filled by the loader; `a2aOptionsOf` fills them too). */
  a2a?: AgentA2aOptions;
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
  server: ServerSettings;
  agents: AgentConfig[];
  /**
   * Line and column (1-based) of a key path in the file (the nearest existing ancestor when
   * the path itself is absent), or null when positions are unknown. The registry uses it for
   * errors it finds after loading.
   */
  locate(path: KeyPath, at?: "key" | "value"): SourcePosition | null;
}
