/**
 * CopilotKit's own client (@copilotkit/core 1.75: CopilotKitCore and its runtime agent) with
 * `runtimeUrl` set to this server's `/copilotkit`, over a real socket: discovery, runs and
 * turns, reconnecting after the fact and mid-reply, stop, interrupts, and the runs being ACP
 * runs on ACP threads both ways round.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aclThreadId } from "../../src/http/agui-runs/agui-runs.js";
import { aguiValidator } from "../../src/validation/index.js";
import { build, type TestApp } from "../helpers/app.js";
import { copilotClient, dropRunConnections, transcript, until } from "../helpers/copilotkit.js";
import { openSse, readSse } from "../helpers/sse.js";
import { listen } from "../runs/helpers.js";

const YAML = `
agents:
  - name: echo
    version: 1.0.0
    description: Echoes the last user message.
    adapter: { type: echo }
  - name: echo
    version: 0.9.0
    description: An older echo.
    adapter: { type: echo }
  - name: slow
    version: 1.0.0
    description: Echo that takes its time.
    adapter: { type: echo, delayMs: 40 }
  - name: tool-user
    version: 1.0.0
    description: Calls the frontend tool it is given, then answers with its result.
    adapter: { type: module, path: ./test/fixtures/modules/frontend-tool-agent.mjs }
`;

const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

describe("a CopilotKit client pointed at /copilotkit", () => {
  let t: TestApp;
  let base: string;
  let runtimeUrl: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML });
    base = await listen(t);
    runtimeUrl = `${base}/copilotkit`;
  });
  afterAll(() => t.close());

  const runsOf = async (threadId: string) =>
    (await t.call("GET", `/threads/${aclThreadId(threadId)}/runs`)).body as Array<{
      run_id: string;
      status: string;
      creation: { agui?: { threadId: string; runId: string } };
    }>;

  it("discovers every agent by name, in REST mode with thread views", async () => {
    const client = await copilotClient(runtimeUrl);
    expect(Object.keys(client.core.agents).sort()).toEqual(["echo", "slow", "tool-user"]);
    expect(client.core.runtimeMode).toBe("sse");
    expect(client.core.threadEndpoints).toMatchObject({ list: true, inspect: true });
    const info = (await (await fetch(`${runtimeUrl}/info`)).json()) as {
      agents: Record<string, { description: string; capabilities: { transport: object } }>;
    };
    expect(info.agents.echo!.description).toBe("Echoes the last user message.");
    expect(info.agents.echo!.capabilities.transport).toMatchObject({ resumable: true });
  });

  it("runs an agent: the reply streams in and equals what the ACP thread stored", async () => {
    const client = await copilotClient(runtimeUrl);
    const threadId = randomUUID();
    const agent = client.agent("echo", threadId);
    agent.addMessage({ id: "u-1", role: "user", content: "hello runtime" });
    await client.core.runAgent({ agent });
    expect(transcript(agent)).toEqual([
      ["user", "hello runtime"],
      ["assistant", "hello runtime"],
    ]);
    expect(agent.state).toEqual({ turns: 1, last_message: "hello runtime" });
    expect(client.errors).toEqual([]);

    const thread = (await t.call("GET", `/threads/${threadId}`)).body as {
      values: unknown;
      messages: Array<{ id: string; content: unknown }>;
      metadata: Record<string, unknown>;
    };
    expect(thread.values).toEqual(agent.state);
    expect(thread.messages.map((m) => [m.id, m.content])).toEqual(
      agent.messages.map((m) => [m.id, (m as { content?: unknown }).content]),
    );
    expect(thread.metadata.copilotkit).toEqual({ agent: "echo", user: null });
    const [run] = await runsOf(threadId);
    expect(run!.status).toBe("success");
    expect(run!.creation.agui?.threadId).toBe(threadId);
  });

  it("keeps a second turn on the same thread without repeating the first", async () => {
    const client = await copilotClient(runtimeUrl);
    const threadId = randomUUID();
    const agent = client.agent("echo", threadId);
    agent.addMessage({ id: "a", role: "user", content: "one" });
    await client.core.runAgent({ agent });
    agent.addMessage({ id: "b", role: "user", content: "two" });
    await client.core.runAgent({ agent });
    expect(transcript(agent).map(([, text]) => text)).toEqual(["one", "one", "two", "two"]);
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as { messages: unknown[] };
    expect(thread.messages).toHaveLength(4);
    expect(await runsOf(threadId)).toHaveLength(2);
  });

  it("gives a new client connecting after the run the thread's history and state, once", async () => {
    const first = await copilotClient(runtimeUrl);
    const threadId = randomUUID();
    const agent = first.agent("echo", threadId);
    agent.addMessage({ id: "h-1", role: "user", content: "remember me" });
    await first.core.runAgent({ agent });
    agent.addMessage({ id: "h-2", role: "user", content: "and this" });
    await first.core.runAgent({ agent });

    const second = await copilotClient(runtimeUrl);
    const rejoined = second.agent("echo", threadId);
    await second.core.connectAgent({ agent: rejoined });
    expect(transcript(rejoined)).toEqual(transcript(agent));
    expect(rejoined.messages.map((m) => m.id)).toEqual(agent.messages.map((m) => m.id));
    expect(rejoined.state).toEqual(agent.state);

    // The rejoined client goes on with the conversation; the thread keeps each message once.
    rejoined.addMessage({ id: "h-3", role: "user", content: "third" });
    await second.core.runAgent({ agent: rejoined });
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as { messages: unknown[] };
    expect(thread.messages).toHaveLength(6);
    expect(second.errors).toEqual([]);
  });

  it("lets a client dropped mid-reply be replaced by one that connects: the full reply, once", async () => {
    const first = await copilotClient(runtimeUrl);
    const threadId = randomUUID();
    const agent = first.agent("slow", threadId);
    const text = words(30);
    agent.addMessage({ id: "d-1", role: "user", content: text });
    const running = first.core.runAgent({ agent });
    await until(
      () => String((agent.messages[1] as { content?: string } | undefined)?.content ?? "") !== "",
      "the reply to start streaming",
    );
    dropRunConnections();
    await running;
    const partial = String((agent.messages[1] as { content?: string }).content);
    expect(partial.length).toBeLessThan(text.length);

    // The run went on without a client; a new one (a reloaded page) connects mid-reply.
    const second = await copilotClient(runtimeUrl);
    const rejoined = second.agent("slow", threadId);
    await second.core.connectAgent({ agent: rejoined });
    expect(transcript(rejoined)).toEqual([
      ["user", text],
      ["assistant", text],
    ]);
    expect(rejoined.state).toEqual({ turns: 1, last_message: text });
    expect((await runsOf(threadId)).map((r) => r.status)).toEqual(["success"]);
    expect(second.errors).toEqual([]);
  });

  it("joins a run another client is still watching, from its start", async () => {
    const first = await copilotClient(runtimeUrl);
    const threadId = randomUUID();
    const agent = first.agent("slow", threadId);
    agent.addMessage({ id: "w-1", role: "user", content: "prior" });
    await first.core.runAgent({ agent });
    const text = words(20);
    agent.addMessage({ id: "w-2", role: "user", content: text });
    const running = first.core.runAgent({ agent });
    await until(() => agent.messages.length === 4, "the second reply to start");

    const second = await copilotClient(runtimeUrl);
    const watcher = second.agent("slow", threadId);
    await second.core.connectAgent({ agent: watcher });
    await running;
    expect(transcript(watcher)).toEqual(transcript(agent));
    expect(transcript(watcher).map(([, content]) => content)).toEqual([
      "prior",
      "prior",
      text,
      text,
    ]);
  });

  it("stops a slow run promptly, keeps the partial reply, and takes the next run at once", async () => {
    const client = await copilotClient(runtimeUrl);
    const threadId = randomUUID();
    const agent = client.agent("slow", threadId);
    const text = words(200);
    agent.addMessage({ id: "s-1", role: "user", content: text });
    const running = client.core.runAgent({ agent });
    await until(
      () => String((agent.messages[1] as { content?: string } | undefined)?.content ?? "") !== "",
      "the reply to start streaming",
    );
    client.core.stopAgent({ agent });
    await running;
    const partial = String((agent.messages[1] as { content?: string }).content);
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(text.length);
    expect(client.errors).toEqual([]);

    const [stopped] = await runsOf(threadId);
    expect(stopped!.status).toBe("error");
    const waited = (
      await t.call("GET", `/threads/${aclThreadId(threadId)}/runs/${stopped!.run_id}/wait`)
    ).body as { output: { description: string } };
    expect(waited.output.description).toMatch(/cancelled/);

    agent.addMessage({ id: "s-2", role: "user", content: "after the stop" });
    await client.core.runAgent({ agent });
    expect(transcript(agent).at(-1)).toEqual(["assistant", "after the stop"]);
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as {
      messages: Array<{ content: unknown }>;
    };
    // The stopped reply is kept as far as it got.
    expect(thread.messages.map((m) => m.content)).toEqual([
      text,
      partial,
      "after the stop",
      "after the stop",
    ]);
  });

  it("answers an interrupt with a run carrying resume, and replays an open interrupt on connect", async () => {
    const client = await copilotClient(runtimeUrl);
    const threadId = randomUUID();
    const agent = client.agent("echo", threadId);
    agent.addMessage({ id: "i-1", role: "user", content: "/approve ship it" });
    await client.core.runAgent({ agent });
    const interrupts = (agent as unknown as { pendingInterrupts: Array<{ id: string }> })
      .pendingInterrupts;
    expect(interrupts).toHaveLength(1);

    const other = await copilotClient(runtimeUrl);
    const rejoined = other.agent("echo", threadId);
    await other.core.connectAgent({ agent: rejoined });
    const replayed = (rejoined as unknown as { pendingInterrupts: Array<{ id: string }> })
      .pendingInterrupts;
    expect(replayed.map((i) => i.id)).toEqual(interrupts.map((i) => i.id));

    await client.core.runAgent({
      agent,
      resume: [{ interruptId: interrupts[0]!.id, status: "resolved", payload: { approved: true } }],
    });
    expect(String(transcript(agent).at(-1)![1])).toContain("ship it");
    expect((await runsOf(threadId)).map((r) => r.status)).toEqual(["success"]);
  });

  it("runs a frontend tool the agent calls, and follows up with its result", async () => {
    const client = await copilotClient(runtimeUrl);
    const calls: unknown[] = [];
    client.core.addTool({
      name: "weather",
      description: "The weather in a city.",
      handler: async (args: unknown) => {
        calls.push(args);
        return "sunny, 24 degrees";
      },
    });
    const threadId = randomUUID();
    const agent = client.agent("tool-user", threadId);
    agent.addMessage({ id: "t-1", role: "user", content: "weather in Lisbon?" });
    await client.core.runAgent({ agent });
    expect(calls).toEqual([{ city: "Lisbon" }]);
    expect(agent.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(transcript(agent).at(-1)).toEqual(["assistant", "The tool said: sunny, 24 degrees"]);
    // Two ACP runs: the call, then the follow-up carrying the tool's result.
    expect((await runsOf(threadId)).map((r) => r.status)).toEqual(["success", "success"]);
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as {
      messages: Array<{ role: string }>;
    };
    expect(thread.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
  });

  it("shares threads with ACP both ways round", async () => {
    // A thread and a run made through ACP, joined by CopilotKit...
    const thread = (await t.call("POST", "/threads", {})).body as { thread_id: string };
    const echo = t.registry.getByName("echo")!.agentId;
    await t.call("POST", `/threads/${thread.thread_id}/runs/wait`, {
      agent_id: echo,
      input: { messages: [{ id: "acp-1", role: "user", content: "from ACP" }] },
    });
    const client = await copilotClient(runtimeUrl);
    const agent = client.agent("echo", thread.thread_id);
    await client.core.connectAgent({ agent });
    expect(transcript(agent)).toEqual([
      ["user", "from ACP"],
      ["assistant", "from ACP"],
    ]);
    // ...and CopilotKit's turn is an ACP run there.
    agent.addMessage({ id: "ck-1", role: "user", content: "from CopilotKit" });
    await client.core.runAgent({ agent });
    const runs = await runsOf(thread.thread_id);
    expect(runs.map((r) => r.status)).toEqual(["success", "success"]);
    const state = (await t.call("GET", `/threads/${thread.thread_id}`)).body as {
      messages: Array<{ content: unknown }>;
    };
    expect(state.messages.map((m) => m.content)).toEqual([
      "from ACP",
      "from ACP",
      "from CopilotKit",
      "from CopilotKit",
    ]);
  });

  it("connects to a thread it has never seen with an empty stream", async () => {
    const response = await fetch(`${runtimeUrl}/agent/echo/connect`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream" },
      body: JSON.stringify({ threadId: randomUUID(), runId: "r", messages: [] }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/event-stream");
    expect(await response.text()).toBe("");
    const client = await copilotClient(runtimeUrl);
    const agent = client.agent("echo", randomUUID());
    await client.core.connectAgent({ agent });
    expect(agent.messages).toEqual([]);
    expect(client.errors).toEqual([]);
  });

  it("takes name@version in URLs, and refuses unknown agents (404) and bad bodies (400)", async () => {
    const threadId = randomUUID();
    const post = (path: string, body: unknown) =>
      fetch(`${runtimeUrl}${path}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: typeof body === "string" ? body : JSON.stringify(body),
      });
    const stream = await readSse(
      base,
      `/copilotkit/agent/${encodeURIComponent("echo@0.9.0")}/run`,
      {
        body: { threadId, runId: "r-1", messages: [{ id: "v", role: "user", content: "old" }] },
      },
    );
    expect(stream.status).toBe(200);
    const run = (await runsOf(threadId))[0]!;
    expect(
      (await t.call("GET", `/threads/${aclThreadId(threadId)}/runs/${run.run_id}`)).body,
    ).toMatchObject({ agent_id: t.registry.getByName("echo", "0.9.0")!.agentId });

    const unknown = await post("/agent/nobody/run", { threadId, runId: "r", messages: [] });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatch(/nobody/);
    expect((await post("/agent/nobody/connect", { threadId })).status).toBe(404);
    expect((await post(`/agent/nobody/stop/${threadId}`, {})).status).toBe(404);

    const noRunId = await post("/agent/echo/run", { threadId, messages: [] });
    expect(noRunId.status).toBe(400);
    expect(await noRunId.json()).toMatch(/runId/);
    expect((await post("/agent/echo/run", "{not json")).status).toBe(400);
    expect((await post("/agent/echo/connect", { runId: "r" })).status).toBe(400);
    expect((await post(`/agent/echo/stop/${threadId}`, { runId: 7 })).status).toBe(400);
  });

  it("stops by thread with no body, and a runId of a finished run stops nothing", async () => {
    const threadId = randomUUID();
    await readSse(base, "/copilotkit/agent/echo/run", {
      body: { threadId, runId: "done-run", messages: [{ id: "x", role: "user", content: "x" }] },
    });
    const stopFinished = await fetch(`${runtimeUrl}/agent/echo/stop/${threadId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ runId: "done-run" }),
    });
    expect(await stopFinished.json()).toMatchObject({ stopped: false });
    const stopIdle = await fetch(`${runtimeUrl}/agent/echo/stop/${threadId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    expect(stopIdle.status).toBe(200);
    expect(await stopIdle.json()).toMatchObject({ stopped: false });
  });
});

describe("the events /copilotkit streams", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("are valid AG-UI events: a replay, a live run, and the stop that closes it", async () => {
    const threadId = randomUUID();
    await readSse(base, "/copilotkit/agent/echo/run", {
      body: { threadId, runId: "first", messages: [{ id: "u1", role: "user", content: "one" }] },
    });
    const run = await openSse(base, "/copilotkit/agent/slow/run", {
      body: {
        threadId,
        runId: "second",
        messages: [
          { id: "u1", role: "user", content: "one" },
          { id: "u2", role: "user", content: words(200) },
        ],
      },
    });
    await run.frame(3);
    const connect = await openSse(base, "/copilotkit/agent/slow/connect", {
      body: { threadId, runId: "c", messages: [] },
    });
    await connect.frame(8);
    const stop = await fetch(`${base}/copilotkit/agent/slow/stop/${threadId}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ runId: "second" }),
    });
    expect(await stop.json()).toMatchObject({ stopped: true });
    await Promise.all([run.ended, connect.ended]);

    const validate = aguiValidator("Event");
    for (const stream of [run, connect]) {
      for (const frame of stream.frames) {
        expect(validate(frame.data), JSON.stringify([frame.data, validate.errors])).toBe(true);
      }
    }
    const types = (stream: typeof run) =>
      stream.frames.map((frame) => (frame.data as { type: string }).type);
    // The replay: the finished run compacted, then the run in progress from its start.
    expect(types(connect).slice(0, 5)).toEqual([
      "RUN_STARTED",
      "MESSAGES_SNAPSHOT",
      "STATE_SNAPSHOT",
      "RUN_FINISHED",
      "RUN_STARTED",
    ]);
    const live = connect.frames[4]!.data as { runId: string; input: { messages: unknown[] } };
    expect(live.runId).toBe("second");
    expect(live.input.messages).toEqual([{ id: "u2", role: "user", content: words(200) }]);
    // Both streams end the stopped run the same way: its message closed, then RUN_FINISHED.
    for (const stream of [run, connect]) {
      expect(types(stream).slice(-2)).toEqual(["TEXT_MESSAGE_END", "RUN_FINISHED"]);
      expect(stream.frames.at(-1)!.data).toMatchObject({ threadId, runId: "second" });
    }
  });
});
