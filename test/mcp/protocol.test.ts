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
    .filter((line) => line.startsWith("data: "))
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
});
