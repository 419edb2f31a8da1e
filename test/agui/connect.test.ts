/**
 * Reconnect on the AG-UI face: `POST …/connect` with @ag-ui/client's own HttpAgent (whose
 * `connect()` posts the RunAgentInput there). A client rejoining a thread gets its history once
 * and the run in progress from its start, live; a run started with `?on_disconnect=continue`
 * outlives its client for another one to pick up.
 */
import { randomUUID } from "node:crypto";
import type { HttpAgent } from "@ag-ui/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aclThreadId } from "../../src/http/agui-runs/agui-runs.js";
import { ReconnectingAgent } from "../helpers/agui-reconnect.js";
import { build, type TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
  - name: slow
    version: 1.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 40 }
`;

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");
const texts = (agent: HttpAgent) => agent.messages.map((m) => (m as { content?: unknown }).content);

describe("connect on the AG-UI face", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML });
    base = await listen(t);
  });
  afterAll(() => t.close());

  const until = async (check: () => boolean | Promise<boolean>, what: string) => {
    const deadline = Date.now() + 10_000;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  it.each([
    ["SSE", "text/event-stream"],
    ["protobuf", "application/vnd.ag-ui.event+proto"],
  ])("gives a client rejoining a thread its history and state once (%s)", async (_, accept) => {
    const threadId = `conv-${randomUUID()}`;
    const first = new ReconnectingAgent(`${base}/ag-ui/echo`, threadId);
    first.addMessage({ id: "a", role: "user", content: "one" });
    await first.runAgent();
    first.addMessage({ id: "b", role: "user", content: "two" });
    await first.runAgent();

    const second = new ReconnectingAgent(`${base}/ag-ui/echo`, threadId, accept);
    await second.connectAgent();
    expect(second.messages).toEqual(first.messages);
    expect(second.state).toEqual(first.state);
  });

  it("joins a run another client is watching, from its start and live", async () => {
    const threadId = `live-${randomUUID()}`;
    const agentUrl = `${base}/agents/${t.registry.getByName("slow")!.agentId}/ag-ui`;
    const runner = new ReconnectingAgent(agentUrl, threadId);
    const text = words(20);
    runner.addMessage({ id: "l", role: "user", content: text });
    const running = runner.runAgent();
    await until(() => runner.messages.length === 2, "the reply to start");

    const watcher = new ReconnectingAgent(agentUrl, threadId);
    await watcher.connectAgent();
    await running;
    expect(texts(watcher)).toEqual([text, text]);
    expect(watcher.messages).toEqual(runner.messages);
  });

  it("lets a run started with on_disconnect=continue outlive its client, for another to rejoin", async () => {
    const threadId = `reload-${randomUUID()}`;
    const dropped = new ReconnectingAgent(
      `${base}/ag-ui/slow`,
      threadId,
      undefined,
      "?on_disconnect=continue",
    );
    const text = words(30);
    dropped.addMessage({ id: "r", role: "user", content: text });
    const running = dropped.runAgent().catch(() => undefined);
    await until(() => String(texts(dropped)[1] ?? "") !== "", "the reply to start");
    dropped.abortRun();
    await running;
    expect(String(texts(dropped)[1]).length).toBeLessThan(text.length);

    const rejoined = new ReconnectingAgent(`${base}/ag-ui/slow`, threadId);
    await rejoined.connectAgent();
    expect(texts(rejoined)).toEqual([text, text]);
    const runs = (await t.call("GET", `/threads/${aclThreadId(threadId)}/runs`)).body as Array<{
      status: string;
    }>;
    expect(runs.map((run) => run.status)).toEqual(["success"]);
  });

  it("stops a thread's run from another request, and the thread takes the next run", async () => {
    const threadId = `stop-${randomUUID()}`;
    const runner = new ReconnectingAgent(`${base}/ag-ui/slow`, threadId);
    const text = words(300);
    runner.addMessage({ id: "s", role: "user", content: text });
    let failure = "";
    const running = runner.runAgent(
      { runId: "long-run" },
      {
        onRunErrorEvent: ({ event }) => {
          failure = event.message;
        },
      },
    );
    await until(() => String(texts(runner)[1] ?? "") !== "", "the reply to start");
    const finished = await t.app.inject({
      method: "POST",
      url: `/ag-ui/slow/stop/${threadId}`,
      payload: { runId: "an-id-the-server-never-saw" },
    });
    expect(finished.json()).toMatchObject({ stopped: true });
    await running;
    // The AG-UI face tells its client why the server ended the run.
    expect(failure).toMatch(/cancelled/);
    expect(String(texts(runner)[1]).length).toBeLessThan(text.length);
    const idle = await t.app.inject({ method: "POST", url: `/ag-ui/slow/stop/${threadId}` });
    expect(idle.json()).toEqual({ stopped: false, runs: [] });

    runner.addMessage({ id: "n", role: "user", content: "next" });
    await runner.runAgent();
    expect(texts(runner).at(-1)).toBe("next");
    const byRunId = await t.app.inject({
      method: "POST",
      url: `/ag-ui/slow/stop/${threadId}`,
      payload: { runId: "long-run" },
    });
    expect(byRunId.json()).toEqual({ stopped: false, runs: [] });
  });

  it("advertises reconnect and stop in the agent's capabilities", async () => {
    const capabilities = (await t.app.inject({ url: "/ag-ui/echo/capabilities" })).json();
    expect(capabilities.transport).toMatchObject({ streaming: true, resumable: true });
    expect(capabilities.custom.connect).toEqual({ method: "POST", path: "/ag-ui/echo/connect" });
    expect(capabilities.custom.stop).toEqual({
      method: "POST",
      path: "/ag-ui/echo/stop/{threadId}",
    });
  });

  it("answers an unknown thread with an empty stream, and refuses what the run route refuses", async () => {
    const input = { threadId: randomUUID(), runId: "r", messages: [], tools: [], context: [] };
    const empty = await t.app.inject({
      method: "POST",
      url: "/ag-ui/echo/connect",
      payload: input,
    });
    expect(empty.statusCode).toBe(200);
    expect(empty.body).toBe("");
    const unknown = await t.app.inject({
      method: "POST",
      url: "/ag-ui/nobody/connect",
      payload: input,
    });
    expect(unknown.statusCode).toBe(404);
    const bad = await t.app.inject({
      method: "POST",
      url: "/ag-ui/echo/connect",
      payload: { runId: "r" },
    });
    expect(bad.statusCode).toBe(422);
    expect(bad.json()).toContain("threadId");
  });
});
