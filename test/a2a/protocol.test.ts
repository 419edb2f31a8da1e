/**
 * The A2A face on the wire, without a client library: the cards, ProtoJSON shapes, the
 * A2A-Version header, and the error objects of both bindings (JSON-RPC codes with a
 * google.rpc.ErrorInfo detail; HTTP+JSON's google.rpc.Status with its status code).
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
`;

// biome-ignore lint/suspicious/noExplicitAny: the wire's JSON, read freely by the assertions
type Wire = any;

const V1 = { "content-type": "application/json", "a2a-version": "1.0" };
const message = (text: string, extra: Record<string, unknown> = {}) => ({
  messageId: randomUUID(),
  role: "ROLE_USER",
  parts: [{ text }],
  ...extra,
});

describe("the A2A face on the wire", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML, unchecked: true });
    base = await listen(t);
  });
  afterAll(() => t.close());

  const rpc = async (body: unknown, headers: Record<string, string> = V1) => {
    const response = await fetch(`${base}/a2a/echo`, {
      method: "POST",
      headers,
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Wire };
  };
  const call = (method: string, params: unknown, id: unknown = 7) =>
    rpc({ jsonrpc: "2.0", id, method, params });

  it("serves a 1.0 card with both bindings and a 0.3 card", async () => {
    const card = (await (
      await fetch(`${base}/a2a/echo/.well-known/agent-card.json`)
    ).json()) as Wire;
    expect(card).toMatchObject({
      name: "echo",
      description: "Echoes the last user message.",
      version: "1.0.0",
      capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: false },
      skills: [{ id: "echo", name: "echo", tags: ["echo"] }],
    });
    expect(card.supportedInterfaces).toEqual(
      expect.arrayContaining([
        { url: `${base}/a2a/echo`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
        { url: `${base}/a2a/echo`, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      ]),
    );
    expect(card.securitySchemes).toBeUndefined();
    const legacy = (await (
      await fetch(`${base}/a2a/echo@1.0.0/.well-known/agent.json`)
    ).json()) as Wire;
    expect(legacy).toMatchObject({
      protocolVersion: "0.3.0",
      url: `${base}/a2a/echo`,
      preferredTransport: "JSONRPC",
    });
  });

  it("answers in ProtoJSON: enum names, camelCase, no kind", async () => {
    const { body } = await call("SendMessage", { message: message("shape") });
    const task = body.result.task;
    expect(task.status.state).toBe("TASK_STATE_COMPLETED");
    expect(task.history[0]).toMatchObject({ role: "ROLE_USER", parts: [{ text: "shape" }] });
    expect(JSON.stringify(body)).not.toContain('"kind"');
    expect(body.id).toBe(7);
  });

  it("keeps the client's messageId as the AG-UI message id the thread holds", async () => {
    const contextId = randomUUID();
    const messageId = `msg-${randomUUID()}`;
    await call("SendMessage", { message: message("kept", { messageId, contextId }) });
    const thread = await t.call("GET", `/threads/${contextId}`);
    expect((thread.body as { messages: unknown[] }).messages[0]).toEqual({
      id: messageId,
      role: "user",
      content: "kept",
    });
  });

  it.each([
    ["a body that is not JSON", "{oops", -32700],
    ["a request without jsonrpc", { id: 1, method: "GetTask", params: {} }, -32600],
    ["an empty batch", [], -32600],
    ["an object id", { jsonrpc: "2.0", id: { x: 1 }, method: "GetTask", params: {} }, -32600],
    ["an unknown method", { jsonrpc: "2.0", id: 1, method: "tasks/explode", params: {} }, -32601],
    ["a missing task id", { jsonrpc: "2.0", id: 1, method: "GetTask", params: {} }, -32602],
    ["an unknown task", { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } }, -32001],
    [
      "a part with two contents",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { ...message("x"), parts: [{ text: "a", data: 1 }] } },
      },
      -32602,
    ],
    [
      "a file part",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "SendMessage",
        params: { message: { ...message("x"), parts: [{ url: "https://example.com/a.pdf" }] } },
      },
      -32005,
    ],
    [
      "a push config without a url",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "CreateTaskPushNotificationConfig",
        params: { taskId: "x" },
      },
      -32602,
    ],
    [
      "a push config of an unknown task",
      {
        jsonrpc: "2.0",
        id: 1,
        method: "CreateTaskPushNotificationConfig",
        params: { taskId: "x", url: "https://example.com/hook" },
      },
      -32001,
    ],
    ["the extended card", { jsonrpc: "2.0", id: 1, method: "GetExtendedAgentCard" }, -32004],
  ])("answers %s with a JSON-RPC error", async (_, body, code) => {
    const { status, body: answer } = await rpc(body);
    expect(status).toBe(200);
    expect(answer.jsonrpc).toBe("2.0");
    expect(answer.error.code).toBe(code);
    expect(answer.error.data[0]).toMatchObject({
      "@type": "type.googleapis.com/google.rpc.ErrorInfo",
      domain: "a2a-protocol.org",
    });
  });

  it("refuses an A2A version it does not speak, on both bindings", async () => {
    const { body } = await rpc(
      { jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "x" } },
      { "content-type": "application/json", "a2a-version": "2.0" },
    );
    expect(body.error.code).toBe(-32009);
    const rest = await fetch(`${base}/a2a/echo/tasks/x`, { headers: { "a2a-version": "9.9" } });
    expect(rest.status).toBe(400);
    expect(((await rest.json()) as Wire).error.details[0].reason).toBe("VERSION_NOT_SUPPORTED");
  });

  it("answers HTTP+JSON errors as google.rpc.Status with the specification's codes", async () => {
    const missing = await fetch(`${base}/a2a/echo/tasks/${randomUUID()}`, { headers: V1 });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({
      error: {
        code: 404,
        status: "NOT_FOUND",
        details: [{ reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" }],
      },
    });
    const bad = await fetch(`${base}/a2a/echo/message:send`, {
      method: "POST",
      headers: V1,
      body: JSON.stringify({ message: { role: "ROLE_USER" } }),
    });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as Wire).error.details[0].reason).toBe("INVALID_PARAMS");
    const unknown = await fetch(`${base}/a2a/echo/message:explode`, {
      method: "POST",
      headers: V1,
      body: "{}",
    });
    expect(unknown.status).toBe(404);
    const agent = await fetch(`${base}/a2a/nobody/tasks`, { headers: V1 });
    expect(agent.status).toBe(404);
  });

  it("answers HTTP+JSON send with a SendMessageResponse", async () => {
    const response = await fetch(`${base}/a2a/echo/message:send`, {
      method: "POST",
      headers: { ...V1, "content-type": "application/a2a+json" },
      body: JSON.stringify({ message: message("rest") }),
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Wire;
    expect(body.task.status.state).toBe("TASK_STATE_COMPLETED");
  });
});
