import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { type A2aTestAgent, startA2aAgent } from "../helpers/a2a-agents.js";
import { build, type TestApp } from "../helpers/app.js";
import { readSse } from "../helpers/sse.js";
import { framesStored, listen, settledRun } from "../runs/helpers.js";

type Json = Record<string, unknown>;
type Wait = { run: Json; output: Json };

const say = (content: string) => ({ messages: [{ role: "user", content }] });
const texts = (output: Json) => ((output.messages ?? []) as Json[]).map((m) => [m.role, m.content]);

describe("a2a adapter through ACP: real A2A agents on the official SDK", () => {
  let streaming: A2aTestAgent;
  let blocking: A2aTestAgent;
  let legacy: A2aTestAgent;
  let blockingOnly: A2aTestAgent;
  let picky: A2aTestAgent;
  let t: TestApp;
  let base: string;
  const agent = agentIdFor("a2a-stream", "1.0.0");
  const rest = agentIdFor("a2a-rest", "1.0.0");
  const polled = agentIdFor("a2a-poll", "1.0.0");
  const gone = agentIdFor("a2a-gone", "1.0.0");
  const old = agentIdFor("a2a-v03", "1.0.0");
  const blocks = agentIdFor("a2a-blocks", "1.0.0");
  const own = agentIdFor("a2a-own-contexts", "1.0.0");

  beforeAll(async () => {
    streaming = await startA2aAgent();
    blocking = await startA2aAgent({ streaming: false, name: "blocking-agent" });
    blockingOnly = await startA2aAgent({ streaming: false, blockingOnly: true });
    picky = await startA2aAgent({ ownContexts: true });
    legacy = await startA2aAgent({ legacy: true, bindings: ["JSONRPC"], name: "legacy-agent" });
    process.env.A2A_TEST_TOKEN = "a2a-token";
    t = await build({
      yaml: `
agents:
  - name: a2a-stream
    version: 1.0.0
    description: ""
    adapter:
      type: a2a
      url: ${streaming.url}
      headers: { authorization: "Bearer \${A2A_TEST_TOKEN}" }
      idleTimeoutMs: 5000
  - name: a2a-rest
    version: 1.0.0
    description: The same agent over HTTP+JSON.
    adapter: { type: a2a, url: ${streaming.cardUrl}, binding: http-json }
  - name: a2a-poll
    version: 1.0.0
    description: An agent without streaming.
    adapter: { type: a2a, url: ${blocking.url}, pollIntervalMs: 50 }
  - name: a2a-own-contexts
    version: 1.0.0
    description: An agent that issues its own context ids.
    adapter: { type: a2a, url: ${picky.url} }
  - name: a2a-blocks
    version: 1.0.0
    description: An agent that answers only when its task stops.
    adapter: { type: a2a, url: ${blockingOnly.url}, pollIntervalMs: 50 }
  - name: a2a-v03
    version: 1.0.0
    description: An A2A 0.3 agent.
    adapter: { type: a2a, url: ${legacy.url} }
  - name: a2a-gone
    version: 1.0.0
    description: Nobody listens here.
    adapter: { type: a2a, url: "http://127.0.0.1:9/", connectTimeoutMs: 2000 }
`,
    });
    base = await listen(t);
  });
  afterAll(async () => {
    await t?.close();
    await streaming?.close();
    await blocking?.close();
    await legacy?.close();
    await blockingOnly?.close();
    await picky?.close();
    delete process.env.A2A_TEST_TOKEN;
  });

  async function wait(path: string, body: Json): Promise<Wait> {
    const res = await t.call("POST", path, body);
    expect(res.status, res.raw).toBe(200);
    return res.body as Wait;
  }
  const newThread = async () =>
    ((await t.call("POST", "/threads", {})).body as Json).thread_id as string;

  it("stateless /runs/wait › the agent's status message is the answer; the agent saw our text and headers", async () => {
    const before = streaming.seen.length;
    const { run, output } = await wait("/runs/wait", {
      agent_id: agent,
      input: say("hello there"),
    });
    expect(run.status).toBe("success");
    expect(texts(output)).toEqual([
      ["user", "hello there"],
      ["assistant", "echo: hello there"],
    ]);
    const seen = streaming.seen.slice(before);
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ text: "hello there", continued: false });
    // The run's hidden thread proposed its id as the context.
    expect(seen[0]!.contextId).toMatch(/^[0-9a-f-]{36}$/);
    expect(streaming.headers.some((h) => h.authorization === "Bearer a2a-token")).toBe(true);
  });

  it("thread runs › one A2A context across runs, a new task each run", async () => {
    const threadId = await newThread();
    const before = streaming.seen.length;
    await wait(`/threads/${threadId}/runs/wait`, { agent_id: agent, input: say("hello one") });
    const second = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: agent,
      input: say("hello two"),
    });
    expect(texts(second.output)).toEqual([
      ["user", "hello one"],
      ["assistant", "echo: hello one"],
      ["user", "hello two"],
      ["assistant", "echo: hello two"],
    ]);
    const seen = streaming.seen.slice(before);
    // Only the new user message is sent each time: the agent keeps its own history by context.
    expect(seen.map((s) => s.text)).toEqual(["hello one", "hello two"]);
    expect(seen[0]!.contextId).toBe(threadId);
    expect(seen[1]!.contextId).toBe(threadId);
    expect(seen[0]!.taskId).not.toBe(seen[1]!.taskId);
  });

  it("an agent that refuses our context id › sent again without one; its own context is kept", async () => {
    const threadId = await newThread();
    await wait(`/threads/${threadId}/runs/wait`, { agent_id: own, input: say("hello first") });
    const second = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: own,
      input: say("hello second"),
    });
    expect(second.run.status).toBe("success");
    expect(texts(second.output).at(-1)).toEqual(["assistant", "echo: hello second"]);
    // Refused sends never reach the agent's code: it saw each message once.
    expect(picky.seen.map((s) => s.text)).toEqual(["hello first", "hello second"]);
    const [first, next] = picky.seen;
    expect(first!.contextId).not.toBe(threadId);
    expect(next!.contextId).toBe(first!.contextId);
  });

  it("a direct Message answer (no task) › the run succeeds with it", async () => {
    const { run, output } = await wait("/runs/wait", {
      agent_id: agent,
      input: say("reply please"),
    });
    expect(run.status).toBe("success");
    expect(texts(output).at(-1)).toEqual(["assistant", "reply: reply please"]);
  });

  it("/runs/stream › an artifact streamed in chunks arrives as content deltas of one message", async () => {
    const connection = await readSse(base, "/runs/stream", {
      body: {
        agent_id: agent,
        input: say("chunks"),
        stream_mode: ["custom"],
        on_completion: "keep",
      },
    });
    const updates = connection.frames
      .map((f) => f.data as Json)
      .filter((d) => d.type === "custom")
      .map((d) => d.update as Json);
    const deltas = updates.filter((u) => u.type === "TEXT_MESSAGE_CONTENT").map((u) => u.delta);
    expect(deltas).toEqual(["one ", "two ", "three"]);
    const ids = new Set(
      updates.filter((u) => String(u.type).startsWith("TEXT_MESSAGE")).map((u) => u.messageId),
    );
    expect(ids.size).toBe(1);
    const last = connection.frames.at(-1)!.data as Json;
    expect(last).toMatchObject({ status: "success" });
  });

  it("the same agent over HTTP+JSON (binding: http-json, card URL) › chunks arrive the same", async () => {
    const { run, output } = await wait("/runs/wait", { agent_id: rest, input: say("chunks") });
    expect(run.status).toBe("success");
    expect(texts(output).at(-1)).toEqual(["assistant", "one two three"]);
  });

  it("a data part › merged into the thread's state (values); its text part is a message", async () => {
    const threadId = await newThread();
    const { run, output } = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: agent,
      input: { ...say("data"), state: { mine: true } },
    });
    expect(run.status).toBe("success");
    expect(output.values).toEqual({ mine: true, answer: 42 });
    expect(texts(output).at(-1)).toEqual(["assistant", "the answer is attached"]);
  });

  it("input-required › ACP interrupt; the resume is the follow-up message on the same task", async () => {
    const threadId = await newThread();
    const before = streaming.seen.length;
    const first = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: agent,
      input: say("ask"),
    });
    expect(first.run.status).toBe("interrupted");
    const interrupt = (first.run.interrupt ?? first.output.interrupt) as Json;
    expect(JSON.stringify(interrupt)).toContain("What is your name?");
    const res = await t.call("POST", `/threads/${threadId}/runs/${first.run.run_id}`, {
      input_required: { text: "Ada" },
    });
    expect(res.status, res.raw).toBeLessThan(300);
    const done = (await t.call("GET", `/threads/${threadId}/runs/${first.run.run_id}/wait`))
      .body as Wait;
    expect(done.run.status).toBe("success");
    expect(texts(done.output).slice(-2)).toEqual([
      ["assistant", "What is your name?"],
      ["assistant", "Hello, Ada"],
    ]);
    const seen = streaming.seen.slice(before);
    expect(seen.map((s) => [s.text, s.continued])).toEqual([
      ["ask", false],
      ["Ada", true],
    ]);
    expect(seen[1]!.taskId).toBe(seen[0]!.taskId);
    expect(seen[1]!.contextId).toBe(threadId);
  });

  it("thread /runs/stream › input-required ends the stream interrupted; a streamed resume finishes it", async () => {
    const threadId = await newThread();
    const first = await readSse(base, `/threads/${threadId}/runs/stream`, {
      body: { agent_id: agent, input: say("ask"), stream_mode: ["values"] },
    });
    const last = first.frames.at(-1)!.data as Json;
    expect(last).toMatchObject({ status: "interrupted" });
    const runId = last.run_id as string;
    const res = await t.call("POST", `/threads/${threadId}/runs/${runId}`, {
      input_required: { text: "Eve" },
    });
    expect(res.status, res.raw).toBeLessThan(300);
    const resumed = await readSse(base, `/threads/${threadId}/runs/${runId}/stream`, {
      method: "GET",
    });
    expect(resumed.status).toBe(200);
    expect(resumed.frames.at(-1)!.data).toMatchObject({ status: "success" });
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(texts(thread as Json).at(-1)).toEqual(["assistant", "Hello, Eve"]);
  });

  it("failed › run error with the agent's own message", async () => {
    const { run } = await wait("/runs/wait", { agent_id: agent, input: say("fail") });
    expect(run.status).toBe("error");
    const stored = await settledRun(t, run.run_id as string);
    expect(stored.output).toMatchObject({ description: "the agent broke (code a2a_failed)" });
  });

  it("cancel › CancelTask reaches the agent: it sees its task canceled", async () => {
    const threadId = await newThread();
    const started = streaming.started("wait");
    const run = (
      await t.call("POST", `/threads/${threadId}/runs`, {
        agent_id: agent,
        input: say("wait for me"),
      })
    ).body as Json;
    const seen = await started;
    // Canceled once the adapter knows the task: its "working on it" message is stored.
    await framesStored(t, run.run_id as string, 4);
    const res = await t.call("POST", `/threads/${threadId}/runs/${run.run_id}/cancel?wait=true`);
    expect(res.status).toBeLessThan(300);
    const stored = await settledRun(t, run.run_id as string);
    expect(stored.output).toMatchObject({ errcode: 499 });
    await vi.waitFor(() => expect(streaming.canceled).toContain(seen.taskId));
  });

  it("cancel before the agent named its task › the adapter waits for the name, then cancels it", async () => {
    const threadId = await newThread();
    const started = streaming.started("wait");
    const run = (
      await t.call("POST", `/threads/${threadId}/runs`, { agent_id: agent, input: say("wait now") })
    ).body as Json;
    const seen = await started;
    await t.call("POST", `/threads/${threadId}/runs/${run.run_id}/cancel?wait=true`);
    await vi.waitFor(() => expect(streaming.canceled).toContain(seen.taskId), { timeout: 5000 });
  });

  it("a stream dropped mid-task › the adapter subscribes to the task again and the run completes", async () => {
    const before = streaming.resubscribed.length;
    const { run, output } = await wait("/runs/wait", { agent_id: agent, input: say("drop") });
    expect(run.status, JSON.stringify(run)).toBe("success");
    expect(texts(output).at(-1)).toEqual(["assistant", "before the drop, after it"]);
    const task = streaming.seen.at(-1)!.taskId;
    expect(streaming.resubscribed.slice(before)).toEqual([task]);
  });

  it("an agent without streaming › sent without blocking, then polled: text and input-required", async () => {
    const threadId = await newThread();
    const before = blocking.seen.length;
    const hello = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: polled,
      input: say("hello poll"),
    });
    expect(texts(hello.output).at(-1)).toEqual(["assistant", "echo: hello poll"]);
    const ask = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: polled,
      input: say("ask"),
    });
    expect(ask.run.status).toBe("interrupted");
    await t.call("POST", `/threads/${threadId}/runs/${ask.run.run_id}`, {
      input_required: { text: "Bo" },
    });
    const done = (await t.call("GET", `/threads/${threadId}/runs/${ask.run.run_id}/wait`))
      .body as Wait;
    expect(texts(done.output).at(-1)).toEqual(["assistant", "Hello, Bo"]);
    const seen = blocking.seen.slice(before);
    expect(seen.map((s) => s.text)).toEqual(["hello poll", "ask", "Bo"]);
    expect(new Set(seen.map((s) => s.contextId))).toEqual(new Set([threadId]));
  });

  it("an agent without streaming › a cancel while polling reaches the agent", async () => {
    const threadId = await newThread();
    const started = blocking.started("wait");
    const run = (
      await t.call("POST", `/threads/${threadId}/runs`, { agent_id: polled, input: say("wait") })
    ).body as Json;
    const seen = await started;
    await framesStored(t, run.run_id as string, 4);
    await t.call("POST", `/threads/${threadId}/runs/${run.run_id}/cancel?wait=true`);
    await vi.waitFor(() => expect(blocking.canceled).toContain(seen.taskId), { timeout: 5000 });
  });

  it("an agent that answers only blocking sends › artifacts, data and status from the final task", async () => {
    const threadId = await newThread();
    const chunks = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: blocks,
      input: say("chunks"),
    });
    expect(texts(chunks.output).at(-1)).toEqual(["assistant", "one two three"]);
    const data = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: blocks,
      input: say("data"),
    });
    expect(data.output.values).toEqual({ answer: 42 });
    const ask = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: blocks,
      input: say("ask"),
    });
    expect(ask.run.status).toBe("interrupted");
    await t.call("POST", `/threads/${threadId}/runs/${ask.run.run_id}`, {
      input_required: { text: "Flo" },
    });
    const done = (await t.call("GET", `/threads/${threadId}/runs/${ask.run.run_id}/wait`))
      .body as Wait;
    expect(texts(done.output).at(-1)).toEqual(["assistant", "Hello, Flo"]);
    expect(blockingOnly.seen.map((s) => [s.text, s.contextId])).toEqual([
      ["chunks", threadId],
      ["data", threadId],
      ["ask", threadId],
      ["Flo", threadId],
    ]);
  });

  it("an A2A 0.3 agent › text, input-required and resume, over the 0.3 protocol", async () => {
    const threadId = await newThread();
    const before = legacy.seen.length;
    const hello = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: old,
      input: say("hello old"),
    });
    expect(texts(hello.output).at(-1)).toEqual(["assistant", "echo: hello old"]);
    const ask = await wait(`/threads/${threadId}/runs/wait`, { agent_id: old, input: say("ask") });
    expect(ask.run.status).toBe("interrupted");
    await t.call("POST", `/threads/${threadId}/runs/${ask.run.run_id}`, {
      input_required: { text: "Di" },
    });
    const done = (await t.call("GET", `/threads/${threadId}/runs/${ask.run.run_id}/wait`))
      .body as Wait;
    expect(texts(done.output).at(-1)).toEqual(["assistant", "Hello, Di"]);
    const seen = legacy.seen.slice(before);
    expect(seen.map((s) => [s.text, s.continued])).toEqual([
      ["hello old", false],
      ["ask", false],
      ["Di", true],
    ]);
    expect(seen[2]!.taskId).toBe(seen[1]!.taskId);
    // Every call after the card spoke 0.3.
    const versions = legacy.headers.slice(1).map((h) => h["a2a-version"]);
    expect(new Set(versions)).toEqual(new Set(["0.3"]));
  });

  it("an unreachable card › the run fails with a message naming the agent and the card", async () => {
    const { run } = await wait("/runs/wait", { agent_id: gone, input: say("hello") });
    expect(run.status).toBe("error");
    const stored = await settledRun(t, run.run_id as string);
    expect(JSON.stringify(stored.output)).toMatch(
      /A2A agent at http:\/\/127\.0\.0\.1:9\/.*agent card could not be read/,
    );
  });
});
