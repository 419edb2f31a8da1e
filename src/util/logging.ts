import pino, { type DestinationStream, type Logger, type LoggerOptions } from "pino";
import { traceLogFields } from "../telemetry/index.js";

/**
 * Where secrets could reach a log line: the API key headers of a logged request (or of any
 * object carrying `headers`), and configured keys. pino's serializers do not log headers, but
 * an `{ req }` or `{ headers }` logged anywhere would, so the paths are removed at the source.
 */
export const REDACTED_PATHS = [
  "req.headers.authorization",
  'req.headers["x-api-key"]',
  "headers.authorization",
  'headers["x-api-key"]',
  "*.headers.authorization",
  '*.headers["x-api-key"]',
  "apiKey",
  "*.apiKey",
];

/**
 * pino options shared by the CLI and tests: level, redaction of secrets, and the active span's
 * `trace_id` and `span_id` on every line while tracing is on (a log line leads to its trace).
 */
export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
    mixin: traceLogFields,
  };
}

/**
 * The server's logger: one JSON object per line, pretty-printed only for a person at a
 * terminal. `destination` replaces stdout (tests).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  if (destination) return pino(loggerOptions(level), destination);
  if (process.stdout.isTTY) {
    return pino({
      ...loggerOptions(level),
      // One line per entry: its fields on the same line, and none a person has no use for.
      transport: {
        target: "pino-pretty",
        options: {
          translateTime: "SYS:HH:MM:ss",
          singleLine: true,
          ignore: "pid,hostname,request_id",
        },
      },
    });
  }
  return pino(loggerOptions(level));
}
