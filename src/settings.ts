import type {
  ApiKey,
  AuthSettings,
  CopilotKitSettings,
  JwtSettings,
  RequestLimits,
} from "./config/schema.js";
import { DEFAULT_LIMITS } from "./config/schema.js";
import { RETENTION_DEFAULTS, type RetentionSettings } from "./retention/settings.js";

export { type ApiKey, type AuthSettings, DEFAULT_LIMITS, type JwtSettings, type RequestLimits };

/**
 * Process-wide settings after merging, lowest to highest precedence: built-in defaults, the
 * config file's `server:` section, environment variables, command-line flags.
 */
export interface ServerSettings {
  host: string;
  port: number;
  /** SQLite file path, ":memory:", or a postgres:// URL (replicas sharing one database). */
  database: string;
  logLevel: string;
  /** Seconds between SSE keep-alive comment lines (see src/http/sse.ts); 0 turns them off. */
  keepAliveSeconds: number;
  /** Runs executing at once on this replica, across all agents. */
  maxConcurrentRuns: number;
  webhooks: { allowPrivateTargets: boolean; maxAttempts: number };
  /**
   * How long a replica's claim on a run holds without renewal. A replica that dies has its
   * runs taken over by the others within about this long (shared databases only).
   */
  leaseSeconds: number;
  /** API keys and a token issuer; with neither, no authentication (one anonymous caller). */
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
  /** CopilotKit's runtime protocol (REST mode) under `basePath`; see docs/copilotkit.md. */
  copilotkit: CopilotKitSettings;
  /** Requests per window and client (API key, or IP without one); `max: 0` = off. */
  rateLimit: { max: number; windowSeconds: number };
  limits: RequestLimits;
  /** What the retention sweeps remove, and when (src/retention, docs/storage.md). */
  retention: RetentionSettings;
}

export const DEFAULT_SETTINGS: ServerSettings = {
  host: "127.0.0.1",
  port: 8000,
  database: "./data/acp-agui.db",
  logLevel: "info",
  keepAliveSeconds: 15,
  maxConcurrentRuns: 64,
  webhooks: { allowPrivateTargets: false, maxAttempts: 5 },
  leaseSeconds: 15,
  auth: { keys: [] },
  cors: { origins: [] },
  metrics: { enabled: true, public: false },
  inspector: { enabled: true, path: "/ui" },
  copilotkit: { enabled: true, basePath: "/copilotkit" },
  rateLimit: { max: 0, windowSeconds: 60 },
  limits: DEFAULT_LIMITS,
  retention: RETENTION_DEFAULTS,
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
  "copilotkit",
  "rateLimit",
  "limits",
  "retention",
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
          if (innerValue !== undefined) target[inner] = innerValue;
        }
      } else {
        (merged as unknown as Record<string, unknown>)[key] = value;
      }
    }
  }
  return merged;
}
