/**
 * Process-wide settings after merging, lowest to highest precedence: built-in defaults, the
 * config file's `server:` section, environment variables, command-line flags.
 */
export interface ServerSettings {
  host: string;
  port: number;
  /** SQLite file path, ":memory:", or (later) a postgres:// URL. */
  database: string;
  logLevel: string;
  /** Largest accepted request body. */
  bodyLimitBytes: number;
  /** SSE keep-alive comment interval; 0 turns keep-alives off. */
  keepAliveSeconds: number;
  /** Runs executing at once on this replica, across all agents. */
  maxConcurrentRuns: number;
  webhooks: { allowPrivateTargets: boolean; maxAttempts: number };
  /**
   * How long a replica's claim on a run holds without renewal. A replica that dies has its
   * runs taken over by the others within about this long (shared databases only).
   */
  leaseSeconds: number;
}

export const DEFAULT_SETTINGS: ServerSettings = {
  host: "127.0.0.1",
  port: 8000,
  database: "./data/acp-agui.db",
  logLevel: "info",
  bodyLimitBytes: 1024 * 1024,
  keepAliveSeconds: 15,
  maxConcurrentRuns: 64,
  webhooks: { allowPrivateTargets: false, maxAttempts: 5 },
  leaseSeconds: 15,
};

/** Overlays defined values only, so an absent flag never erases a configured value. */
export function mergeSettings(
  base: ServerSettings,
  ...layers: Array<Partial<ServerSettings> | undefined>
): ServerSettings {
  const merged: ServerSettings = { ...base, webhooks: { ...base.webhooks } };
  for (const layer of layers) {
    if (!layer) continue;
    for (const [key, value] of Object.entries(layer)) {
      if (value === undefined) continue;
      if (key === "webhooks") Object.assign(merged.webhooks, value);
      else (merged as unknown as Record<string, unknown>)[key] = value;
    }
  }
  return merged;
}
