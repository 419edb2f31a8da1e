/**
 * The server's settings: one type, one table of defaults, and the merge of their layers.
 *
 * Every source fills the same `ServerSettings`: the config file's `server:` section (the loader
 * fills what the file leaves out from `DEFAULT_SETTINGS`), then environment variables and
 * command-line flags (the CLI), each overlaid with `mergeSettings`. Tests build settings the
 * same way, from `DEFAULT_SETTINGS`. The file's JSON Schema for this section is in schema.ts.
 */

import { RETENTION_DEFAULTS, type RetentionSettings } from "../retention/settings.js";
import { TELEMETRY_DEFAULTS, type TelemetrySettings } from "../telemetry/index.js";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** Shorter API keys are refused at start-up: they could be guessed. */
export const MIN_API_KEY_LENGTH = 16;

/**
 * Process-wide settings after merging, lowest to highest precedence: built-in defaults, the
 * config file's `server:` section, environment variables, command-line flags.
 */
export interface ServerSettings {
  port: number;
  host: string;
  /**
   * A SQLite file path (relative to the working directory, as written), ":memory:", or a
   * postgres:// URL (replicas sharing one database).
   */
  database: string;
  /** Seconds between SSE keep-alive comment lines (see src/http/streaming/sse-keep-alive.ts); 0 turns them off. */
  keepAliveSeconds: number;
  /** Runs executing at once on this replica, across all agents. */
  maxConcurrentRuns: number;
  /**
   * How long a replica's claim on a run (or on a webhook delivery it is sending) holds without
   * renewal. A replica that dies has its runs and deliveries taken over by the others within
   * about this long (shared databases only).
   */
  leaseSeconds: number;
  /**
   * Callers see a failed run's error without the server's internals (module file paths,
   * upstream URLs) and with a reference to the log line that has them. Unset: on when API keys
   * or a token issuer are configured (see `hidesInternals`).
   */
  hideInternals?: boolean;
  webhooks: WebhookSettings;
  logLevel: LogLevel;
  /**
   * API keys and a token issuer; with neither, no authentication (one anonymous caller). From
   * the file: keys resolved (`keyEnv` read), agents checked against the config's agent names.
   */
  auth: AuthSettings;
  /** Browser origins allowed by CORS; empty = CORS off. `"*"` allows any origin. */
  cors: { origins: string[] };
  metrics: {
    /** Serve `GET /metrics` (Prometheus text format). */
    enabled: boolean;
    /** Serve it without an API key even when authentication is on. */
    public: boolean;
  };
  /** The browser inspector (static files plus a small JSON API), served under `path`. */
  inspector: { enabled: boolean; path: string };
  /** The ACP face: every ACP 0.2.1 path at the root. */
  acp: { enabled: boolean };
  /** The AG-UI face: `{basePath}/{agent}` and `/agents/{id}/ag-ui`; see docs/ag-ui.md. */
  agui: AguiSettings;
  /** CopilotKit's runtime protocol (REST mode) under `basePath`; see docs/copilotkit.md. */
  copilotkit: CopilotKitSettings;
  /** Every agent as an A2A agent under `{basePath}/{agent}`; see docs/a2a.md. */
  a2a: A2aSettings;
  /** LangGraph's API under `basePath`: every agent as an assistant; see docs/langgraph.md. */
  langgraph: LangGraphSettings;
  /** Every agent as an MCP tool at `basePath` (and `{basePath}/{agent}`); see docs/mcp.md. */
  mcp: McpSettings;
  /** Requests per window and client (API key, or IP without one); `max: 0` = off. */
  rateLimit: { max: number; windowSeconds: number };
  limits: RequestLimits;
  /** What the retention sweeps remove, and when (src/retention, docs/storage.md). */
  retention: RetentionSettings;
  /** Tracing with OpenTelemetry (src/telemetry, docs/telemetry.md); off by default. */
  telemetry: TelemetrySettings;
}

export interface AguiSettings {
  enabled: boolean;
  /** An agent's AG-UI endpoint by name is this server's origin, this path, then its name. */
  basePath: string;
}

export interface A2aSettings {
  enabled: boolean;
  /** An agent's A2A interface URL is this server's origin, this path, then the agent's name. */
  basePath: string;
  /** How long clients and caches may keep an agent card (`Cache-Control: max-age`). */
  cardMaxAgeSeconds: number;
  /** Push notification configs one task may have at once (a further one is InvalidParams). */
  maxPushConfigsPerTask: number;
  /** A2A's gRPC binding (`lf.a2a.v1.A2AService`) on a port of its own; off by default. */
  grpc: A2aGrpcSettings;
}

export interface A2aGrpcSettings {
  enabled: boolean;
  /** The port it listens on (0: any free one; the cards say which). */
  port: number;
  /** The address it listens on; unset: the server's `host`. */
  host?: string;
  /**
   * The `host:port` the cards give for it, when clients reach it elsewhere (a TLS-terminating
   * proxy); unset: the host name the card was asked by and the port it listens on.
   */
  publicAddress?: string;
}

export interface McpSettings {
  enabled: boolean;
  /** Every agent the caller may use as a tool at this path; one agent at `{basePath}/{agent}`. */
  basePath: string;
  /**
   * Browser origins (`scheme://host[:port]`) whose requests are served, besides loopback ones:
   * MCP servers must refuse other origins (DNS rebinding). A request with no Origin is served.
   */
  allowedOrigins: string[];
}

/** Webhook delivery (ACP runs' webhooks, A2A push notifications); see src/webhooks. */
export interface WebhookSettings {
  /** Allow loopback, private and link-local targets. */
  allowPrivateTargets: boolean;
  /** Attempts per delivery, with backoff, before it fails. */
  maxAttempts: number;
  /** Bound on one attempt: DNS, connecting, sending, and the response's headers. */
  timeoutSeconds: number;
  /** Bound on opening an attempt's connection (within `timeoutSeconds`). */
  connectTimeoutSeconds: number;
  /** Attempts under way at once on this replica (one unanswered for a second stops counting). */
  concurrency: number;
  /** Attempts open at once to one receiver (`scheme://host:port`) on this replica. */
  perTargetConcurrency: number;
}

export interface LangGraphSettings {
  enabled: boolean;
  /** LangGraph's client's `apiUrl` is this server's origin followed by this path. */
  basePath: string;
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
  /** Largest single event an agent may send (as it arrives, or as JSON); 0 = no limit. */
  maxEventBytes: number;
  /** Largest state (as JSON) one run of an agent may build; 0 = no limit. */
  maxStateBytes: number;
  /** Deepest nesting of objects and arrays in an agent's event or the state it builds. */
  maxEventDepth: number;
}

export const DEFAULT_LIMITS: RequestLimits = {
  maxBodyBytes: 1024 * 1024,
  maxJsonDepth: 64,
  maxStringLength: 512 * 1024,
  maxOpenStreams: 1000,
  maxEventsPerRun: 100_000,
  // A long answer is a stream of small deltas; one event is big only when it carries a whole
  // document (a tool result, a state snapshot). 16 MiB holds any such payload a model or a
  // tool gives in practice, and is what the protobuf reader always allowed.
  maxEventBytes: 16 * 1024 * 1024,
  // Four of the largest events: a state far past what a UI renders or a checkpoint should hold.
  maxStateBytes: 64 * 1024 * 1024,
  // Real documents nest a few dozen levels; JSON.stringify itself fails at a few thousand.
  maxEventDepth: 256,
};

/** The one table of defaults: what a setting is when no file, variable or flag gives it. */
export const DEFAULT_SETTINGS: ServerSettings = {
  port: 8000,
  host: "127.0.0.1",
  database: "./data/acp-agui.db",
  keepAliveSeconds: 15,
  maxConcurrentRuns: 64,
  leaseSeconds: 15,
  webhooks: {
    allowPrivateTargets: false,
    maxAttempts: 5,
    timeoutSeconds: 10,
    connectTimeoutSeconds: 5,
    concurrency: 16,
    perTargetConcurrency: 4,
  },
  logLevel: "info",
  auth: { keys: [] },
  cors: { origins: [] },
  metrics: { enabled: true, public: false },
  inspector: { enabled: true, path: "/ui" },
  acp: { enabled: true },
  agui: { enabled: true, basePath: "/ag-ui" },
  copilotkit: { enabled: true, basePath: "/copilotkit" },
  a2a: {
    enabled: true,
    basePath: "/a2a",
    cardMaxAgeSeconds: 300,
    maxPushConfigsPerTask: 10,
    grpc: { enabled: false, port: 50051 },
  },
  langgraph: { enabled: true, basePath: "/langgraph" },
  mcp: { enabled: true, basePath: "/mcp", allowedOrigins: [] },
  rateLimit: { max: 0, windowSeconds: 60 },
  limits: DEFAULT_LIMITS,
  retention: RETENTION_DEFAULTS,
  telemetry: TELEMETRY_DEFAULTS,
};

/** A settings layer: any key may be absent, nested sections partially given. */
export type SettingsLayer = {
  [K in keyof ServerSettings]?: ServerSettings[K] extends unknown[]
    ? ServerSettings[K]
    : ServerSettings[K] extends object
      ? Partial<ServerSettings[K]>
      : ServerSettings[K];
};

const SECTIONS = [
  "webhooks",
  "auth",
  "cors",
  "metrics",
  "inspector",
  "acp",
  "agui",
  "copilotkit",
  "a2a",
  "langgraph",
  "mcp",
  "rateLimit",
  "limits",
  "retention",
  "telemetry",
] as const;

/**
 * Overlays defined values only, so an absent flag never erases a configured value. Sections
 * merge key by key; API keys of every layer add up (file keys and `ACP_AGUI_API_KEYS` both work).
 */
export function mergeSettings(
  base: ServerSettings,
  ...layers: Array<SettingsLayer | undefined>
): ServerSettings {
  const merged = { ...base } as ServerSettings;
  for (const section of SECTIONS) {
    (merged as unknown as Record<string, unknown>)[section] = { ...base[section] };
  }
  merged.auth.keys = [...base.auth.keys];
  for (const layer of layers) {
    if (!layer) continue;
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      if (key === "auth") {
        const { keys = [], jwt } = value as Partial<ServerSettings["auth"]>;
        merged.auth.keys.push(...keys);
        if (jwt !== undefined) merged.auth.jwt = jwt;
      } else if ((SECTIONS as readonly string[]).includes(key)) {
        const target = (merged as unknown as Record<string, Record<string, unknown>>)[key]!;
        for (const [inner, innerValue] of Object.entries(value as Record<string, unknown>)) {
          if (innerValue === undefined) continue;
          // A section within a section (`a2a.grpc`) merges key by key too.
          const current = target[inner];
          target[inner] =
            isPlainObject(current) && isPlainObject(innerValue)
              ? { ...current, ...innerValue }
              : innerValue;
        }
      } else {
        (merged as unknown as Record<string, unknown>)[key] = value;
      }
    }
  }
  return merged;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** Whether callers see failures without internals: as set, else whenever authentication is on. */
export function hidesInternals(settings: ServerSettings): boolean {
  return (
    settings.hideInternals ?? (settings.auth.keys.length > 0 || settings.auth.jwt !== undefined)
  );
}

/** The faces that are on and where each is served, as the start-up line and `GET /` say them. */
export function servedFaces(settings: ServerSettings): Array<{ face: string; path: string }> {
  const faces: Array<{ face: string; path: string }> = [];
  if (settings.acp.enabled) faces.push({ face: "ACP", path: "/" });
  if (settings.agui.enabled)
    faces.push({ face: "AG-UI", path: `${settings.agui.basePath}/{agent}` });
  if (settings.copilotkit.enabled) {
    faces.push({ face: "CopilotKit", path: settings.copilotkit.basePath });
  }
  if (settings.a2a.enabled) faces.push({ face: "A2A", path: `${settings.a2a.basePath}/{agent}` });
  if (settings.a2a.enabled && settings.a2a.grpc.enabled) {
    // Its own port (0: any free one, which the cards give).
    const { host = settings.host, port } = settings.a2a.grpc;
    faces.push({ face: "A2A gRPC", path: `${host.includes(":") ? `[${host}]` : host}:${port}` });
  }
  if (settings.langgraph.enabled)
    faces.push({ face: "LangGraph", path: settings.langgraph.basePath });
  if (settings.mcp.enabled) faces.push({ face: "MCP", path: settings.mcp.basePath });
  return faces;
}
