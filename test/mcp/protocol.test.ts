/**
 * The MCP wire as a client that speaks an older revision meets it: `initialize` answers the
 * 2025 revision the client asked for (and the latest for one it does not know), the session id
 * comes back in `Mcp-Session-Id`, requests of that session need it, and DELETE ends it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";

const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

/** The JSON-RPC messages of a response, JSON or SSE. */
async function messagesOf(response: Response): Promise<Array<Record<string, unknown>>> {
  const text = await response.text();
  if ((response.headers.get("content-type") ?? "").startsWith("application/json")) {
    const body = JSON.parse(text);
    return Array.isArray(body) ? body : [body];
  }
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line.length > 6)
    .map((line) => JSON.parse(line.slice(6)));
}

describe("MCP revisions and sessions", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    ({ t, base } = await sampleServer({ unchecked: true }));
  });
  afterAll(async () => {
    await t.close();
  });

  const initialize = (protocolVersion: string) =>
    fetch(`${base}/mcp`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "initialize",
        params: { protocolVersion, capabilities: {}, clientInfo: { name: "old", version: "1" } },
      }),
    });

  it.each([
    ["2025-11-25", "2025-11-25"],
    ["2025-06-18", "2025-06-18"],
    ["2025-03-26", "2025-03-26"],
    ["2099-01-01", "2025-11-25"],
  ])("a client asking for %s is answered in %s", async (asked, answered) => {
    const response = await initialize(asked);
    expect(response.status).toBe(200);
    const sessionId = response.headers.get("mcp-session-id");
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);
    const [message] = await messagesOf(response);
    expect(message).toMatchObject({
      id: 1,
      result: { protocolVersion: answered, serverInfo: { name: "acp-agui" } },
    });
    const session = { ...HEADERS, "mcp-session-id": sessionId!, "mcp-protocol-version": answered };
    await fetch(`${base}/mcp`, {
      method: "POST",
      headers: session,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    });
    const listed = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: session,
      body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
    });
    const [tools] = await messagesOf(listed);
    expect((tools!.result as { tools: unknown[] }).tools).toHaveLength(5);
    const ended = await fetch(`${base}/mcp`, { method: "DELETE", headers: session });
    expect(ended.status).toBe(200);
    const after = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: session,
      body: JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/list" }),
    });
    expect(after.status).toBe(404);
  });

  it("a request without a session that is not initialize is refused with 400", async () => {
    const response = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32000 },
    });
  });

  it("a dropped call stream resumes with Last-Event-ID, missing nothing", async () => {
    const opened = await initialize("2025-11-25");
    await opened.text();
    const session = {
      ...HEADERS,
      "mcp-session-id": opened.headers.get("mcp-session-id")!,
      "mcp-protocol-version": "2025-11-25",
    };
    const said = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    const dropped = new AbortController();
    const call = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: session,
      signal: dropped.signal,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 7,
        method: "tools/call",
        params: { name: "echo", arguments: { message: said }, _meta: { progressToken: "p" } },
      }),
    });
    // Read until the first progress notification, note its event id, then drop the stream.
    const reader = call.body!.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let lastEventId: string | undefined;
    let firstProgress = 0;
    while (lastEventId === undefined) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended before any progress: ${text}`);
      text += decoder.decode(value, { stream: true });
      for (const event of text.split("\n\n")) {
        const id = /^id: (.+)$/m.exec(event)?.[1];
        const data = /^data: (.+)$/m.exec(event)?.[1];
        if (id && data?.includes("notifications/progress")) {
          lastEventId = id;
          firstProgress = JSON.parse(data).params.progress;
          break;
        }
      }
    }
    dropped.abort();
    // Until the server has seen the old stream close it answers 409, as a client retrying
    // its reconnection meets it.
    const reconnect = () =>
      fetch(`${base}/mcp`, {
        method: "GET",
        headers: { ...session, accept: "text/event-stream", "last-event-id": lastEventId! },
      });
    let resumed = await reconnect();
    for (let tries = 0; resumed.status === 409 && tries < 40; tries++) {
      await resumed.text();
      await new Promise((resolve) => setTimeout(resolve, 50));
      resumed = await reconnect();
    }
    expect(resumed.status).toBe(200);
    const events = (await resumed.text())
      .split("\n")
      .filter((line) => line.startsWith("data: ") && line.length > 6)
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
    const progress = events
      .filter((event) => event.method === "notifications/progress")
      .map((event) => (event.params as { progress: number }).progress);
    expect(progress.every((value) => value > firstProgress)).toBe(true);
    const answer = events.find((event) => event.id === 7) as {
      result: { content: Array<{ text: string }> };
    };
    expect(answer.result.content[0]!.text).toBe(said);
  });
});
