import { HttpAgent } from "@ag-ui/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { aclThreadId } from "../../src/http/agui-runs/agui-runs.js";
import { aguiValidator } from "../../src/validation/index.js";
import { ProtoAgent } from "../helpers/agui-client.js";
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
    adapter: { type: echo, delayMs: 200 }
  - name: stateful
    version: 1.0.0
    description: Replays state and a message.
    adapter:
      type: scripted
      script:
        - { type: RUN_STARTED, threadId: t, runId: r }
        - { type: STATE_SNAPSHOT, snapshot: { count: 1 } }
        - { type: STATE_DELTA, delta: [{ op: add, path: /items, value: [a, b] }] }
        - { type: TEXT_MESSAGE_START, messageId: m-1, role: assistant }
        - { type: TEXT_MESSAGE_CONTENT, messageId: m-1, delta: "state set" }
        - { type: TEXT_MESSAGE_END, messageId: m-1 }
        - { type: RUN_FINISHED, threadId: t, runId: r }
`;

describe("the AG-UI face", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await build({ yaml: YAML });
    base = await listen(t);
  });
  afterAll(() => t.close());

  const agentUrl = (name: string) => `${base}/agents/${t.registry.getByName(name)!.agentId}/ag-ui`;

  describe.each([
    ["SSE", HttpAgent],
    ["protobuf", ProtoAgent],
  ])("over %s", (_transport, AgentClass) => {
    it("streams a run whose messages and state equal what the server stored", async () => {
      const agent = new AgentClass({ url: agentUrl("echo"), threadId: `conv-${Math.random()}` });
      agent.addMessage({ id: "u-1", role: "user", content: "hello face" });
      const { newMessages } = await agent.runAgent({ runId: "client-run-1" });
      expect(newMessages.map((m) => [m.role, (m as { content?: string }).content])).toEqual([
        ["assistant", "hello face"],
      ]);
      expect(agent.state).toEqual({ turns: 1, last_message: "hello face" });

      const thread = (await t.call("GET", `/threads/${aclThreadId(agent.threadId)}`)).body as {
        values: unknown;
        messages: Array<{ id: string; role: string; content: unknown }>;
      };
      expect(thread.values).toEqual(agent.state);
      expect(thread.messages.map((m) => ({ id: m.id, role: m.role, content: m.content }))).toEqual(
        agent.messages.map((m) => ({
          id: m.id,
          role: m.role,
          content: (m as { content?: unknown }).content,
        })),
      );
    });

    it("keeps a conversation over several runs without duplicating messages", async () => {
      const agent = new AgentClass({ url: agentUrl("echo"), threadId: `conv-${Math.random()}` });
      agent.addMessage({ id: "a", role: "user", content: "one" });
      await agent.runAgent();
      agent.addMessage({ id: "b", role: "user", content: "two" });
      await agent.runAgent();
      expect(agent.messages.map((m) => (m as { content?: string }).content)).toEqual([
        "one",
        "one",
        "two",
        "two",
      ]);
      const thread = (await t.call("GET", `/threads/${aclThreadId(agent.threadId)}`)).body as {
        messages: unknown[];
      };
      expect(thread.messages).toHaveLength(4);
      expect(agent.state).toMatchObject({ turns: 2, last_message: "two" });
    });
  });

  it("applies state snapshots and deltas as the server does", async () => {
    const agent = new HttpAgent({ url: agentUrl("stateful"), threadId: `s-${Math.random()}` });
    await agent.runAgent();
    expect(agent.state).toEqual({ count: 1, items: ["a", "b"] });
    const thread = (await t.call("GET", `/threads/${aclThreadId(agent.threadId)}`)).body as {
      values: unknown;
    };
    expect(thread.values).toEqual(agent.state);
  });

  it("is an ACP run: listed on its thread, with the client's ids kept in the run's creation", async () => {
    const agent = new HttpAgent({ url: `${base}/ag-ui/echo`, threadId: `acp-${Math.random()}` });
    agent.addMessage({ id: "q", role: "user", content: "listed?" });
    await agent.runAgent({ runId: "my-run" });
    const runs = (await t.call("GET", `/threads/${aclThreadId(agent.threadId)}/runs`))
      .body as Array<{
      status: string;
      creation: { agui?: { threadId: string; runId: string } };
    }>;
    expect(runs).toHaveLength(1);
    expect(runs[0]!.status).toBe("success");
    expect(runs[0]!.creation.agui).toEqual({ threadId: agent.threadId, runId: "my-run" });
  });

  it("answers an interrupt with a following run carrying resume", async () => {
    const agent = new HttpAgent({ url: agentUrl("echo"), threadId: `hitl-${Math.random()}` });
    agent.addMessage({ id: "ask", role: "user", content: "/approve ship it" });
    let interrupts: Array<{ id: string; reason?: string }> = [];
    await agent.runAgent(
      {},
      {
        onRunFinishedEvent: ({ event }) => {
          const outcome = (event as { outcome?: { type: string; interrupts?: typeof interrupts } })
            .outcome;
          if (outcome?.type === "interrupt") interrupts = outcome.interrupts ?? [];
        },
      },
    );
    expect(interrupts).toHaveLength(1);
    expect(interrupts[0]!.reason).toBe("approval");
    const threadId = aclThreadId(agent.threadId);
    expect(((await t.call("GET", `/threads/${threadId}`)).body as { status: string }).status).toBe(
      "interrupted",
    );

    const { newMessages } = await agent.runAgent({
      resume: [{ interruptId: interrupts[0]!.id, status: "resolved", payload: { approved: true } }],
    });
    expect((newMessages.at(-1) as { content?: string }).content).toContain("ship it");
    const runs = (await t.call("GET", `/threads/${threadId}/runs`)).body as Array<{
      status: string;
    }>;
    expect(runs.map((r) => r.status)).toEqual(["success"]);
  });

  it("cancels the run when the client aborts", async () => {
    const agent = new HttpAgent({ url: agentUrl("slow"), threadId: `abort-${Math.random()}` });
    agent.addMessage({ id: "long", role: "user", content: "a b c d e f g h i j k l m n o p" });
    const running = agent.runAgent().catch(() => undefined);
    const threadId = aclThreadId(agent.threadId);
    await until(async () => ((await t.storage.getThread(threadId))?.status ?? "") === "busy");
    agent.abortRun();
    await running;
    await until(async () => (await t.storage.pendingRunsOfThread(threadId)).length === 0);
    const [run] = (await t.call("GET", `/threads/${threadId}/runs`)).body as Array<{
      run_id: string;
      status: string;
    }>;
    expect(run!.status).toBe("error");
    const waited = (await t.call("GET", `/threads/${threadId}/runs/${run!.run_id}/wait`)).body as {
      output: { description: string };
    };
    expect(waited.output.description).toMatch(/cancelled/);
  });

  it("GET …/ag-ui/capabilities › describes the agent as AgentCapabilities", async () => {
    const id = t.registry.getByName("echo")!.agentId;
    const byId = await t.app.inject({ method: "GET", url: `/agents/${id}/ag-ui/capabilities` });
    const byName = await t.app.inject({ method: "GET", url: "/ag-ui/echo/capabilities" });
    expect(byId.statusCode).toBe(200);
    const capabilities = byId.json();
    expect(aguiValidator("AgentCapabilities")(capabilities)).toBe(true);
    expect(capabilities).toMatchObject({
      identity: { name: "echo", version: "1.0.0", type: "echo" },
      transport: { streaming: true },
      humanInTheLoop: { interrupts: true },
    });
    expect(byName.json()).toEqual(capabilities);
  });

  describe("refuses before the stream opens", () => {
    const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
      t.app.inject({ method: "POST", url, payload: body as object, headers });
    const input = { threadId: "x", runId: "y", messages: [] };

    it("an input that is not a RunAgentInput (422 naming the field)", async () => {
      const res = await post("/ag-ui/echo", { threadId: "x", messages: [] });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toContain("runId");
    });

    it("a client of another major AG-UI version (422)", async () => {
      const res = await post("/ag-ui/echo", { ...input, protocolVersion: "2.0" });
      expect(res.statusCode).toBe(422);
      expect(res.json()).toMatch(/major version 2/);
    });

    it("an unknown agent (404)", async () => {
      expect((await post("/ag-ui/nobody", input)).statusCode).toBe(404);
      expect(
        (await post("/agents/5e4d3c2b-1a09-4876-a543-210fedcba987/ag-ui", input)).statusCode,
      ).toBe(404);
    });

    it("a resume that answers no interrupted run (409)", async () => {
      const res = await post("/ag-ui/echo", {
        ...input,
        resume: [{ interruptId: "nope", status: "resolved" }],
      });
      expect(res.statusCode).toBe(409);
    });
  });

  it("serves SSE to a client that accepts anything, and protobuf only when named", async () => {
    const body = JSON.stringify({ threadId: `acc-${Math.random()}`, runId: "r", messages: [] });
    const any = await fetch(`${base}/ag-ui/echo`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "*/*" },
      body,
    });
    expect(any.headers.get("content-type")).toContain("text/event-stream");
    const text = await any.text();
    expect(text).toContain('"type":"RUN_STARTED"');
    expect(text).toContain('"protocolVersion":"1.0"');
  });
});

async function until(check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
