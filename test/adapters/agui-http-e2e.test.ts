import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { AguiTestServer, runEvents, send } from "../helpers/agui-server.js";
import { build, type TestApp } from "../helpers/app.js";

type Json = Record<string, unknown>;

describe("agui-http end to end: ACP client → server → remote AG-UI agent", () => {
  let remote: AguiTestServer;
  let t: TestApp;
  const agentId = agentIdFor("remote", "1.0.0");

  beforeAll(async () => {
    remote = await AguiTestServer.start();
    process.env.AGUI_E2E_TOKEN = "e2e-token";
    t = await build({
      yaml: `
agents:
  - name: remote
    version: 1.0.0
    description: A remote AG-UI agent over HTTP.
    adapter:
      type: agui-http
      url: ${remote.url}
      headers: { authorization: "Bearer \${AGUI_E2E_TOKEN}" }
      idleTimeoutMs: 5000
`,
    });
  });
  afterAll(async () => {
    await t.close();
    await remote.close();
    delete process.env.AGUI_E2E_TOKEN;
  });

  async function post(url: string, body: unknown): Promise<Json> {
    const res = await t.call("POST", url, body);
    expect(res.status, `POST ${url}: ${res.raw}`).toBe(200);
    return res.body as Json;
  }

  it("POST /threads/{id}/runs/wait › success; values and messages are what the remote produced", async () => {
    const threadId = (await post("/threads", {})).thread_id as string;
    // The remote mints its own runId; the adapter maps it back to the server's.
    remote.reply((input) => ({
      stream: send(
        ...runEvents(input, {
          text: "Hello from the remote",
          state: { answered: true, turns: 1 },
          runId: "remote-minted-run",
          result: { ok: true },
        }),
      ),
    }));
    const wait = (await post(`/threads/${threadId}/runs/wait`, {
      agent_id: agentId,
      input: { messages: [{ role: "user", content: "hi" }] },
      config: { tags: ["e2e"], configurable: { model: "small" } },
    })) as { run: Json; output: Json };

    expect(wait.run.status).toBe("success");
    const expectedMessages = [
      { id: expect.any(String), role: "user", content: "hi" },
      { id: "remote-msg-1", role: "assistant", content: "Hello from the remote" },
    ];
    expect(wait.output).toEqual({
      type: "result",
      values: { answered: true, turns: 1 },
      messages: expectedMessages,
      result: { ok: true },
    });

    const history = (await t.call("GET", `/threads/${threadId}/history`)).body as Json[];
    expect(history[0]).toMatchObject({
      values: { answered: true, turns: 1 },
      messages: expectedMessages,
    });
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread).toMatchObject({ status: "idle", values: { answered: true, turns: 1 } });

    const received = remote.last;
    expect(received.headers.authorization).toBe("Bearer e2e-token");
    expect(received.input).toMatchObject({
      threadId,
      protocolVersion: "1.0",
      messages: [{ role: "user", content: "hi" }],
      forwardedProps: { acp: { config: { tags: ["e2e"], configurable: { model: "small" } } } },
    });
  });

  it("a second run on the thread sends the remote the thread's messages and state", async () => {
    const threadId = (await post("/threads", {})).thread_id as string;
    remote.reply((input) => ({ stream: send(...runEvents(input, { state: { turns: 1 } })) }));
    await post(`/threads/${threadId}/runs/wait`, {
      agent_id: agentId,
      input: { messages: [{ role: "user", content: "first" }] },
    });
    remote.reply((input) => ({
      stream: send(...runEvents(input, { messageId: "remote-msg-2", state: { turns: 2 } })),
    }));
    const wait = (await post(`/threads/${threadId}/runs/wait`, {
      agent_id: agentId,
      input: { messages: [{ role: "user", content: "second" }] },
    })) as { run: Json; output: Json };

    expect(wait.run.status).toBe("success");
    expect(remote.last.input.state).toEqual({ turns: 1 });
    expect(remote.last.input.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "first"],
      ["assistant", "Hello from the remote"],
      ["user", "second"],
    ]);
    expect(wait.output.values).toEqual({ turns: 2 });
  });

  it("POST …/cancel › aborts the remote request: the remote sees the connection close", async () => {
    const threadId = (await post("/threads", {})).thread_id as string;
    remote.reply((input) => ({
      stream: [...send(...runEvents(input).slice(0, 2)), { hang: true }],
    }));
    const before = remote.requests.length;
    const run = await post(`/threads/${threadId}/runs`, {
      agent_id: agentId,
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    await vi.waitFor(() => expect(remote.requests.length).toBe(before + 1));
    const res = await t.call("POST", `/threads/${threadId}/runs/${run.run_id}/cancel?wait=true`);
    expect(res.status).toBeLessThan(300);
    await remote.last.closed;
    expect(remote.last.clientAborted).toBe(true);
    const stored = (await t.call("GET", `/threads/${threadId}/runs/${run.run_id}`)).body as Json;
    expect(stored.status).not.toBe("pending");
  });

  it("a remote HTTP 500 › run error whose description names the agent's URL and the status", async () => {
    const threadId = (await post("/threads", {})).thread_id as string;
    remote.reply({ status: 500, body: "the model server is down" });
    const wait = (await post(`/threads/${threadId}/runs/wait`, {
      agent_id: agentId,
      input: { messages: [{ role: "user", content: "hi" }] },
    })) as { run: Json; output: Json };

    expect(wait.run.status).toBe("error");
    expect(wait.output.type).toBe("error");
    expect(wait.output.description).toContain(remote.url);
    expect(wait.output.description).toMatch(/HTTP 500.*the model server is down/);
  });
});
