/**
 * `server.retention` in the config file: its JSON Schema fragment (src/config/schema.ts puts it
 * under `server`), its defaults, and durations as written (`90`, `"90s"`, `"15m"`, `"1h"`,
 * `"7d"`) turned into seconds. Every rule is off (keep forever) unless configured.
 */
import type { IdleThreadStrategy } from "../storage/retention.js";

export interface RetentionSettings {
  /** Seconds after its end that a stateless run is deleted with all it stored; null = never. */
  finishedStatelessRuns: number | null;
  /** Seconds after a run's end that its frames are compacted to its final frame; null = never. */
  frames: number | null;
  /** Seconds without a run after which a thread is swept (see `idleThreadStrategy`); null = never. */
  idleThreads: number | null;
  idleThreadStrategy: IdleThreadStrategy;
  /** Seconds between sweeps. */
  sweepInterval: number;
  /** Rows (runs or threads) one batch handles; a sweep runs batches until a rule is done. */
  batchSize: number;
}

export const RETENTION_DEFAULTS: RetentionSettings = {
  finishedStatelessRuns: null,
  frames: null,
  idleThreads: null,
  idleThreadStrategy: "delete",
  sweepInterval: 60,
  batchSize: 500,
};

/** `retention` as written in the file (after schema validation). */
export interface RetentionConfigInput {
  finishedStatelessRuns?: number | string;
  frames?: number | string;
  idleThreads?: number | string;
  idleThreadStrategy?: IdleThreadStrategy;
  sweepInterval?: number | string;
  batchSize?: number;
}

const DURATION_PATTERN = "^[0-9]+(\\.[0-9]+)?(ms|s|m|h|d)$";
const UNIT_SECONDS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400 };

const DURATION_EXPECTED =
  'a number of seconds (> 0) or a duration such as "90s", "15m", "1h", "7d"';
const duration = {
  "x-expected": DURATION_EXPECTED,
  anyOf: [
    { type: "number", exclusiveMinimum: 0, "x-expected": DURATION_EXPECTED },
    { type: "string", pattern: DURATION_PATTERN, "x-expected": DURATION_EXPECTED },
  ],
} as const;

/** The JSON Schema of `server.retention`. */
export const retentionConfigSchema = {
  type: "object",
  additionalProperties: false,
  properties: {
    finishedStatelessRuns: duration,
    frames: duration,
    idleThreads: duration,
    idleThreadStrategy: { enum: ["delete", "keep-latest"] },
    sweepInterval: duration,
    batchSize: { type: "integer", minimum: 1, maximum: 10_000 },
  },
} as const;

/**
 * Seconds in a duration as the schema allows it: a positive number of seconds, or digits and a
 * unit (ms, s, m, h, d). Throws on anything else, and on zero (a zero retention is not "keep").
 */
export function parseDuration(value: number | string): number {
  let seconds: number;
  if (typeof value === "number") {
    seconds = value;
  } else {
    const match = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m|h|d)$/.exec(value);
    if (match === null) {
      throw new Error(
        `"${value}" is not a duration (use seconds, or e.g. "90s", "15m", "1h", "7d")`,
      );
    }
    seconds = Number(match[1]) * UNIT_SECONDS[match[2]!]!;
  }
  if (!Number.isFinite(seconds) || seconds <= 0) {
    throw new Error(`${JSON.stringify(value)} is not a positive duration`);
  }
  return seconds;
}

/**
 * The settings from the file's `retention` (validated by the schema); a problem with a value
 * (a zero duration) goes to `issue` with the key it concerns.
 */
export function resolveRetention(
  raw: RetentionConfigInput | undefined,
  issue: (key: keyof RetentionConfigInput, message: string) => void,
): RetentionSettings {
  const settings: RetentionSettings = { ...RETENTION_DEFAULTS };
  if (raw === undefined) return settings;
  const seconds = (key: "finishedStatelessRuns" | "frames" | "idleThreads" | "sweepInterval") => {
    const value = raw[key];
    if (value === undefined) return undefined;
    try {
      return parseDuration(value);
    } catch {
      // The schema checked the form: what is left is a zero.
      issue(key, `must be longer than zero (got ${JSON.stringify(value)})`);
      return undefined;
    }
  };
  settings.finishedStatelessRuns = seconds("finishedStatelessRuns") ?? null;
  settings.frames = seconds("frames") ?? null;
  settings.idleThreads = seconds("idleThreads") ?? null;
  settings.sweepInterval = seconds("sweepInterval") ?? RETENTION_DEFAULTS.sweepInterval;
  if (raw.idleThreadStrategy !== undefined) settings.idleThreadStrategy = raw.idleThreadStrategy;
  if (raw.batchSize !== undefined) settings.batchSize = raw.batchSize;
  return settings;
}
