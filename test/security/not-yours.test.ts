/**
 * Not found and not yours are one answer: every operation that names a context, task, push
 * config or thread answers another caller's exactly as one nobody used, tested pairwise (the same
 * request with the other caller's id, then with a fresh one, the answers equal but for the id)
 * on both A2A bindings, the AG-UI face, CopilotKit and ACP.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { buildServing, echoAgent } from "./helpers.js";

const KEY_A = "owner-a-key-0123456789abcdef";
const KEY_B = "prober-b-key-0123456789abcdef";
const as = (key: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${key}`,
  "a2a-version": "1.0",
  ...extra,
});
const JSON_TYPE = { "content-type": "application/json" };

// biome-ignore lint/suspicious/noExplicitAny: the wire's JSON, read freely by the assertions
type Wire = any;

describe("another caller's ids are answered as ids nobody used", () => {
  let t: TestApp;
  let base: string;
  /** A's: a task on a UUID context, a push config on it, an ACP thread and run. */
  const a = { contextId: randomUUID(), taskId: "", threadId: "", runId: "" };
  beforeAll(async () => {
    t = await buildServing(
      {
        server: {
          auth: {
            keys: [
              { key: KEY_A, name: "a" },
              { key: KEY_B, name: "b" },
            ],
          },
        },
        agents: [echoAgent("echo")],
      },
      { unchecked: true },
    );
    base = await listen(t);
    const sent = await rpc(KEY_A, "SendMessage", {
      message: {
        messageId: randomUUID(),
        contextId: a.contextId,
        role: "ROLE_USER",
        parts: [{ text: "mine" }],
      },
    });
    a.taskId = sent.body.result.task.id;
    const config = await rpc(KEY_A, "CreateTaskPushNotificationConfig", {
      taskId: a.taskId,
      id: "cfg",
      url: "https://hooks.example.com/a",
    });
    expect(config.body.result.id).toBe("cfg");
    a.threadId = a.contextId;
    a.runId = a.taskId;
  });
  afterAll(() => t?.close());

  async function send(key: string, method: string, path: string, body?: unknown) {
    const response = await fetch(`${base}${path}`, {
      method,
      headers: as(key, body === undefined ? {} : JSON_TYPE),
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const json = response.headers.get("content-type")?.includes("json") && text !== "";
    return { status: response.status, text, body: (json ? JSON.parse(text) : undefined) as Wire };
  }
  const rpc = (key: string, method: string, params: unknown) =>
    send(key, "POST", "/a2a/echo", { jsonrpc: "2.0", id: 1, method, params });

  /** B's answer for A's id and for a fresh one, the id replaced by <ID> in both. */
  async function pair(
    ask: (id: string) => Promise<{ status: number; text: string }>,
    theirs: string,
  ) {
    const fresh = randomUUID();
    const strip = (answer: { status: number; text: string }, id: string) => ({
      status: answer.status,
      text: answer.text.replaceAll(id, "<ID>"),
    });
    const [other, nobody] = [strip(await ask(theirs), theirs), strip(await ask(fresh), fresh)];
    expect(other).toEqual(nobody);
    return other;
  }

  it.each([
    ["GetTask", (id: string) => ({ id })],
    ["CancelTask", (id: string) => ({ id })],
    ["SubscribeToTask", (id: string) => ({ id })],
    ["ListTaskPushNotificationConfigs", (id: string) => ({ taskId: id })],
    ["GetTaskPushNotificationConfig", (id: string) => ({ taskId: id, id: "cfg" })],
    ["DeleteTaskPushNotificationConfig", (id: string) => ({ taskId: id, id: "cfg" })],
    [
      "CreateTaskPushNotificationConfig",
      (id: string) => ({ taskId: id, url: "https://hooks.example.com/b" }),
    ],
    [
      "SendMessage",
      (id: string) => ({
        message: { messageId: "m", role: "ROLE_USER", taskId: id, parts: [{ text: "x" }] },
      }),
    ],
  ] as const)("JSON-RPC %s on a task", async (method, params) => {
    const answer = await pair((id) => rpc(KEY_B, method, params(id)), a.taskId);
    expect(answer.text).toContain('"code":-32001');
  });

  it.each([
    ["GET", (id: string) => `/tasks/${id}`],
    ["POST", (id: string) => `/tasks/${id}:cancel`],
    ["GET", (id: string) => `/tasks/${id}:subscribe`],
    ["GET", (id: string) => `/tasks/${id}/pushNotificationConfigs`],
    ["GET", (id: string) => `/tasks/${id}/pushNotificationConfigs/cfg`],
    ["DELETE", (id: string) => `/tasks/${id}/pushNotificationConfigs/cfg`],
  ] as const)("HTTP+JSON %s on a task (%#)", async (method, path) => {
    const answer = await pair(
      (id) => send(KEY_B, method, `/a2a/echo${path(id)}`, method === "POST" ? {} : undefined),
      a.taskId,
    );
    expect(answer.status).toBe(404);
  });

  it("a context: a message on it, and ListTasks by it, on both bindings", async () => {
    // Each fresh context is used once, so both answers are of a context the caller never used.
    const onContext = async (contextId: string) => {
      const sent = await rpc(KEY_B, "SendMessage", {
        message: { messageId: randomUUID(), contextId, role: "ROLE_USER", parts: [{ text: "hi" }] },
      });
      const task = sent.body.result.task;
      const listed = await send(KEY_B, "GET", `/a2a/echo/tasks?contextId=${contextId}`);
      const state = task.artifacts.find((x: Wire) => x.artifactId === "state").parts[0].data;
      return {
        status: sent.status,
        text: JSON.stringify({
          contextId: task.contextId,
          state: task.status.state,
          // The echo agent counts the turns of its thread: 1 on a context nobody used before.
          turns: state.turns,
          listed: listed.body.tasks.map((x: Wire) => x.id === task.id),
        }),
      };
    };
    const answer = await pair(onContext, a.contextId);
    expect(JSON.parse(answer.text)).toEqual({
      contextId: "<ID>",
      state: "TASK_STATE_COMPLETED",
      turns: 1,
      listed: [true],
    });
    // A's own context is untouched: still its one task.
    const own = await send(KEY_A, "GET", `/a2a/echo/tasks?contextId=${a.contextId}`);
    expect(own.body.tasks.map((x: Wire) => x.id)).toEqual([a.taskId]);
  });

  it("the AG-UI face: a run, a connect and a stop on a thread", async () => {
    const theirs = randomUUID();
    expect((await runAgui(KEY_A, theirs)).status).toBe(200);
    const turnsOf = (text: string) => /"turns":(\d+)/.exec(text)?.[1];
    await pair(async (threadId) => {
      const ran = await runAgui(KEY_B, threadId);
      return { status: ran.status, text: `turns ${turnsOf(ran.text)}` };
    }, theirs);
    const other = randomUUID();
    await runAgui(KEY_A, other);
    await pair(
      (threadId) =>
        send(KEY_B, "POST", "/ag-ui/echo/connect", { threadId, runId: "c", messages: [] }),
      other,
    );
    await pair((threadId) => send(KEY_B, "POST", `/ag-ui/echo/stop/${threadId}`), other);
  });

  const runAgui = (key: string, threadId: string) =>
    send(key, "POST", "/ag-ui/echo", {
      threadId,
      runId: randomUUID(),
      messages: [{ id: randomUUID(), role: "user", content: "hello" }],
    });

  it("CopilotKit: a thread's views, its change and its stop", async () => {
    const theirs = randomUUID();
    const ran = await send(KEY_A, "POST", "/copilotkit/agent/echo/run", {
      threadId: theirs,
      runId: "r",
      messages: [{ id: "m", role: "user", content: "hi" }],
    });
    expect(ran.status).toBe(200);
    for (const view of ["messages", "state", "events"]) {
      const answer = await pair(
        (id) => send(KEY_B, "GET", `/copilotkit/threads/${id}/${view}`),
        theirs,
      );
      expect(answer.status).toBe(404);
    }
    await pair(
      (id) => send(KEY_B, "PATCH", `/copilotkit/threads/${id}`, { agentId: "echo", name: "x" }),
      theirs,
    );
    await pair((id) => send(KEY_B, "POST", `/copilotkit/agent/echo/stop/${id}`, {}), theirs);
    // A run on it: a new conversation of the caller's own, as on a thread nobody used.
    await pair(async (threadId) => {
      const ran = await send(KEY_B, "POST", "/copilotkit/agent/echo/run", {
        threadId,
        runId: randomUUID(),
        messages: [{ id: randomUUID(), role: "user", content: "hello" }],
      });
      return { status: ran.status, text: `turns ${/"turns":(\d+)/.exec(ran.text)?.[1]}` };
    }, theirs);
  });

  it.each([
    ["GET", (id: string) => `/threads/${id}`, undefined],
    ["PATCH", (id: string) => `/threads/${id}`, { metadata: { x: 1 } }],
    ["DELETE", (id: string) => `/threads/${id}`, undefined],
    ["POST", (id: string) => `/threads/${id}/copy`, {}],
    ["GET", (id: string) => `/threads/${id}/history`, undefined],
    ["GET", (id: string) => `/threads/${id}/runs`, undefined],
    [
      "POST",
      (id: string) => `/threads/${id}/runs`,
      { input: { messages: [{ role: "user", content: "x" }] } },
    ],
  ] as const)("ACP %s on a thread (%#)", async (method, path, body) => {
    const answer = await pair((id) => send(KEY_B, method, path(id), body), a.threadId);
    expect(answer.status).toBe(404);
  });

  it.each([
    ["GET", (id: string) => `/runs/${id}`],
    ["GET", (id: string) => `/runs/${id}/wait`],
    ["POST", (id: string) => `/runs/${id}/cancel`],
    ["DELETE", (id: string) => `/runs/${id}`],
  ] as const)("ACP %s on a run (%#)", async (method, path) => {
    const answer = await pair(
      (id) => send(KEY_B, method, path(id), method === "POST" ? {} : undefined),
      a.runId,
    );
    expect(answer.status).toBe(404);
  });
});
