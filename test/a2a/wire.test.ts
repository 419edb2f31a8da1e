/**
 * The A2A face as clients other than the JS SDK meet it, with plain `fetch`: JSON-RPC on the
 * interface URL with a trailing slash (Python's httpx base URLs), ProtoJSON bodies and queries
 * in either field-name form with enums by number, the card's caching headers and 304, content
 * types, empty bodies, batches and notifications; and with the SDK: `createFromUrl` on the base
 * URL, ListTasks without a status filter over JSON-RPC, and an idempotent config delete.
 */
import { randomUUID } from "node:crypto";
import { ListTasksRequest, TaskPushNotificationConfig } from "@a2a-js/sdk";
import { ClientFactory, JsonRpcTransportFactory, RestTransportFactory } from "@a2a-js/sdk/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { a2aClient, asTask, BINDINGS, userMessage } from "./helpers.js";

// biome-ignore lint/suspicious/noExplicitAny: the wire's JSON, read freely by the assertions
type Wire = any;

const V1 = { "content-type": "application/json", "a2a-version": "1.0" };
const ECHO = `
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }`;

describe("the A2A face with plain fetch", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({
      yaml: `agents:${ECHO}`,
      unchecked: true,
      settings: {
        a2a: { ...DEFAULT_SETTINGS.a2a, cardMaxAgeSeconds: 120 },
        webhooks: { ...DEFAULT_SETTINGS.webhooks, allowPrivateTargets: true, maxAttempts: 1 },
      },
    });
    base = await listen(t);
  });
  afterAll(() => t.close());

  const post = async (path: string, body: unknown, headers: Record<string, string> = V1) => {
    const response = await fetch(`${base}${path}`, {
      method: "POST",
      headers,
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: (text === "" ? undefined : JSON.parse(text)) as Wire,
    };
  };
  const rpc = (method: string, params: unknown, path = "/a2a/echo") =>
    post(path, { jsonrpc: "2.0", id: 3, method, params });

  it("takes JSON-RPC on the interface URL with a trailing slash, HTTP+JSON unchanged", async () => {
    const message = { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "slash" }] };
    const answer = await rpc("SendMessage", { message }, "/a2a/echo/");
    expect(answer.status).toBe(200);
    expect(answer.body.result.task.status.state).toBe("TASK_STATE_COMPLETED");
    const task = await fetch(`${base}/a2a/echo/tasks/${answer.body.result.task.id}`, {
      headers: V1,
    });
    expect(((await task.json()) as Wire).id).toBe(answer.body.result.task.id);
  });

  it("reads ProtoJSON bodies in either field-name form, enums by number, unknown fields ignored", async () => {
    const contextId = `snake-${randomUUID()}`;
    const sent = await rpc("SendMessage", {
      message: {
        message_id: randomUUID(),
        context_id: contextId,
        role: 1,
        parts: [{ text: "snake", media_type: "text/plain" }],
        not_a_field: true,
      },
      configuration: { history_length: 1, return_immediately: false },
      someday: "ignored",
    });
    const task = sent.body.result.task;
    expect(task).toMatchObject({ contextId, status: { state: "TASK_STATE_COMPLETED" } });
    // Answers stay lowerCamelCase.
    expect(JSON.stringify(sent.body)).not.toMatch(/context_id|message_id|task_id/);
    expect(task.history).toHaveLength(1);

    const got = await rpc("GetTask", { id: task.id, history_length: 0 });
    expect(got.body.result.history).toBeUndefined();
    const listed = await rpc("ListTasks", { context_id: contextId, status: 3, page_size: 5 });
    expect(listed.body.result.tasks.map((x: Wire) => x.id)).toEqual([task.id]);
    const query = await fetch(
      `${base}/a2a/echo/tasks?context_id=${contextId}&status=TASK_STATE_COMPLETED&page_size=5`,
      { headers: V1 },
    );
    expect(((await query.json()) as Wire).tasks.map((x: Wire) => x.id)).toEqual([task.id]);

    const created = await rpc("CreateTaskPushNotificationConfig", {
      task_id: task.id,
      id: "snake-config",
      url: "https://hooks.example.com/a2a",
      authentication: { scheme: "Bearer", credentials: "c" },
    });
    expect(created.body.result).toMatchObject({ id: "snake-config", taskId: task.id });
    const config = await rpc("GetTaskPushNotificationConfig", {
      task_id: task.id,
      id: "snake-config",
    });
    expect(config.body.result.url).toBe("https://hooks.example.com/a2a");
    const rest = await post(`/a2a/echo/tasks/${task.id}/pushNotificationConfigs`, {
      task_id: task.id,
      url: "https://hooks.example.com/b",
    });
    expect(rest.status).toBe(200);
    expect(rest.body.taskId).toBe(task.id);
  });

  it("serves each card with Cache-Control, a strong ETag, Last-Modified, and 304 when unchanged", async () => {
    for (const path of ["agent-card.json", "agent.json"]) {
      const url = `${base}/a2a/echo/.well-known/${path}`;
      const first = await fetch(url);
      expect(first.status).toBe(200);
      expect(first.headers.get("cache-control")).toBe("public, max-age=120");
      const etag = first.headers.get("etag")!;
      expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);
      const lastModified = first.headers.get("last-modified")!;
      expect(new Date(lastModified).getTime()).toBeLessThanOrEqual(Date.now());
      const byTag = await fetch(url, { headers: { "if-none-match": etag } });
      expect(byTag.status).toBe(304);
      expect(byTag.headers.get("etag")).toBe(etag);
      expect(await byTag.text()).toBe("");
      const byDate = await fetch(url, { headers: { "if-modified-since": lastModified } });
      expect(byDate.status).toBe(304);
      const stale = await fetch(url, { headers: { "if-none-match": '"other"' } });
      expect(stale.status).toBe(200);
      const older = new Date(Date.parse(lastModified) - 60_000).toUTCString();
      expect((await fetch(url, { headers: { "if-modified-since": older } })).status).toBe(200);
    }
    const card = await fetch(`${base}/a2a/echo/.well-known/agent-card.json`);
    const legacy = await fetch(`${base}/a2a/echo/.well-known/agent.json`);
    expect(card.headers.get("etag")).not.toBe(legacy.headers.get("etag"));
  });

  it("answers a content type it does not take with 415 on both bindings", async () => {
    const body = '{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}';
    const jsonRpc = await post("/a2a/echo", body, { "content-type": "text/plain" });
    expect(jsonRpc.status).toBe(415);
    expect(jsonRpc.body).toMatchObject({
      jsonrpc: "2.0",
      error: {
        code: -32005,
        message:
          'content-type "text/plain" is not accepted: send JSON with content-type application/json or application/a2a+json',
        data: [{ reason: "CONTENT_TYPE_NOT_SUPPORTED" }],
      },
    });
    const rest = await post("/a2a/echo/message:send", "<xml/>", { "content-type": "text/xml" });
    expect(rest.status).toBe(415);
    expect(rest.body.error).toMatchObject({
      code: 415,
      details: [{ reason: "CONTENT_TYPE_NOT_SUPPORTED" }],
    });
    // A body that is not JSON under a JSON type is a parse error.
    const bad = await post("/a2a/echo", "{oops");
    expect(bad.body.error.code).toBe(-32700);
  });

  it("answers an empty body -32700", async () => {
    const empty = await post("/a2a/echo", "", V1);
    expect(empty.body).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
    // No body and no content type at all.
    const none = await fetch(`${base}/a2a/echo`, {
      method: "POST",
      headers: { "a2a-version": "1.0" },
    });
    expect(await none.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } });
  });

  it("answers a batch as JSON-RPC 2.0 says: one response per call, notifications unanswered", async () => {
    const batch = await post("/a2a/echo", [
      { jsonrpc: "2.0", id: "a", method: "ListTasks", params: { pageSize: 1 } },
      { jsonrpc: "2.0", id: "b", method: "GetTask", params: { id: randomUUID() } },
      { jsonrpc: "2.0", method: "ListTasks", params: {} },
      { jsonrpc: "2.0", id: "c", method: "SendStreamingMessage", params: {} },
      42,
    ]);
    expect(batch.status).toBe(200);
    expect(batch.body).toHaveLength(4);
    expect(batch.body[0]).toMatchObject({ id: "a", result: { pageSize: 1 } });
    expect(batch.body[1]).toMatchObject({ id: "b", error: { code: -32001 } });
    expect(batch.body[2]).toMatchObject({ id: "c", error: { code: -32600 } });
    expect(batch.body[3]).toMatchObject({ id: null, error: { code: -32600 } });
    const notifications = await post("/a2a/echo", [
      { jsonrpc: "2.0", method: "ListTasks", params: {} },
    ]);
    expect(notifications.status).toBe(204);
    const alone = await post("/a2a/echo", { jsonrpc: "2.0", method: "ListTasks", params: {} });
    expect(alone.status).toBe(204);
    const tooMany = await post(
      "/a2a/echo",
      Array.from({ length: 51 }, (_, i) => ({ jsonrpc: "2.0", id: i, method: "ListTasks" })),
    );
    expect(tooMany.body).toMatchObject({ id: null, error: { code: -32600 } });
  });
});

describe("the A2A face's base URL with the official client", () => {
  it("resolves the card from the base URL with a trailing slash, and from the base itself with one agent", async () => {
    const t = await build({ yaml: `agents:${ECHO}`, unchecked: true });
    try {
      const base = await listen(t);
      const factory = new ClientFactory({
        transports: [new JsonRpcTransportFactory(), new RestTransportFactory()],
      });
      for (const url of [`${base}/a2a/echo/`, `${base}/a2a/echo`]) {
        const client = await factory.createFromUrl(url);
        const task = asTask(await client.sendMessage({ message: userMessage("found") } as never));
        expect(task.status?.state).toBe(3);
      }
    } finally {
      await t.close();
    }
  });

  it("says where cards are when the base names no agent's", async () => {
    const t = await build({
      yaml: `agents:${ECHO}
  - name: other
    version: 1.0.0
    description: Another.
    adapter: { type: echo }`,
      unchecked: true,
    });
    try {
      const base = await listen(t);
      for (const path of ["/a2a/.well-known/agent-card.json", "/a2a/", "/a2a/.well-known/x"]) {
        const response = await fetch(`${base}${path}`);
        expect(response.status).toBe(404);
        const body = (await response.json()) as Wire;
        expect(body.error.status).toBe("NOT_FOUND");
        expect(body.error.message).toContain(
          "an agent's card is at /a2a/{agent}/.well-known/agent-card.json",
        );
        expect(body.error.message).toContain('createFromUrl("<origin>/a2a/{agent}/")');
      }
    } finally {
      await t.close();
    }
  });
});

describe.each(BINDINGS)("the official client over %s", (binding) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({
      yaml: `agents:${ECHO}`,
      unchecked: true,
      settings: {
        webhooks: { ...DEFAULT_SETTINGS.webhooks, allowPrivateTargets: true, maxAttempts: 1 },
      },
    });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("lists tasks with no status filter (the SDK sends UNRECOGNIZED)", async () => {
    const client = await a2aClient(base, "echo", binding);
    const contextId = `list-${randomUUID()}`;
    const task = asTask(
      await client.sendMessage({ message: userMessage("x", { contextId }) } as never),
    );
    const listed = await client.listTasks(ListTasksRequest.fromJSON({ contextId }));
    expect(listed.tasks.map((x) => x.id)).toEqual([task.id]);
  });

  it("deletes a push config idempotently", async () => {
    const client = await a2aClient(base, "echo", binding);
    const task = asTask(await client.sendMessage({ message: userMessage("x") } as never));
    await client.createTaskPushNotificationConfig(
      TaskPushNotificationConfig.fromJSON({
        taskId: task.id,
        id: "once",
        url: "https://hooks.example.com/x",
      }),
    );
    for (let i = 0; i < 2; i++) {
      await client.deleteTaskPushNotificationConfig({ taskId: task.id, id: "once" } as never);
    }
    const listed = await client.listTaskPushNotificationConfig({ taskId: task.id } as never);
    expect(listed.configs).toEqual([]);
    // A task that is not the caller's (or not there) is still TaskNotFound.
    await expect(
      client.deleteTaskPushNotificationConfig({ taskId: randomUUID(), id: "once" } as never),
    ).rejects.toMatchObject({ name: "TaskNotFoundError" });
  });
});
