/**
 * The LangGraph face with LangGraph's own client (`@langchain/langgraph-sdk`'s `Client`) against
 * the sample config's agents: assistants, threads, state, history, and runs awaited.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";

type Values = { messages: Array<Record<string, unknown>>; [key: string]: unknown };

let t: TestApp;
let base: string;
let client: Client;

beforeAll(async () => {
  ({ t, base } = await sampleServer());
  client = new Client({ apiUrl: `${base}/langgraph` });
});
afterAll(() => t.close());

describe("the server", () => {
  it("answers /info as agent-chat-ui checks it (ok, with its flags) and /ok", async () => {
    const info = await fetch(`${base}/langgraph/info`);
    expect(info.ok).toBe(true);
    expect(await info.json()).toMatchObject({
      version: expect.any(String),
      flags: { assistants: true, crons: false },
    });
    expect(await (await fetch(`${base}/langgraph/ok`)).json()).toEqual({ ok: true });
  });
});

describe("assistants", () => {
  it("lists every agent as an assistant named by the agent", async () => {
    const found = await client.assistants.search({ limit: 100 });
    const ids = found.map((a) => a.assistant_id).sort();
    expect(ids).toEqual(["approval-demo", "echo", "remote-echo", "scripted-demo", "word-count"]);
    const echo = found.find((a) => a.assistant_id === "echo")!;
    expect(echo.graph_id).toBe("echo");
    expect(echo.name).toBe("echo");
  });

  it("filters by graph id, and gets one with its schemas and graph", async () => {
    const found = await client.assistants.search({ graphId: "word-count" });
    expect(found.map((a) => a.assistant_id)).toEqual(["word-count"]);
    const one = await client.assistants.get("echo");
    expect(one.assistant_id).toBe("echo");
    const schemas = await client.assistants.getSchemas("echo");
    expect(schemas.graph_id).toBe("echo");
    const graph = await client.assistants.getGraph("echo");
    expect(graph.nodes.map((n) => n.id)).toEqual(["__start__", "echo", "__end__"]);
    expect(graph.edges).toHaveLength(2);
  });

  it("answers 404 with LangGraph's detail for an unknown assistant", async () => {
    await expect(client.assistants.get("nobody")).rejects.toThrow(
      /404.*assistant nobody not found/s,
    );
  });
});

describe("threads", () => {
  it("creates, gets, patches, searches and deletes a thread", async () => {
    const thread = await client.threads.create({ metadata: { owner: "face-test" } });
    expect(thread.status).toBe("idle");
    expect(thread.values).toEqual({ messages: [] });
    expect(thread.interrupts).toEqual({});
    const read = await client.threads.get(thread.thread_id);
    expect(read.metadata).toMatchObject({ owner: "face-test" });

    await client.threads.update(thread.thread_id, { metadata: { topic: "tests" } });
    const found = await client.threads.search({ metadata: { owner: "face-test", topic: "tests" } });
    expect(found.map((f) => f.thread_id)).toEqual([thread.thread_id]);

    const byId = await client.threads.search({
      ids: [thread.thread_id, crypto.randomUUID()],
      metadata: { owner: "face-test" },
    });
    expect(byId.map((f) => f.thread_id)).toEqual([thread.thread_id]);
    expect(
      await client.threads.search({ ids: [thread.thread_id], metadata: { owner: "x" } }),
    ).toEqual([]);

    await client.threads.delete(thread.thread_id);
    await expect(client.threads.get(thread.thread_id)).rejects.toThrow(/404/);
  });

  it("refuses a second thread with the same id, and returns it with if_exists do_nothing", async () => {
    const thread = await client.threads.create();
    await expect(client.threads.create({ threadId: thread.thread_id })).rejects.toThrow(/409/);
    const again = await client.threads.create({
      threadId: thread.thread_id,
      ifExists: "do_nothing",
    });
    expect(again.thread_id).toBe(thread.thread_id);
  });
});

describe("runs.wait", () => {
  it("holds a conversation on a thread: LangChain messages in, values out", async () => {
    const thread = await client.threads.create();
    const first = (await client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [{ type: "human", content: "hello there" }] },
    })) as Values;
    expect(first.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "hello there"],
      ["ai", "hello there"],
    ]);
    expect(typeof first.messages[1]!.id).toBe("string");

    const second = (await client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [{ role: "user", content: "and again" }] },
    })) as Values;
    expect(second.messages.map((m) => m.content)).toEqual([
      "hello there",
      "hello there",
      "and again",
      "and again",
    ]);

    const state = await client.threads.getState<Values>(thread.thread_id);
    expect(state.values.messages).toHaveLength(4);
    expect(state.next).toEqual([]);
    expect(state.checkpoint.checkpoint_id).toBeTypeOf("string");

    const history = await client.threads.getHistory<Values>(thread.thread_id, { limit: 10 });
    expect(history.length).toBeGreaterThanOrEqual(2);
    expect(history[0]!.values.messages).toHaveLength(4);
    const older = await client.threads.getHistory<Values>(thread.thread_id, {
      before: { configurable: { checkpoint_id: history[0]!.checkpoint.checkpoint_id } },
    });
    expect(older[0]!.checkpoint.checkpoint_id).not.toBe(history[0]!.checkpoint.checkpoint_id);

    const runs = await client.runs.list(thread.thread_id);
    expect(runs).toHaveLength(2);
    expect(runs.every((run) => run.status === "success" && run.assistant_id === "echo")).toBe(true);
  });

  it.each([
    ["echo", "hello there", "hello there", "hello there"],
    ["remote-echo", "over the wire", "over the wire", "over the wire"],
    ["word-count", "one two three", "3 words (3 so far).", "3 words (6 so far)."],
  ])(
    "%s answers runs.wait, then runs.stream on the same thread",
    async (name, said, firstAnswer, secondAnswer) => {
      const thread = await client.threads.create();
      const human = { messages: [{ type: "human", content: said }] };
      const waited = (await client.runs.wait(thread.thread_id, name, { input: human })) as Values;
      expect(waited.messages.map((m) => [m.type, m.content])).toEqual([
        ["human", said],
        ["ai", firstAnswer],
      ]);
      let last: Values | undefined;
      for await (const part of client.runs.stream(thread.thread_id, name, {
        input: human,
        streamMode: "values",
      })) {
        if (part.event === "values") last = part.data as Values;
      }
      expect(last?.messages.map((m) => m.content)).toEqual([said, firstAnswer, said, secondAnswer]);
      const state = await client.threads.getState(thread.thread_id);
      expect((state.values as Values).messages).toEqual(last?.messages);
    },
  );

  it("returns tool calls and tool results as LangChain messages, with the agent's state", async () => {
    const values = (await client.runs.wait(null, "scripted-demo", {
      input: { messages: [{ type: "human", content: "weather?" }] },
    })) as Values;
    const types = values.messages.map((m) => m.type);
    expect(types).toEqual(["human", "ai", "tool"]);
    const ai = values.messages[1]!;
    expect(ai.tool_calls).toEqual([
      { id: "call-1", name: "get_weather", args: { city: "Lisbon" }, type: "tool_call" },
    ]);
    expect(values.messages[2]).toMatchObject({ tool_call_id: "call-1" });
    expect(values.city).toBe("Lisbon");
    expect(values.forecast).toEqual({ temperature: 21, sky: "clear" });
  });

  it("copies a thread with its state, and deletes a run", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [{ type: "human", content: "copy me" }] },
    });
    const copy = await client.threads.copy(thread.thread_id);
    expect(copy.thread_id).not.toBe(thread.thread_id);
    expect((copy.values as Values).messages.map((m) => m.content)).toEqual(["copy me", "copy me"]);
    const [run] = await client.runs.list(thread.thread_id);
    await client.runs.delete(thread.thread_id, run!.run_id);
    await expect(client.runs.get(thread.thread_id, run!.run_id)).rejects.toThrow(/404/);
  });

  it("creates the thread a run names when if_not_exists is create", async () => {
    const threadId = crypto.randomUUID();
    const values = (await client.runs.wait(threadId, "echo", {
      input: { messages: [{ type: "human", content: "new thread" }] },
      ifNotExists: "create",
    })) as Values;
    expect(values.messages.at(-1)!.content).toBe("new thread");
    expect((await client.threads.get(threadId)).status).toBe("idle");
  });

  it("reads the same thread back through the ACP and AG-UI faces", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [{ type: "human", content: "seen by ACP" }] },
    });
    const acp = (await (await fetch(`${base}/threads/${thread.thread_id}`)).json()) as {
      messages: Array<{ role: string; content: string }>;
    };
    expect(acp.messages.map((m) => [m.role, m.content])).toEqual([
      ["user", "seen by ACP"],
      ["assistant", "seen by ACP"],
    ]);
    // And through the AG-UI face: a client rejoining the thread gets its messages.
    const sse = await (
      await fetch(`${base}/ag-ui/echo/connect`, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream" },
        body: JSON.stringify({ threadId: thread.thread_id, runId: "r", messages: [] }),
      })
    ).text();
    const events = sse
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as { type: string; messages?: typeof acp.messages });
    const snapshot = events.find((e) => e.type === "MESSAGES_SNAPSHOT");
    expect(snapshot?.messages?.map((m) => [m.role, m.content])).toEqual([
      ["user", "seen by ACP"],
      ["assistant", "seen by ACP"],
    ]);
  });
});

describe("state updates", () => {
  it("updates a thread's state as LangGraph's reducers would, as a new checkpoint", async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [{ type: "human", content: "before", id: "h-1" }] },
    });
    const before = await client.threads.getState<Values>(thread.thread_id);
    const updated = (await client.threads.updateState(thread.thread_id, {
      values: {
        topic: "plans",
        messages: [
          { type: "human", content: "before, edited", id: "h-1" },
          { type: "ai", content: "added", id: "a-9" },
        ],
      },
    })) as unknown as { checkpoint: { checkpoint_id: string } };
    const after = await client.threads.getState<Values>(thread.thread_id);
    expect(after.checkpoint.checkpoint_id).toBe(updated.checkpoint.checkpoint_id);
    expect(after.values.topic).toBe("plans");
    expect(after.values.messages.map((m) => m.content)).toEqual([
      "before, edited",
      "before",
      "added",
    ]);
    // The checkpoint before the update is still there to read.
    const old = await client.threads.getState<Values>(
      thread.thread_id,
      before.checkpoint.checkpoint_id!,
    );
    expect(old.values.messages.map((m) => m.content)).toEqual(["before", "before"]);
    // A run reads the updated state: the next answer comes after the added message.
    const next = (await client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [{ type: "human", content: "then" }] },
    })) as Values;
    expect(next.messages.map((m) => m.content).slice(2)).toEqual(["added", "then", "then"]);
  });

  it("does not add again the messages a client sends that the thread has", async () => {
    const thread = await client.threads.create();
    const first = (await client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [{ type: "human", content: "once", id: "h-once" }] },
    })) as Values;
    const again = (await client.runs.wait(thread.thread_id, "echo", {
      input: { messages: [...first.messages, { type: "human", content: "twice", id: "h-2" }] },
    })) as Values;
    expect(again.messages.map((m) => m.content)).toEqual(["once", "once", "twice", "twice"]);
  });
});

describe("bad input", () => {
  const post = (path: string, body: unknown) =>
    fetch(`${base}/langgraph${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });

  it("answers 4xx with a detail naming the problem, never 5xx", async () => {
    const cases: Array<[string, unknown, RegExp]> = [
      ["/runs/wait", {}, /assistant_id/],
      ["/runs/wait", { assistant_id: "nobody" }, /assistant nobody not found/],
      ["/runs/wait", { assistant_id: "echo", input: [1] }, /input must be an object/],
      [
        "/runs/wait",
        { assistant_id: "echo", input: { messages: [{ type: "robot", content: "x" }] } },
        /type "robot"/,
      ],
      ["/runs/stream", { assistant_id: "echo", stream_mode: ["debug"] }, /"debug" not supported/],
      ["/runs/wait", { assistant_id: "echo", command: { goto: "x" } }, /command.goto/],
      ["/runs/wait", { assistant_id: "echo", command: { resume: 1 } }, /needs a thread/],
      ["/threads", { if_exists: "sometimes" }, /if_exists/],
      ["/threads/search", { limit: -1 }, /limit/],
      ["/assistants/search", { graph_id: 7 }, /graph_id/],
      ["/runs/wait", "{not json", /JSON/i],
    ];
    for (const [path, body, detail] of cases) {
      const response = await post(path, body);
      expect(response.status, `${path} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
      expect(response.status).toBeLessThan(500);
      const answer = (await response.json()) as { detail: string };
      expect(answer.detail).toMatch(detail);
    }
  });

  it("answers 404 for a thread that does not exist, and 422 for an id that is not one", async () => {
    const missing = await fetch(`${base}/langgraph/threads/${crypto.randomUUID()}`);
    expect(missing.status).toBe(404);
    const bad = await fetch(`${base}/langgraph/threads/not-an-id`);
    expect(bad.status).toBe(422);
    expect(((await bad.json()) as { detail: string }).detail).toMatch(/thread_id/);
  });
});
