/** Errors of the A2A adapter in words. */
import { UpstreamFault } from "./a2a-fetch.js";
import { StreamBoundError } from "./stream-bounds.js";

/** A bound the upstream broke, or a fault the fetch named, wherever the client wrapped it. */
export function limitError(err: unknown): StreamBoundError | UpstreamFault | undefined {
  for (let current = err, depth = 0; current && depth < 5; depth++) {
    if (current instanceof StreamBoundError || current instanceof UpstreamFault) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The connection was lost (reset, cut, refused): the task may go on, listened to again. */
export function dropped(err: unknown): boolean {
  if (limitError(err) || !(err instanceof TypeError)) return false;
  return err.message === "terminated" || err.message === "fetch failed";
}

/** What a run's error says after the agent's name. */
export function failed(err: unknown): string {
  const text = describe(err);
  return /^(closed|dropped|sent|answered|broke|did not) /.test(text) ? text : `failed: ${text}`;
}

/**
 * An error in words, with the network code when fetch hides it in `cause`. The SDK's own
 * words for a broken answer are put as the agent's fault.
 */
export function describe(err: unknown): string {
  const limit = limitError(err);
  if (limit) return limit.message;
  const message = shorten(err instanceof Error ? err.message : String(err));
  const sse = /^Failed to parse SSE event data: "([\s\S]*?)\.\.\."\. Original error: (.*)$/.exec(
    message,
  );
  if (sse) return `sent malformed JSON in an SSE event (${sse[2]}): ${JSON.stringify(sse[1])}`;
  if ((err as Error)?.name === "SyntaxError") return `sent malformed JSON (${message})`;
  const code = (err as { cause?: { code?: unknown } })?.cause?.code;
  if (message === "terminated" && code === "UND_ERR_SOCKET") {
    return "broke the connection in the middle of an answer";
  }
  return typeof code === "string" && !message.includes(code) ? `${message} (${code})` : message;
}

/** How much of an error's text a message keeps: the SDK quotes whole error bodies. */
const MESSAGE_LIMIT = 500;

function shorten(text: string): string {
  return text.length > MESSAGE_LIMIT ? `${text.slice(0, MESSAGE_LIMIT)}…` : text;
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
