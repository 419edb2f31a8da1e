/**
 * Our A2A face driven by our own a2a adapter: an inner server (with an API key) serves echo
 * agents over A2A; an outer server registers them with `type: a2a` at the inner face, over
 * each binding. Text, a stream, input-required then resume, and cancel go through the outer
 * server's ACP; what the inner server saw is read back from its own A2A face and ACP.
 */
import { createServer, request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { ListTasksRequest, type Task, TaskState } from "@a2a-js/sdk";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { build, type TestApp } from "../helpers/app.js";
import { readSse } from "../helpers/sse.js";
import { listen, settledRun } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";
import { a2aClient, BINDINGS } from "./helpers.js";

const KEY = "inner-key-0123456789abcdef";
const auth = { "x-api-key": KEY };
type Json = Record<string, unknown>;
type Wait = { run: Json; output: Json };

const say = (content: string) => ({ messages: [{ role: "user", content }] });
const texts = (output: Json) => ((output.messages ?? []) as Json[]).map((m) => [m.role, m.content]);
/** A task's history as [role, text] (role 1: user, 2: agent). */
const historyOf = (task: Task) =>
  task.history.map((m) => [
    m.role,
    m.parts.map((p) => (p.content?.$case === "text" ? p.content.value : "")).join(""),
  ]);

describe.each(BINDINGS)("round trip: our a2a adapter against our A2A face (%s)", (binding) => {
  let inner: TestApp;
  let outer: TestApp;
  let innerBase: string;
  let outerBase: string;
  const echo = agentIdFor("inner-echo", "1.0.0");
  const slow = agentIdFor("inner-slow", "1.0.0");
  const locked = agentIdFor("inner-locked", "1.0.0");
  const dropped = agentIdFor("inner-dropped", "1.0.0");
  let proxy: CuttingProxy;

  beforeAll(async () => {
    inner = await buildServing(
      {
        server: { auth: { keys: [{ key: KEY, name: "outer" }] } },
        agents: [echoAgent("echo"), echoAgent("slow", { adapter: { type: "echo", delayMs: 300 } })],
      },
      { unchecked: true },
    );
    innerBase = await listen(inner);
    proxy = await cuttingProxy(innerBase);
    const adapter = (agent: string, headers: Record<string, string> = auth, via = innerBase) =>
      JSON.stringify({
        type: "a2a",
        url: `${via}/a2a/${agent}/.well-known/agent-card.json`,
        headers,
        binding: binding === "JSONRPC" ? "jsonrpc" : "http-json",
      });
    outer = await build({
      yaml: `
agents:
  - { name: inner-echo, version: 1.0.0, description: "", adapter: ${adapter("echo")} }
  - { name: inner-slow, version: 1.0.0, description: "", adapter: ${adapter("slow")} }
  - { name: inner-locked, version: 1.0.0, description: "", adapter: ${adapter("echo", { "x-api-key": "wrong" })} }
  - { name: inner-dropped, version: 1.0.0, description: "", adapter: ${adapter("slow", auth, proxy.url)} }
`,
      unchecked: true,
    });
    outerBase = await listen(outer);
  });
  afterAll(async () => {
    await outer?.close();
    await proxy?.close();
    await inner?.close();
  });

  /** The inner server's tasks of an agent in a context, as its A2A face lists them. */
  async function innerTasks(agent: string, contextId: string): Promise<Task[]> {
    const client = await a2aClient(innerBase, agent, binding, auth);
    const listed = await client.listTasks(
      ListTasksRequest.fromJSON({ contextId, includeArtifacts: true, historyLength: 20 }),
    );
    return listed.tasks;
  }
  const newThread = async () =>
    ((await outer.call("POST", "/threads", {})).body as Json).thread_id as string;
  async function wait(path: string, body: Json): Promise<Wait> {
    const res = await outer.call("POST", path, body);
    expect(res.status, res.raw).toBe(200);
    return res.body as Wait;
  }

  it("text › the outer run answers what the inner task answered", async () => {
    const threadId = await newThread();
    const { run, output } = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: echo,
      input: say("hello inner"),
    });
    expect(run.status).toBe("success");
    expect(texts(output)).toEqual([
      ["user", "hello inner"],
      ["assistant", "hello inner"],
    ]);
    // The outer thread's id is the inner context: one task there, completed, with both turns.
    const [task, ...more] = await innerTasks("echo", threadId);
    expect(more).toEqual([]);
    expect(task!.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
    expect(historyOf(task!)).toEqual([
      [1, "hello inner"],
      [2, "hello inner"],
    ]);
    // The inner task is an ACP run of the inner server, owned by the outer server's key.
    const innerRun = await inner.call(
      "GET",
      `/threads/${threadId}/runs/${task!.id}`,
      undefined,
      auth,
    );
    expect(innerRun.status).toBe(200);
    expect(innerRun.body).toMatchObject({ status: "success" });
  });

  it("a second turn › the same inner context, a new inner task", async () => {
    const threadId = await newThread();
    await wait(`/threads/${threadId}/runs/wait`, { agent_id: echo, input: say("one") });
    const second = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: echo,
      input: say("two"),
    });
    expect(texts(second.output)).toEqual([
      ["user", "one"],
      ["assistant", "one"],
      ["user", "two"],
      ["assistant", "two"],
    ]);
    const tasks = await innerTasks("echo", threadId);
    expect(tasks.map((t) => historyOf(t)[0])).toEqual([
      [1, "two"],
      [1, "one"],
    ]);
  });

  it("streamed › the outer stream carries the inner agent's text", async () => {
    const connection = await readSse(outerBase, "/runs/stream", {
      body: {
        agent_id: echo,
        input: say("stream these words"),
        stream_mode: ["custom"],
        on_completion: "keep",
      },
    });
    const updates = connection.frames
      .map((f) => f.data as Json)
      .filter((d) => d.type === "custom")
      .map((d) => d.update as Json);
    const deltas = updates.filter((u) => u.type === "TEXT_MESSAGE_CONTENT").map((u) => u.delta);
    // The inner face streams each delta as a chunk; the adapter passes each on as it comes.
    expect(deltas).toEqual(["stream ", "these ", "words"]);
    expect(connection.frames.at(-1)!.data).toMatchObject({ status: "success" });
  });

  it("input-required then resume › one inner task that waits, then finishes", async () => {
    const threadId = await newThread();
    const first = await wait(`/threads/${threadId}/runs/wait`, {
      agent_id: echo,
      input: say("/approve ship it"),
    });
    expect(first.run.status).toBe("interrupted");
    expect(JSON.stringify(first.run.interrupt ?? first.output.interrupt)).toContain(
      'Approve echoing \\"ship it\\"?',
    );
    const [waiting] = await innerTasks("echo", threadId);
    expect(waiting!.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED);

    const res = await outer.call("POST", `/threads/${threadId}/runs/${first.run.run_id}`, {
      input_required: { approved: true },
    });
    expect(res.status, res.raw).toBeLessThan(300);
    const done = (await outer.call("GET", `/threads/${threadId}/runs/${first.run.run_id}/wait`))
      .body as Wait;
    expect(done.run.status).toBe("success");
    expect(texts(done.output).at(-1)).toEqual([
      "assistant",
      'Approved with {"approved":true}: ship it',
    ]);
    // Still one inner task: the resume went to it, and it answered with the approval.
    const [task, ...more] = await innerTasks("echo", threadId);
    expect(more).toEqual([]);
    expect(task!.id).toBe(waiting!.id);
    expect(task!.status?.state).toBe(TaskState.TASK_STATE_COMPLETED);
  });

  it("cancel › the outer cancel cancels the inner task", async () => {
    const threadId = await newThread();
    const words = Array.from({ length: 40 }, (_, i) => `w${i}`).join(" ");
    const run = (
      await outer.call("POST", `/threads/${threadId}/runs`, {
        agent_id: slow,
        input: say(words),
      })
    ).body as Json;
    // Canceled once the inner task works.
    await vi.waitFor(
      async () => {
        const [task] = await innerTasks("slow", threadId);
        expect(task?.status?.state).toBe(TaskState.TASK_STATE_WORKING);
      },
      { timeout: 5000, interval: 50 },
    );
    const res = await outer.call(
      "POST",
      `/threads/${threadId}/runs/${run.run_id}/cancel?wait=true`,
    );
    expect(res.status, res.raw).toBeLessThan(300);
    const stored = await settledRun(outer, run.run_id as string);
    expect(stored.status).toBe("error");
    await vi.waitFor(
      async () => {
        const [task] = await innerTasks("slow", threadId);
        expect(task?.status?.state).toBe(TaskState.TASK_STATE_CANCELED);
      },
      { timeout: 5000, interval: 50 },
    );
  });

  it("a wrong key › the outer run fails naming the inner server's refusal", async () => {
    const { run } = await wait("/runs/wait", { agent_id: locked, input: say("let me in") });
    expect(run.status).toBe("error");
    const stored = await settledRun(outer, run.run_id as string);
    expect(JSON.stringify(stored.output)).toContain("failed: missing or invalid API key");
  });

  it("a stream cut mid-answer › the adapter reads the task again and shows each word once", async () => {
    const said = "one two three four five six";
    const { run, output } = await wait("/runs/wait", { agent_id: dropped, input: say(said) });
    expect(proxy.cuts).toBe(1);
    expect(run.status, JSON.stringify(output)).toBe("success");
    expect(texts(output).slice(1)).toEqual([["assistant", said]]);
  });
});

interface CuttingProxy {
  url: string;
  /** Streams cut so far: the first streamed answer is cut after its first artifact chunk. */
  cuts: number;
  close(): Promise<void>;
}

/** A proxy to `target` that cuts the first SSE answer once an artifact chunk went through. */
async function cuttingProxy(target: string): Promise<CuttingProxy> {
  const state = { cuts: 0 };
  const server = createServer((req, res) => {
    // The Host header stays the proxy's, so the inner card names the proxy as the interface.
    const upstream = httpRequest(
      new URL(req.url ?? "/", target),
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        const sse = String(answer.headers["content-type"]).startsWith("text/event-stream");
        const cut = sse && state.cuts === 0;
        answer.on("data", (chunk: Buffer) => {
          res.write(chunk);
          if (cut && state.cuts === 0 && chunk.toString().includes("artifactUpdate")) {
            state.cuts += 1;
            res.destroy();
            answer.destroy();
          }
        });
        answer.on("end", () => res.end());
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get cuts() {
      return state.cuts;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
