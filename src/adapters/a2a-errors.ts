/** Errors of the A2A adapter in words. */
import { UpstreamLimitError } from "./a2a-fetch.js";

/** The bound an upstream broke, wherever the client wrapped it. */
export function limitError(err: unknown): UpstreamLimitError | undefined {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    if (current instanceof UpstreamLimitError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** What a run's error says after the agent's name. */
export function failed(err: unknown): string {
  const text = describe(err);
  return text.startsWith("closed ") || text.startsWith("dropped ") ? text : `failed: ${text}`;
}

/** An error in words, with the network code when fetch hides it in `cause`. */
export function describe(err: unknown): string {
  const limit = limitError(err);
  if (limit) return limit.message;
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { cause?: { code?: unknown } })?.cause?.code;
  return typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message;
}

/** Credentials in the URL stay out of error messages and logs. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === "" && parsed.password === "") return url;
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return url;
  }
}
