/**
 * Refusals on the A2A face in the binding's own shape, over raw HTTP: an unknown agent (404)
 * and load (429: the rate limit, an agent's full queue) answer a JSON-RPC error object on the
 * JSON-RPC binding and a google.rpc.Status on HTTP+JSON, never an ACP error string.
 */
import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { type BuildOptions, build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
  - name: busy
    version: 1.0.0
    description: A slow echo with room for one run.
    adapter: { type: echo, delayMs: 500 }
    limits: { maxConcurrentRuns: 1, maxQueuedRuns: 0 }
`;

// biome-ignore lint/suspicious/noExplicitAny: the wire's JSON, read freely by the assertions
type Wire = any;

const V1 = { "content-type": "application/json", "a2a-version": "1.0" };

const getTask = (id: string | number) => ({
  jsonrpc: "2.0",
  id,
  method: "GetTask",
  params: { id: randomUUID() },
});

const sendMessage = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "SendMessage",
  params: {
    message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hello there" }] },
    configuration: { returnImmediately: true },
  },
});

async function call(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  return {
    status: response.status,
    headers: response.headers,
    body: (await response.json()) as Wire,
  };
}

const rpc = (base: string, agent: string, body: unknown) =>
  call(`${base}/a2a/${agent}`, { method: "POST", headers: V1, body: JSON.stringify(body) });

describe("A2A refusals in the binding's shape", () => {
  let t: TestApp | undefined;
  afterEach(async () => {
    await t?.close();
    t = undefined;
  });

  const serve = async (settings: BuildOptions["settings"] = {}) => {
    t = await build({ yaml: YAML, unchecked: true, settings });
    return listen(t);
  };

  it("an unknown agent: a JSON-RPC error object (404) on JSON-RPC, a google.rpc.Status on HTTP+JSON", async () => {
    const base = await serve();
    const jsonRpc = await rpc(base, "nobody", getTask(7));
    expect(jsonRpc.status).toBe(404);
    expect(jsonRpc.body).toEqual({
      jsonrpc: "2.0",
      id: 7,
      error: {
        code: -32000,
        message: 'agent "nobody" not found',
        data: [
          {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            reason: "AGENT_NOT_FOUND",
            domain: "acp-agui",
          },
        ],
      },
    });
    const rest = await call(`${base}/a2a/nobody/tasks/${randomUUID()}`, { headers: V1 });
    expect(rest.status).toBe(404);
    expect(rest.body).toMatchObject({
      error: {
        code: 404,
        status: "NOT_FOUND",
        message: 'agent "nobody" not found',
        details: [{ reason: "AGENT_NOT_FOUND", domain: "acp-agui" }],
      },
    });
  });

  it("past the rate limit: 429 with retry-after, as a JSON-RPC error object or a google.rpc.Status", async () => {
    const base = await serve({ rateLimit: { max: 2, windowSeconds: 60 } });
    for (let i = 0; i < 2; i++) expect((await rpc(base, "echo", getTask(i))).status).toBe(200);

    const jsonRpc = await rpc(base, "echo", getTask(3));
    expect(jsonRpc.status).toBe(429);
    expect(Number(jsonRpc.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(jsonRpc.body).toMatchObject({
      jsonrpc: "2.0",
      // Refused before the body was read: the id could not be determined.
      id: null,
      error: {
        code: -32000,
        message: expect.stringMatching(/^rate limit of 2 requests per 60 s exceeded/),
        data: [{ reason: "RESOURCE_EXHAUSTED", domain: "acp-agui" }],
      },
    });

    const rest = await call(`${base}/a2a/echo/tasks/${randomUUID()}`, { headers: V1 });
    expect(rest.status).toBe(429);
    expect(Number(rest.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(rest.body).toMatchObject({
      error: {
        code: 429,
        status: "RESOURCE_EXHAUSTED",
        message: expect.stringMatching(/^rate limit of 2 requests per 60 s exceeded/),
        details: [{ reason: "RESOURCE_EXHAUSTED", domain: "acp-agui" }],
      },
    });
  });

  it("an agent's full queue: 429 with retry-after on both bindings, the task not made", async () => {
    const base = await serve();
    const first = await rpc(base, "busy", sendMessage(1));
    expect(first.status).toBe(200);
    expect(first.body.result.task.status.state).toMatch(/TASK_STATE_(SUBMITTED|WORKING)/);

    const jsonRpc = await rpc(base, "busy", sendMessage(2));
    expect(jsonRpc.status).toBe(429);
    expect(jsonRpc.headers.get("retry-after")).toBe("1");
    expect(jsonRpc.body).toMatchObject({
      jsonrpc: "2.0",
      id: 2,
      error: { code: -32000, data: [{ reason: "RESOURCE_EXHAUSTED", domain: "acp-agui" }] },
    });

    const rest = await call(`${base}/a2a/busy/message:send`, {
      method: "POST",
      headers: V1,
      body: JSON.stringify(sendMessage(3).params),
    });
    expect(rest.status).toBe(429);
    expect(rest.headers.get("retry-after")).toBe("1");
    expect(rest.body).toMatchObject({
      error: {
        code: 429,
        status: "RESOURCE_EXHAUSTED",
        details: [{ reason: "RESOURCE_EXHAUSTED" }],
      },
    });
    // Only the first task exists.
    const listed = await rpc(base, "busy", {
      jsonrpc: "2.0",
      id: 4,
      method: "ListTasks",
      params: {},
    });
    expect(listed.body.result.tasks).toHaveLength(1);
  });

  it.each([
    ["GET", "/a2a/echo/message:send", "POST"],
    ["GET", "/a2a/echo/message:stream", "POST"],
    ["POST", "/a2a/echo/tasks", "GET, HEAD"],
    ["PUT", `/a2a/echo/tasks/${randomUUID()}`, "GET, HEAD"],
    ["GET", `/a2a/echo/tasks/${randomUUID()}:cancel`, "POST"],
    ["DELETE", `/a2a/echo/tasks/${randomUUID()}:subscribe`, "GET, HEAD, POST"],
    ["DELETE", `/a2a/echo/tasks/${randomUUID()}/pushNotificationConfigs`, "GET, HEAD, POST"],
    ["POST", `/a2a/echo/tasks/${randomUUID()}/pushNotificationConfigs/c1`, "GET, HEAD, DELETE"],
    ["POST", "/a2a/echo/extendedAgentCard", "GET, HEAD"],
    ["POST", "/a2a/echo/.well-known/agent-card.json", "GET, HEAD"],
  ])(
    "a wrong verb on an HTTP+JSON path: 405 with Allow, a google.rpc.Status (%s %s)",
    async (method, path, allow) => {
      const base = await serve();
      const response = await call(`${base}${path}`, {
        method,
        headers: V1,
        body: method === "GET" ? undefined : "{}",
      });
      expect(response.status).toBe(405);
      expect(response.headers.get("allow")).toBe(allow);
      expect(response.body).toMatchObject({
        error: {
          code: 405,
          status: "UNIMPLEMENTED",
          message: `${method} ${path} is not allowed: this path takes ${allow}`,
          details: [{ reason: "METHOD_NOT_ALLOWED", domain: "acp-agui" }],
        },
      });
    },
  );

  it.each(["GET", "PUT", "DELETE", "PATCH"])(
    "%s on the JSON-RPC URL: a JSON-RPC error, 405 with Allow: POST",
    async (method) => {
      const base = await serve();
      for (const path of ["/a2a/echo", "/a2a/echo/"]) {
        const response = await call(`${base}${path}`, {
          method,
          headers: V1,
          body: method === "GET" ? undefined : "{}",
        });
        expect(response.status).toBe(405);
        expect(response.headers.get("allow")).toBe("POST");
        expect(response.body).toMatchObject({
          jsonrpc: "2.0",
          id: null,
          error: { code: -32600, data: [{ reason: "METHOD_NOT_ALLOWED" }] },
        });
      }
    },
  );

  it("an unknown path: 404 as a google.rpc.Status naming the operations", async () => {
    const base = await serve();
    for (const [method, path] of [
      ["GET", "/a2a/echo/nope"],
      ["POST", "/a2a/echo/message:explode"],
      ["POST", `/a2a/echo/tasks/${randomUUID()}:explode`],
      ["GET", "/a2a/echo/tasks/x/y/z/w"],
    ] as const) {
      const response = await call(`${base}${path}`, {
        method,
        headers: V1,
        body: method === "POST" ? "{}" : undefined,
      });
      expect(response.status).toBe(404);
      expect(response.body.error).toMatchObject({
        code: 404,
        status: "NOT_FOUND",
        message: expect.stringContaining(`${method} ${path} is not an A2A operation`),
      });
    }
    const noAgent = await call(`${base}/a2a/nobody/nope`, { headers: V1 });
    expect(noAgent.status).toBe(404);
    expect(noAgent.body.error.details[0].reason).toBe("AGENT_NOT_FOUND");
  });

  it("a malformed URL (400) and an over-long segment (414) in the binding's shape", async () => {
    const base = await serve();
    const bad = await call(`${base}/a2a/echo/tasks/%E0%A4%A`, { headers: V1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 400, status: "INVALID_ARGUMENT" });
    const long = await call(`${base}/a2a/echo/tasks/${"x".repeat(300)}`, { headers: V1 });
    expect(long.status).toBe(414);
    expect(long.body.error).toMatchObject({
      code: 414,
      message: "a path segment of the URL is too long",
    });
    const rpcLong = await call(`${base}/a2a/${"x".repeat(300)}`, {
      method: "POST",
      headers: V1,
      body: JSON.stringify(getTask(1)),
    });
    expect(rpcLong.status).toBe(414);
    expect(rpcLong.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } });
  });
});
