/**
 * A tools/call over raw Streamable HTTP, for the tests that drop a call's SSE stream on purpose
 * (the SDK's client cannot) and resume it with `Last-Event-ID`.
 */

export const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

export interface SseEvent {
  id?: string;
  message?: Record<string, unknown>;
}

/** Opens a 2025-11-25 session at `url`; the headers its requests carry. */
export async function openSession(
  url: string,
  headers: Record<string, string> = {},
  capabilities: Record<string, unknown> = {},
): Promise<Record<string, string>> {
  const opened = await fetch(url, {
    method: "POST",
    headers: { ...MCP_HEADERS, ...headers },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-11-25",
        capabilities,
        clientInfo: { name: "raw", version: "1" },
      },
    }),
  });
  await opened.text();
  const sessionId = opened.headers.get("mcp-session-id");
  if (opened.status !== 200 || !sessionId) throw new Error(`initialize answered ${opened.status}`);
  const session = {
    ...MCP_HEADERS,
    ...headers,
    "mcp-session-id": sessionId,
    "mcp-protocol-version": "2025-11-25",
  };
  await fetch(url, {
    method: "POST",
    headers: session,
    body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
  });
  return session;
}

/** The events of an SSE text. */
export function eventsOf(text: string): SseEvent[] {
  return text
    .split("\n\n")
    .filter((block) => /^(id|data): /m.test(block))
    .map((block) => {
      const id = /^id: (.+)$/m.exec(block)?.[1];
      const data = /^data: (.+)$/m.exec(block)?.[1];
      return { id, message: data ? (JSON.parse(data) as Record<string, unknown>) : undefined };
    });
}

export const progressOf = (events: SseEvent[]) =>
  events
    .filter((event) => event.message?.method === "notifications/progress")
    .map((event) => (event.message!.params as { progress: number }).progress);

export const textOfAnswer = (events: SseEvent[], id: number) => {
  const answer = events.find((event) => event.message?.id === id)?.message as
    | { result: { content: Array<{ text: string }> } }
    | undefined;
  return answer?.result.content.map((part) => part.text).join("");
};

/** Reads an SSE response's events as they come, until `enough` says so (or it ends). */
export async function readUntil(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  enough: (events: SseEvent[]) => boolean,
): Promise<SseEvent[]> {
  const decoder = new TextDecoder();
  let text = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return eventsOf(text);
    text += decoder.decode(value, { stream: true });
    // Whole events only: the text up to the last blank line.
    const events = eventsOf(text.slice(0, text.lastIndexOf("\n\n") + 2));
    if (enough(events)) return events;
  }
}

/**
 * Calls `name` (with a progress token unless `progressEvents` is 0), reads its stream until
 * `progressEvents` progress notifications came (or `until` says so), then drops it: the events
 * read, and the id of the last.
 */
export async function callAndDrop(
  url: string,
  session: Record<string, string>,
  request: {
    id: number;
    name: string;
    message: string;
    progressEvents: number;
    until?: (events: SseEvent[]) => boolean;
  },
): Promise<{ events: SseEvent[]; lastEventId: string }> {
  const dropped = new AbortController();
  const call = await fetch(url, {
    method: "POST",
    headers: session,
    signal: dropped.signal,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: request.id,
      method: "tools/call",
      params: {
        name: request.name,
        arguments: { message: request.message },
        ...(request.progressEvents > 0 ? { _meta: { progressToken: `p${request.id}` } } : {}),
      },
    }),
  });
  const enough =
    request.until ?? ((events: SseEvent[]) => progressOf(events).length >= request.progressEvents);
  const events = await readUntil(call.body!.getReader(), enough);
  if (!enough(events)) throw new Error(`the stream ended first: ${JSON.stringify(events)}`);
  dropped.abort();
  const last = events.filter((event) => event.id !== undefined).at(-1)!;
  return { events, lastEventId: last.id! };
}

/** Calls `name` with a progress token and reads its whole stream. */
export async function callToEnd(
  url: string,
  session: Record<string, string>,
  request: { id: number; name: string; message: string },
): Promise<SseEvent[]> {
  const call = await fetch(url, {
    method: "POST",
    headers: session,
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: request.id,
      method: "tools/call",
      params: {
        name: request.name,
        arguments: { message: request.message },
        _meta: { progressToken: `p${request.id}` },
      },
    }),
  });
  return eventsOf(await call.text());
}

/**
 * GET with `Last-Event-ID`: the response (retried while the server still sees the dropped
 * stream open, which it answers 409, as a client retrying its reconnection meets it).
 */
export async function resume(
  url: string,
  session: Record<string, string>,
  lastEventId: string,
): Promise<Response> {
  const get = () =>
    fetch(url, {
      method: "GET",
      headers: { ...session, accept: "text/event-stream", "last-event-id": lastEventId },
    });
  let response = await get();
  for (let tries = 0; response.status === 409 && tries < 40; tries++) {
    await response.text();
    await new Promise((done) => setTimeout(done, 50));
    response = await get();
  }
  return response;
}
