/**
 * The MCP face's doors: API keys and user tokens as `Authorization: Bearer`, refusals in
 * JSON-RPC's shape with their HTTP status, a key for other agents seeing only its own tools, a
 * session that belongs to its caller, and browser origins checked (loopback and the configured
 * allow-list pass).
 */
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { startIssuer, type TestIssuer } from "../helpers/jwt-issuer.js";
import { listen } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";
import { mcpClient, textOf } from "./helpers.js";

const KEY = "app-key-0123456789abcdef";
const OTHER_AGENTS_KEY = "other-key-0123456789abcdef";
const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: {
    protocolVersion: "2025-11-25",
    capabilities: {},
    clientInfo: { name: "raw", version: "1" },
  },
};
const MCP_HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};

describe("MCP face with API keys and tokens", () => {
  let t: TestApp;
  let issuer: TestIssuer;
  let base: string;
  beforeAll(async () => {
    issuer = await startIssuer();
    t = await buildServing(
      {
        server: {
          auth: {
            keys: [
              { key: KEY, name: "app" },
              { key: OTHER_AGENTS_KEY, name: "other", agents: ["other"] },
            ],
            jwt: { issuer: issuer.issuer, audience: issuer.audience, jwksUrl: issuer.jwksUrl },
          },
          mcp: { allowedOrigins: ["https://app.example"] },
        },
        agents: [echoAgent("echo"), echoAgent("other")],
      },
      { unchecked: true },
    );
    base = await listen(t);
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.close();
  });

  const post = (body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${base}/mcp`, {
      method: "POST",
      headers: { ...MCP_HEADERS, ...headers },
      body: JSON.stringify(body),
    });

  it("refuses a caller without credentials with 401, a challenge and a JSON-RPC error", async () => {
    const response = await post(INITIALIZE);
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect(await response.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "missing API key or bearer token" },
    });
    const wrong = await post(INITIALIZE, { authorization: "Bearer nope" });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as { error: { message: string } }).error.message).toBe(
      "invalid API key or bearer token",
    );
    // The SDK client meets the same refusal.
    await expect(mcpClient(`${base}/mcp`)).rejects.toThrow();
  });

  it("the 401 names the endpoint's protected-resource metadata, which names the issuer", async () => {
    for (const path of ["/mcp", "/mcp/echo"]) {
      const refused = await fetch(`${base}${path}`, {
        method: "POST",
        headers: MCP_HEADERS,
        body: JSON.stringify(INITIALIZE),
      });
      expect(refused.status).toBe(401);
      const metadataUrl = `${base}/.well-known/oauth-protected-resource${path}`;
      expect(refused.headers.get("www-authenticate")).toBe(
        `Bearer resource_metadata="${metadataUrl}"`,
      );
      const metadata = await fetch(metadataUrl);
      expect(metadata.status).toBe(200);
      expect(await metadata.json()).toEqual({
        resource: `${base}${path}`,
        authorization_servers: [issuer.issuer],
        bearer_methods_supported: ["header"],
        resource_name: "acp-agui agents (MCP)",
      });
    }
  });

  it("serves an API key and a user token as Bearer", async () => {
    const withKey = await mcpClient(`${base}/mcp`, { headers: { authorization: `Bearer ${KEY}` } });
    expect(textOf(await withKey.callTool({ name: "echo", arguments: { message: "by key" } }))).toBe(
      "by key",
    );
    await withKey.close();
    const token = await issuer.token("alice");
    const withToken = await mcpClient(`${base}/mcp`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(
      textOf(await withToken.callTool({ name: "echo", arguments: { message: "by token" } })),
    ).toBe("by token");
    await withToken.close();
  });

  it("lists only the agents a key may use; the others are neither tools nor endpoints", async () => {
    const client = await mcpClient(`${base}/mcp`, {
      headers: { authorization: `Bearer ${OTHER_AGENTS_KEY}` },
    });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["other"]);
    await expect(client.callTool({ name: "echo", arguments: { message: "x" } })).rejects.toThrow(
      /unknown tool/,
    );
    await client.close();
    const response = await post(INITIALIZE, { authorization: `Bearer ${OTHER_AGENTS_KEY}` });
    expect(response.status).toBe(200);
    const alone = await fetch(`${base}/mcp/echo`, {
      method: "POST",
      headers: { ...MCP_HEADERS, authorization: `Bearer ${OTHER_AGENTS_KEY}` },
      body: JSON.stringify(INITIALIZE),
    });
    expect(alone.status).toBe(404);
    expect(((await alone.json()) as { error: { code: number } }).error.code).toBe(-32600);
  });

  it("answers another caller's session as one that does not exist", async () => {
    const opened = await post(INITIALIZE, { authorization: `Bearer ${KEY}` });
    const sessionId = opened.headers.get("mcp-session-id")!;
    expect(sessionId).toBeTruthy();
    await opened.body?.cancel();
    const list = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} };
    const token = await issuer.token("mallory");
    const stolen = await post(list, {
      authorization: `Bearer ${token}`,
      "mcp-session-id": sessionId,
      "mcp-protocol-version": "2025-11-25",
    });
    expect(stolen.status).toBe(404);
    const unknown = await post(list, {
      authorization: `Bearer ${token}`,
      "mcp-session-id": "00000000-0000-4000-8000-000000000000",
      "mcp-protocol-version": "2025-11-25",
    });
    expect(unknown.status).toBe(404);
    expect(await stolen.json()).toEqual(await unknown.json());
  });

  it("a task is its caller's: another caller's tasks/get is not found, its list leaves it out", async () => {
    const owner = await mcpClient(`${base}/mcp`, { headers: { authorization: `Bearer ${KEY}` } });
    const created = await owner.request(
      { method: "tools/call", params: { name: "echo", arguments: { message: "mine" }, task: {} } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    expect((await owner.experimental.tasks.getTask(taskId)).taskId).toBe(taskId);
    const token = await issuer.token("mallory");
    const other = await mcpClient(`${base}/mcp`, { headers: { authorization: `Bearer ${token}` } });
    const refusal = await other.experimental.tasks.getTask(taskId).catch((err: unknown) => err);
    const none = await other.experimental.tasks
      .getTask("00000000-0000-4000-8000-000000000000")
      .catch((err: unknown) => err);
    expect(refusal).toMatchObject({ code: -32602 });
    expect((refusal as Error).message.replace(taskId, "ID")).toBe(
      (none as Error).message.replace("00000000-0000-4000-8000-000000000000", "ID"),
    );
    await expect(other.experimental.tasks.cancelTask(taskId)).rejects.toMatchObject({
      code: -32602,
    });
    expect((await other.experimental.tasks.listTasks()).tasks).toEqual([]);
    expect((await owner.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).toContain(
      taskId,
    );
    await owner.close();
    await other.close();
  });

  it("a caller opening sessions without end closes its own oldest, never another's", async () => {
    const open = async (key: string) => {
      const response = await post(INITIALIZE, { authorization: `Bearer ${key}` });
      await response.text();
      return response.headers.get("mcp-session-id")!;
    };
    const list = (key: string, sessionId: string) =>
      post(
        { jsonrpc: "2.0", id: 2, method: "tools/list" },
        {
          authorization: `Bearer ${key}`,
          "mcp-session-id": sessionId,
          "mcp-protocol-version": "2025-11-25",
        },
      );
    const others = await open(OTHER_AGENTS_KEY);
    const first = await open(KEY);
    for (let i = 0; i < 1000; i++) await open(KEY);
    expect((await list(KEY, first)).status).toBe(404);
    const kept = await list(OTHER_AGENTS_KEY, others);
    expect(kept.status).toBe(200);
    await kept.text();
  }, 60_000);

  it("checks Origin: loopback and the allow-list pass, any other origin gets 403", async () => {
    const auth = { authorization: `Bearer ${KEY}` };
    const evil = await post(INITIALIZE, { ...auth, origin: "https://evil.example" });
    expect(evil.status).toBe(403);
    expect(((await evil.json()) as { error: { code: number } }).error.code).toBe(-32600);
    for (const origin of [
      "http://localhost:3000",
      "http://127.0.0.1:6274",
      "https://app.example",
    ]) {
      const allowed = await post(INITIALIZE, { ...auth, origin });
      expect(allowed.status, origin).toBe(200);
      await allowed.body?.cancel();
    }
  });
});

describe("MCP face under limits", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildServing(
      { server: { rateLimit: { max: 1, windowSeconds: 60 } }, agents: [echoAgent("echo")] },
      { unchecked: true },
    );
    base = await listen(t);
  });
  afterAll(async () => {
    await t?.close();
  });

  it("a caller over the rate limit gets 429, retry-after and a JSON-RPC error", async () => {
    const send = () =>
      fetch(`${base}/mcp`, {
        method: "POST",
        headers: MCP_HEADERS,
        body: JSON.stringify(INITIALIZE),
      });
    const first = await send();
    expect(first.status).toBe(200);
    await first.body?.cancel();
    const second = await send();
    expect(second.status).toBe(429);
    expect(second.headers.get("retry-after")).toBeTruthy();
    expect(await second.json()).toMatchObject({
      jsonrpc: "2.0",
      id: null,
      error: { code: -32000 },
    });
  });
});
