import type { Agent } from "undici";

/** How long a stop request may take when `connectTimeoutMs` sets no limit. */
const STOP_TIMEOUT_MS = 10_000;

export interface StopTarget {
  /** The `stopUrl` template: `{threadId}` and `{runId}` are replaced, URL-encoded. */
  stopUrl: string;
  /** The run request's headers (credentials, content type). */
  headers: Record<string, string>;
  connectTimeoutMs: number;
  dispatcher: Agent;
}

/** The stop URL for one run. */
export function stopUrlFor(template: string, threadId: string, runId: string): string {
  return template
    .replaceAll("{threadId}", encodeURIComponent(threadId))
    .replaceAll("{runId}", encodeURIComponent(runId));
}

/**
 * Tells a remote agent to stop a run we gave up on (a cancel, a timeout, shutdown). Closing
 * the stream is the AG-UI way to stop a run, but servers that keep a run going without its
 * client (the CopilotKit runtime does, so a page reload does not lose a reply) only stop on
 * their own stop route: without this request the "cancelled" turn would still land upstream.
 * Resolves with a problem to log, or undefined; never throws, since the run has ended anyway.
 */
export async function stopRemoteRun(
  target: StopTarget,
  threadId: string,
  runId: string,
): Promise<string | undefined> {
  const url = stopUrlFor(target.stopUrl, threadId, runId);
  const timeoutMs = target.connectTimeoutMs > 0 ? target.connectTimeoutMs : STOP_TIMEOUT_MS;
  try {
    // Loaded by the run being stopped already; imported here to keep it off start-up.
    const { request } = await import("undici");
    const response = await request(url, {
      method: "POST",
      dispatcher: target.dispatcher,
      headers: target.headers,
      // CopilotKit's stop route takes exactly `{runId}` (any other key is a 400).
      body: JSON.stringify({ runId }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    await response.body.dump();
    if (response.statusCode >= 200 && response.statusCode < 300) return undefined;
    return `answered HTTP ${response.statusCode}`;
  } catch (err) {
    return (err as Error)?.message ?? String(err);
  }
}
