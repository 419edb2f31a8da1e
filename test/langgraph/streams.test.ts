/**
 * LangGraph streams through the face, read with `@langchain/langgraph-sdk`'s `Client`: each
 * stream mode, `metadata` first, `error` on failure, background runs joined and cancelled, and
 * a resumable stream rejoined after a drop with `Last-Event-ID`.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, type TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";
import { listen } from "../runs/helpers.js";
import { REPORTER_AGENTS as SCRIPTED } from "./scripted-agents.js";

type Part = { id?: string; event: string; data: unknown };
type Chunk = Record<string, unknown>;

async function collect(stream: AsyncIterable<Part>): Promise<Part[]> {
  const parts: Part[] = [];
  for await (const part of stream) parts.push(part);
  return parts;
}

const human = (content: string) => ({ messages: [{ type: "human", content }] });

let t: TestApp;
let base: string;
let client: Client;

beforeAll(async () => {
  ({ t, base } = await sampleServer());
  client = new Client({ apiUrl: `${base}/langgraph` });
});
afterAll(() => t.close());

describe("runs.stream", () => {
  it("starts with metadata, streams message chunks with LangGraph's metadata, ends with the values", async () => {
    const thread = await client.threads.create();
    let created: { run_id: string; thread_id?: string } | undefined;
    const parts = await collect(
      client.runs.stream(thread.thread_id, "echo", {
        input: human("one two three"),
        streamMode: ["values", "messages-tuple", "updates"],
        onRunCreated: (run) => {
          created = run;
        },
      }),
    );
    expect(parts[0]!.event).toBe("metadata");
    const runId = (parts[0]!.data as { run_id: string }).run_id;
    // Content-Location, without the face's prefix, told the client which run it made.
    expect(created).toEqual({ run_id: runId, thread_id: thread.thread_id });

    const chunks = parts.filter((p) => p.event === "messages").map((p) => p.data as [Chunk, Chunk]);
    expect(chunks.map(([chunk]) => chunk.content).join("")).toBe("one two three");
    const final = parts.filter((p) => p.event === "values").at(-1)!.data as {
      messages: Chunk[];
    };
    const answer = final.messages.at(-1)!;
    expect(answer).toMatchObject({ type: "ai", content: "one two three" });
    for (const [chunk, metadata] of chunks) {
      expect(chunk).toMatchObject({ type: "AIMessageChunk", id: answer.id });
      expect(metadata).toMatchObject({
        langgraph_node: "echo",
        run_id: runId,
        thread_id: thread.thread_id,
        graph_id: "echo",
        assistant_id: "echo",
      });
    }
    const updates = parts.filter((p) => p.event === "updates").map((p) => p.data as Chunk);
    const updatedMessages = updates.flatMap(
      (u) => ((u.echo as Chunk | undefined)?.messages as Chunk[] | undefined) ?? [],
    );
    expect(updatedMessages.map((m) => m.content)).toContain("one two three");
    // The first values are the run's input, as LangGraph's are: the question, not the answer begun.
    const first = parts.find((p) => p.event === "values")!.data as { messages: Chunk[] };
    expect(first.messages.map((m) => [m.type, m.content])).toEqual([["human", "one two three"]]);
    // The values are sent when a message is complete, not after every token.
    expect(parts.filter((p) => p.event === "values").length).toBeLessThan(chunks.length);
  });

  it("streams tool call chunks and the tool's result in messages-tuple", async () => {
    const parts = await collect(
      client.runs.stream(null, "scripted-demo", {
        input: human("weather?"),
        streamMode: "messages-tuple",
      }),
    );
    expect(parts.map((p) => p.event)).not.toContain("values");
    const chunks = parts.filter((p) => p.event === "messages").map((p) => (p.data as Chunk[])[0]!);
    const toolChunks = chunks.flatMap((c) => (c.tool_call_chunks as Chunk[] | undefined) ?? []);
    expect(toolChunks[0]).toMatchObject({ id: "call-1", name: "get_weather", index: 0 });
    expect(toolChunks.map((c) => c.args).join("")).toBe('{"city":"Lisbon"}');
    const withCalls = chunks.filter((c) => ((c.tool_call_chunks as Chunk[]) ?? []).length > 0);
    expect(withCalls[0]!.id).toBe("msg-1");
    expect(chunks.at(-1)).toMatchObject({ type: "tool", id: "msg-2", tool_call_id: "call-1" });
  });

  it("streams each message as it grows in messages mode", async () => {
    const parts = await collect(
      client.runs.stream(null, "scripted-demo", {
        input: human("weather?"),
        streamMode: "messages",
      }),
    );
    const events = parts.map((p) => p.event);
    expect(events[1]).toBe("messages/metadata");
    expect(Object.keys(parts[1]!.data as Chunk)).toEqual(["msg-1"]);
    const partials = parts
      .filter((p) => p.event === "messages/partial")
      .map((p) => (p.data as Chunk[])[0]!);
    expect(partials[0]).toMatchObject({
      type: "ai",
      id: "msg-1",
      content: "Let me check the weather ",
    });
    const complete = parts
      .filter((p) => p.event === "messages/complete")
      .map((p) => (p.data as Chunk[])[0]!);
    expect(complete.at(-2)).toMatchObject({
      type: "ai",
      id: "msg-1",
      content: "Let me check the weather in Lisbon.",
      tool_calls: [
        { id: "call-1", name: "get_weather", args: { city: "Lisbon" }, type: "tool_call" },
      ],
    });
    expect(complete.at(-1)).toMatchObject({ type: "tool", id: "msg-2", tool_call_id: "call-1" });
  });

  it("streams a tool's start and end in tools mode", async () => {
    const parts = await collect(
      client.runs.stream(null, "scripted-demo", { input: human("weather?"), streamMode: "tools" }),
    );
    expect(parts.filter((p) => p.event === "tools").map((p) => p.data)).toEqual([
      {
        event: "on_tool_start",
        toolCallId: "call-1",
        name: "get_weather",
        input: { city: "Lisbon" },
      },
      {
        event: "on_tool_end",
        toolCallId: "call-1",
        name: "get_weather",
        output: '{"temperature":21,"sky":"clear"}',
      },
    ]);
  });

  it("refuses a stream mode it cannot honour, naming it", async () => {
    const thread = await client.threads.create();
    const refused = collect(
      client.runs.stream(thread.thread_id, "echo", {
        input: human("x"),
        streamMode: ["values", "debug", "tasks"],
      }),
    );
    await expect(refused).rejects.toThrow(/422.*debug.*tasks.*not supported/s);
  });
});

describe("custom events and errors", () => {
  let own: TestApp;
  let ownClient: Client;
  beforeAll(async () => {
    own = await build({ yaml: SCRIPTED, unchecked: true });
    ownClient = new Client({ apiUrl: `${await listen(own)}/langgraph` });
  });
  afterAll(() => own.close());

  it("streams the agent's custom events in custom mode", async () => {
    const parts = await collect(
      ownClient.runs.stream(null, "reporter", { input: human("go"), streamMode: ["custom"] }),
    );
    expect(parts.map((p) => p.event)).toEqual(["metadata", "custom", "custom"]);
    expect(parts[2]!.data).toEqual({ name: "progress", value: { done: 2, of: 2 } });
  });

  it("ends a failed run's stream with an error event, and runs.wait throws it", async () => {
    const parts = await collect(
      ownClient.runs.stream(null, "failing", { input: human("go"), streamMode: ["values"] }),
    );
    expect(parts.at(-1)).toEqual({
      event: "error",
      data: { error: "AgentError", message: expect.stringContaining("the model is down") },
    });
    await expect(ownClient.runs.wait(null, "failing", { input: human("go") })).rejects.toThrow(
      /the model is down/,
    );
  });
});

describe("background runs", () => {
  it("creates a run, lists and gets it, joins it and its stream", async () => {
    const thread = await client.threads.create();
    const run = await client.runs.create(thread.thread_id, "echo", { input: human("in the back") });
    expect(run.assistant_id).toBe("echo");
    expect(["pending", "running"]).toContain(run.status);
    const joined = (await client.runs.join(thread.thread_id, run.run_id)) as { messages: Chunk[] };
    expect(joined.messages.at(-1)!.content).toBe("in the back");
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("success");
    expect((await client.runs.list(thread.thread_id)).map((r) => r.run_id)).toEqual([run.run_id]);
    // Joining a stopped run's stream gives its last values.
    const parts = await collect(client.runs.joinStream(thread.thread_id, run.run_id));
    expect(parts[0]!.event).toBe("metadata");
    const values = parts.find((p) => p.event === "values")!.data as { messages: Chunk[] };
    expect(values.messages.at(-1)!.content).toBe("in the back");
  });

  it("cancels a run: it ends interrupted and its thread is idle again", async () => {
    const thread = await client.threads.create();
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
    const run = await client.runs.create(thread.thread_id, "echo", { input: human(words) });
    await client.runs.cancel(thread.thread_id, run.run_id, true);
    expect((await client.runs.get(thread.thread_id, run.run_id)).status).toBe("interrupted");
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
    const listed = await client.runs.list(thread.thread_id, { status: "interrupted" });
    expect(listed.map((r) => r.run_id)).toEqual([run.run_id]);
  });
});

describe("a busy thread", () => {
  it("refuses a second run by default, and interrupts the first with multitask_strategy interrupt", async () => {
    const thread = await client.threads.create();
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
    const first = await client.runs.create(thread.thread_id, "echo", { input: human(words) });
    await expect(
      client.runs.wait(thread.thread_id, "echo", { input: human("me too") }),
    ).rejects.toThrow(/409.*busy/s);
    const second = (await client.runs.wait(thread.thread_id, "echo", {
      input: human("me first"),
      multitaskStrategy: "interrupt",
    })) as { messages: Chunk[] };
    expect(second.messages.at(-1)!.content).toBe("me first");
    expect((await client.runs.get(thread.thread_id, first.run_id)).status).toBe("interrupted");
  });

  it("cancels a stream's run when the client leaves, with on_disconnect cancel", async () => {
    const thread = await client.threads.create();
    const words = Array.from({ length: 200 }, (_, i) => `w${i}`).join(" ");
    const controller = new AbortController();
    let runId = "";
    try {
      for await (const part of client.runs.stream(thread.thread_id, "echo", {
        input: human(words),
        streamMode: ["messages-tuple"],
        onDisconnect: "cancel",
        signal: controller.signal,
        onRunCreated: (run) => {
          runId = run.run_id;
        },
      })) {
        if (part.event === "messages") controller.abort();
      }
    } catch (err) {
      expect((err as Error).name).toBe("AbortError");
    }
    const run = await client.runs
      .join(thread.thread_id, runId)
      .then(() => client.runs.get(thread.thread_id, runId));
    expect(run.status).toBe("interrupted");
  });
});

describe("resumable streams", () => {
  it("rejoins a dropped stream with Last-Event-ID and gets exactly the events it missed", async () => {
    const thread = await client.threads.create();
    const words = Array.from({ length: 30 }, (_, i) => `word${i}`).join(" ");
    const controller = new AbortController();
    const seen: Part[] = [];
    let runId = "";
    try {
      for await (const part of client.runs.stream(thread.thread_id, "echo", {
        input: human(words),
        streamMode: ["messages-tuple"],
        streamResumable: true,
        signal: controller.signal,
        onRunCreated: (run) => {
          runId = run.run_id;
        },
      })) {
        seen.push(part);
        if (seen.filter((p) => p.event === "messages").length === 5) controller.abort();
      }
    } catch (err) {
      expect((err as Error).name).toBe("AbortError");
    }
    const lastId = seen.filter((p) => p.id !== undefined).at(-1)!.id!;
    const rest = await collect(
      client.runs.joinStream(thread.thread_id, runId, { lastEventId: lastId }),
    );
    expect(rest.map((p) => p.event)).not.toContain("metadata");
    const text = [...seen, ...rest]
      .filter((p) => p.event === "messages")
      .map((p) => (p.data as Chunk[])[0]!.content)
      .join("");
    expect(text).toBe(words);
  });
});
