/**
 * Credentials on the A2A face, as the official SDK client meets them: with the right key or
 * token it works; without one, with a wrong one, or with a key for other agents the refusal
 * comes in the binding's own shape (a JSON-RPC error object with HTTP 401/403; a
 * google.rpc.Status UNAUTHENTICATED/PERMISSION_DENIED) and the SDK raises it with its message.
 * The extended card is there for authenticated callers only when the server authenticates.
 */
import { AgentCard } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { startIssuer, type TestIssuer } from "../helpers/jwt-issuer.js";
import { listen } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";
import { a2aClient, asTask, BINDINGS, collect, responseText, userMessage } from "./helpers.js";

const KEY = "app-key-0123456789abcdef";
const OTHER_AGENTS_KEY = "other-key-0123456789abcdef";
type Json = Record<string, unknown>;

/** The extended card's agent extension, as the SDK parsed the card. */
const extensionOf = (card: AgentCard) =>
  card.capabilities?.extensions.find((e) => e.uri === "urn:acp-agui:agent");

describe("A2A face with API keys and tokens", () => {
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

  it("declares the schemes it enforces and the extended card in the public card", async () => {
    const response = await fetch(`${base}/a2a/echo/.well-known/agent-card.json`);
    expect(response.status).toBe(200);
    const card = AgentCard.fromJSON(await response.json());
    expect(card.capabilities?.extendedAgentCard).toBe(true);
    expect(Object.keys(card.securitySchemes).sort()).toEqual(["apiKey", "bearer"]);
    expect(card.securityRequirements.map((r) => Object.keys(r.schemes))).toEqual([
      ["apiKey"],
      ["bearer"],
    ]);
    expect(extensionOf(card)).toBeUndefined();
    const legacy = (await (await fetch(`${base}/a2a/echo/.well-known/agent.json`)).json()) as Json;
    expect(legacy.supportsAuthenticatedExtendedCard).toBe(true);
  });

  it.each(BINDINGS)("serves a client with a key in either header (%s)", async (binding) => {
    const ways: Record<string, string>[] = [
      { "x-api-key": KEY },
      { authorization: `Bearer ${KEY}` },
    ];
    for (const headers of ways) {
      const client = await a2aClient(base, "echo", binding, headers);
      const task = asTask(await client.sendMessage({ message: userMessage("hi") } as never));
      expect(responseText(task)).toBe("hi");
    }
  });

  it("refuses a JSON-RPC client without credentials: an error the SDK raises with its message", async () => {
    const client = await a2aClient(base, "echo", "JSONRPC");
    await expect(client.sendMessage({ message: userMessage("hi") } as never)).rejects.toMatchObject(
      {
        message: "missing API key or bearer token",
        envelopeCode: -32000,
        data: [{ reason: "UNAUTHENTICATED", domain: "acp-agui" }],
      },
    );
    await expect(
      collect(client.sendMessageStream({ message: userMessage("hi") } as never)),
    ).rejects.toMatchObject({ message: "missing API key or bearer token", envelopeCode: -32000 });
    const wrong = await a2aClient(base, "echo", "JSONRPC", { "x-api-key": "not-a-key" });
    await expect(wrong.getTask({ id: "any" } as never)).rejects.toMatchObject({
      message: "invalid API key or bearer token",
      envelopeCode: -32000,
    });
  });

  it("refuses an HTTP+JSON client without credentials with UNAUTHENTICATED", async () => {
    const client = await a2aClient(base, "echo", "HTTP+JSON");
    await expect(client.sendMessage({ message: userMessage("hi") } as never)).rejects.toMatchObject(
      { message: "missing API key or bearer token", statusCode: 401 },
    );
    const hourAgo = Math.floor(Date.now() / 1000) - 3600;
    const expired = await issuer.token("alice", {}, { expiresIn: hourAgo });
    const late = await a2aClient(base, "echo", "HTTP+JSON", { authorization: `Bearer ${expired}` });
    await expect(
      collect(late.sendMessageStream({ message: userMessage("hi") } as never)),
    ).rejects.toMatchObject({ message: "token expired", statusCode: 401 });
  });

  it("answers the refusal in each binding's shape, with its challenge", async () => {
    const rpc = await fetch(`${base}/a2a/echo`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "GetTask", params: { id: "x" } }),
    });
    expect(rpc.status).toBe(401);
    expect(rpc.headers.get("www-authenticate")).toBe("Bearer");
    expect(await rpc.json()).toEqual({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32000,
        message: "missing API key or bearer token",
        data: [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "UNAUTHENTICATED",
            domain: "acp-agui",
          },
        ],
      },
    });
    const rest = await fetch(`${base}/a2a/echo/tasks/x`, { headers: { "a2a-version": "1.0" } });
    expect(rest.status).toBe(401);
    expect(rest.headers.get("www-authenticate")).toBe("Bearer");
    expect(await rest.json()).toMatchObject({
      error: {
        code: 401,
        status: "UNAUTHENTICATED",
        message: "missing API key or bearer token",
        details: [{ reason: "UNAUTHENTICATED" }],
      },
    });
  });

  it.each(BINDINGS)(
    "refuses a key for other agents with PERMISSION_DENIED (%s)",
    async (binding) => {
      const client = await a2aClient(base, "echo", binding, { "x-api-key": OTHER_AGENTS_KEY });
      const refused = client.sendMessage({ message: userMessage("hi") } as never);
      const message = 'API key "other" may not use agent echo';
      if (binding === "JSONRPC") {
        await expect(refused).rejects.toMatchObject({
          message,
          envelopeCode: -32000,
          data: [{ reason: "PERMISSION_DENIED" }],
        });
      } else {
        await expect(refused).rejects.toMatchObject({ message, statusCode: 403 });
      }
      // Its own agent serves it.
      const own = await a2aClient(base, "other", binding, { "x-api-key": OTHER_AGENTS_KEY });
      const task = asTask(await own.sendMessage({ message: userMessage("mine") } as never));
      expect(responseText(task)).toBe("mine");
    },
  );

  it.each(BINDINGS)("gives an authenticated caller the extended card (%s)", async (binding) => {
    for (const [headers, caller] of [
      [{ "x-api-key": KEY }, "key:app"],
      [{ authorization: `Bearer ${await issuer.token("alice")}` }, "user:alice"],
    ] as const) {
      const client = await a2aClient(base, "echo", binding, headers);
      // The SDK fetches the extended card because the public card says there is one.
      const card = await client.getAgentCard();
      expect(card.name).toBe("echo");
      const extension = extensionOf(card);
      expect(extension?.params).toMatchObject({
        caller,
        acp: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/agents\/[0-9a-f-]{36}$/),
        agui: `${base}/ag-ui/echo`,
        limits: { runTimeoutSeconds: expect.any(Number) },
      });
      // The ACP link is the agent's real descriptor.
      const acp = await fetch(extension?.params?.acp as string, { headers });
      expect(acp.status).toBe(200);
      expect(((await acp.json()) as Json).metadata).toMatchObject({ ref: { name: "echo" } });
    }
  });

  it("serves 0.3's authenticated extended card in 0.3's shape", async () => {
    const response = await fetch(`${base}/a2a/echo`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": KEY },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "agent/getAuthenticatedExtendedCard" }),
    });
    const body = (await response.json()) as { result: Json };
    expect(body.result).toMatchObject({
      protocolVersion: "0.3.0",
      capabilities: { extensions: [{ uri: "urn:acp-agui:agent", params: { caller: "key:app" } }] },
    });
  });
});

describe("A2A face without authentication", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildServing({ agents: [echoAgent("echo")] }, { unchecked: true });
    base = await listen(t);
  });
  afterAll(async () => t?.close());

  it.each(BINDINGS)("has no extended card: UnsupportedOperation (%s)", async (binding) => {
    const client = await a2aClient(base, "echo", binding);
    const card = await client.getAgentCard();
    expect(card.capabilities?.extendedAgentCard).toBe(false);
    expect(Object.keys(card.securitySchemes ?? {})).toEqual([]);
    const rpc = await fetch(`${base}/a2a/echo`, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0" },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard" }),
    });
    expect(rpc.status).toBe(200);
    expect(((await rpc.json()) as { error: Json }).error).toMatchObject({ code: -32004 });
    const rest = await fetch(`${base}/a2a/echo/extendedAgentCard`, {
      headers: { "a2a-version": "1.0" },
    });
    expect(rest.status).toBe(400);
    expect(await rest.json()).toMatchObject({
      error: { status: "FAILED_PRECONDITION", details: [{ reason: "UNSUPPORTED_OPERATION" }] },
    });
  });
});

describe("A2A face when the token issuer cannot be reached", () => {
  let t: TestApp;
  let issuer: TestIssuer;
  let base: string;
  beforeAll(async () => {
    issuer = await startIssuer();
    // Nothing listens on the discard port: the issuer's keys cannot be fetched.
    t = await buildServing(
      {
        server: {
          auth: {
            jwt: {
              issuer: issuer.issuer,
              audience: issuer.audience,
              jwksUrl: "http://127.0.0.1:9/jwks.json",
            },
          },
        },
        agents: [echoAgent("echo")],
      },
      { unchecked: true },
    );
    base = await listen(t);
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.close();
  });

  it.each(BINDINGS)("answers UNAVAILABLE, not a refusal of the token (%s)", async (binding) => {
    const client = await a2aClient(base, "echo", binding, {
      authorization: `Bearer ${await issuer.token("alice")}`,
    });
    const refused = client.sendMessage({ message: userMessage("hi") } as never);
    const message = "the token issuer's keys could not be fetched";
    if (binding === "JSONRPC") {
      await expect(refused).rejects.toMatchObject({
        message,
        envelopeCode: -32603,
        data: [{ reason: "UNAVAILABLE" }],
      });
    } else {
      await expect(refused).rejects.toMatchObject({ message, statusCode: 503 });
    }
  });
});
