/**
 * LangGraph's v2 thread streaming, continued: a stream dropped and replayed by `seq` (with the
 * SDK's own SSE transport, `ProtocolSseTransportAdapter`), `state.get`, and the `tools`,
 * `updates` and `custom` channels, read with `client.threads.stream`.
 */
import { Client, ProtocolSseTransportAdapter } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { listen } from "../runs/helpers.js";
import { REPORTER_AGENTS as REPORTER } from "./scripted-agents.js";

type Rec = Record<string, unknown>;
const human = (content: string) => ({ messages: [{ type: "human", content }] });
const dataOf = (event: Rec) => (event.params as Rec).data as Rec;
const TERMINAL = ["completed", "failed", "interrupted"];

let t: TestApp;
let apiUrl: string;
let client: Client;

beforeAll(async () => {
  let base: string;
  ({ t, base } = await sampleServer());
  apiUrl = `${base}/langgraph`;
  client = new Client({ apiUrl });
});
afterAll(() => t.close());

/** Events of a subscription until the run's lifecycle ends it (or `count` of them). */
async function collect(events: AsyncIterable<unknown>, count = Infinity): Promise<Rec[]> {
  const seen: Rec[] = [];
  if (count <= 0) return seen;
  for await (const event of events) {
    const rec = event as Rec;
    seen.push(rec);
    if (seen.length >= count) break;
    if (rec.method === "lifecycle" && TERMINAL.includes(String(dataOf(rec).event))) break;
  }
  return seen;
}

/** A finished conversation with `agent` on a new thread. */
async function finishedThread(agent: string, text: string): Promise<string> {
  const created = await client.threads.create();
  await client.runs.wait(created.thread_id, agent, { input: human(text) });
  return created.thread_id;
}

/** The SDK's SSE transport on a thread: one event stream (no reconnects: a drop is a drop). */
function openStream(threadId: string, channels: string[], since?: number) {
  const transport = new ProtocolSseTransportAdapter({ apiUrl, threadId, maxReconnectAttempts: 0 });
  const stream = transport.openEventStream({
    channels,
    ...(since !== undefined && { since }),
  } as never);
  return { transport, stream };
}

const withoutTimestamp = (event: Rec) => ({
  ...event,
  params: { ...(event.params as Rec), timestamp: undefined },
});

describe("a v2 stream dropped and replayed by seq", () => {
  it("replays exactly the events after the last seq the client saw", async () => {
    const threadId = await finishedThread("scripted-demo", "weather?");
    const channels = ["messages", "values", "updates", "tools", "lifecycle"];
    const full = openStream(threadId, channels);
    const all = await collect(full.stream.events);
    full.stream.close();
    await full.transport.close();
    expect(all.length).toBeGreaterThan(6);

    const cut = Math.floor(all.length / 2);
    const first = openStream(threadId, channels);
    const before = await collect(first.stream.events, cut);
    first.stream.close(); // the drop
    await first.transport.close();
    expect(before.map(withoutTimestamp)).toEqual(all.slice(0, cut).map(withoutTimestamp));

    const again = openStream(threadId, channels, before.at(-1)!.seq as number);
    const after = await collect(again.stream.events);
    again.stream.close();
    await again.transport.close();
    expect(after.map(withoutTimestamp)).toEqual(all.slice(cut).map(withoutTimestamp));
  });

  it("refuses a channel it does not serve, naming it", async () => {
    const created = await client.threads.create();
    const { transport, stream } = openStream(created.thread_id, ["checkpoints"]);
    await expect(stream.ready).rejects.toThrow(/422.*checkpoints/s);
    await transport.close();
  });
});

describe("one stream across a thread's runs", () => {
  // The SDK's ThreadStream ends a subscription at its run's end; the transport's stream goes on.
  it("follows each run started on the thread, its events' seq growing from run to run", async () => {
    const created = await client.threads.create();
    const { transport, stream } = openStream(created.thread_id, ["lifecycle", "values"]);
    try {
      await stream.ready;
      const seen: Rec[] = [];
      let completed = 0;
      const collected = (async () => {
        for await (const event of stream.events) {
          const rec = event as Rec;
          seen.push(rec);
          if (rec.method === "lifecycle" && dataOf(rec).event === "completed") {
            completed++;
            if (completed === 1) {
              await client.runs.wait(created.thread_id, "echo", { input: human("second") });
            }
            if (completed === 2) break;
          }
        }
      })();
      await client.runs.wait(created.thread_id, "echo", { input: human("first") });
      await collected;
      const lifecycle = seen
        .filter((event) => event.method === "lifecycle")
        .map((event) => dataOf(event).event);
      expect(lifecycle).toEqual(["running", "completed", "running", "completed"]);
      const seqs = seen.map((event) => event.seq as number);
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      const last = seen.filter((event) => event.method === "values").at(-1)!;
      expect((dataOf(last).messages as Rec[]).map((m) => m.content)).toEqual([
        "first",
        "first",
        "second",
        "second",
      ]);
    } finally {
      stream.close();
      await transport.close();
    }
  });
});

describe("state.get", () => {
  it("answers the thread's values, as the v1 state has them", async () => {
    const threadId = await finishedThread("echo", "state please");
    const thread = client.threads.stream(threadId, { assistantId: "echo" });
    try {
      const state = await thread.state.get({ namespace: [] });
      const v1 = await client.threads.getState<Rec>(threadId);
      expect(state.values).toEqual(v1.values);
      expect((state.values.messages as Rec[]).at(-1)?.content).toContain("state please");
      expect(state.checkpoint?.id).toBe(v1.checkpoint.checkpoint_id);
    } finally {
      await thread.close();
    }
  });
});

describe("the tools, updates and custom channels", () => {
  it("streams a tool call's start and end, and the state's updates", async () => {
    const created = await client.threads.create();
    const thread = client.threads.stream(created.thread_id, { assistantId: "scripted-demo" });
    try {
      const collected = collect(await thread.subscribe(["tools", "updates", "lifecycle"]));
      await thread.run.start({ input: human("weather in Lisbon?") });
      const events = await collected;
      const tools = events.filter((event) => event.method === "tools").map(dataOf);
      expect(tools).toEqual([
        {
          event: "tool-started",
          tool_call_id: "call-1",
          tool_name: "get_weather",
          input: { city: "Lisbon" },
        },
        {
          event: "tool-finished",
          tool_call_id: "call-1",
          output: '{"temperature":21,"sky":"clear"}',
        },
      ]);
      const updates = events.filter((event) => event.method === "updates").map(dataOf);
      expect(updates.every((update) => update.node === "scripted-demo")).toBe(true);
      expect(updates.some((update) => (update.values as Rec).city === "Lisbon")).toBe(true);
    } finally {
      await thread.close();
    }
  });

  it("a failed run's lifecycle says failed, with the agent's error", async () => {
    const own = await build({ yaml: REPORTER, unchecked: true });
    try {
      const ownClient = new Client({ apiUrl: `${await listen(own)}/langgraph` });
      const created = await ownClient.threads.create();
      const thread = ownClient.threads.stream(created.thread_id, { assistantId: "failing" });
      try {
        const collected = collect(await thread.subscribe(["lifecycle"]));
        await thread.run.start({ input: human("go") });
        const ends = (await collected).map(dataOf);
        expect(ends.at(-1)).toEqual({
          event: "failed",
          graph_name: "failing",
          error: expect.stringContaining("the model is down"),
        });
      } finally {
        await thread.close();
      }
    } finally {
      await own.close();
    }
  });

  it("streams the agent's custom events as {name, payload}", async () => {
    const own = await build({ yaml: REPORTER, unchecked: true });
    try {
      const ownClient = new Client({ apiUrl: `${await listen(own)}/langgraph` });
      const created = await ownClient.threads.create();
      const thread = ownClient.threads.stream(created.thread_id, { assistantId: "reporter" });
      try {
        const collected = collect(await thread.subscribe(["custom", "lifecycle"]));
        await thread.run.start({ input: human("report") });
        const custom = (await collected).filter((event) => event.method === "custom").map(dataOf);
        expect(custom).toEqual([
          { name: "progress", payload: { done: 1, of: 2 } },
          { name: "progress", payload: { done: 2, of: 2 } },
        ]);
      } finally {
        await thread.close();
      }
    } finally {
      await own.close();
    }
  });
});
