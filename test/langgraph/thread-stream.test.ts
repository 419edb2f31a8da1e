/**
 * LangGraph's v2 thread streaming through the face, read with `@langchain/langgraph-sdk`'s own
 * `client.threads.stream` (`POST /threads/{id}/commands`, `POST /threads/{id}/stream/events`).
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";

type Rec = Record<string, unknown>;
const human = (content: string) => ({ messages: [{ type: "human", content }] });

let t: TestApp;
let base: string;
let client: Client;

beforeAll(async () => {
  ({ t, base } = await sampleServer());
  client = new Client({ apiUrl: `${base}/langgraph` });
});
afterAll(() => t.close());

/** Events of a subscription until the run's lifecycle ends it. */
async function untilEnd(events: AsyncIterable<unknown>): Promise<Rec[]> {
  const seen: Rec[] = [];
  for await (const event of events) {
    const rec = event as Rec;
    seen.push(rec);
    const data = (rec.params as Rec).data as Rec;
    if (
      rec.method === "lifecycle" &&
      ["completed", "failed", "interrupted"].includes(String(data.event))
    )
      break;
  }
  return seen;
}

describe("client.threads.stream (v2)", () => {
  it("run.start streams the reply as messages, the values, and the run's lifecycle", async () => {
    const created = await client.threads.create();
    const thread = client.threads.stream(created.thread_id, { assistantId: "echo" });
    try {
      const raw = await thread.subscribe(["messages", "values", "lifecycle"]);
      const collected = untilEnd(raw);
      await thread.run.start({ input: human("hello over v2") });
      const events = await collected;

      const lifecycle = events
        .filter((event) => event.method === "lifecycle")
        .map((event) => ((event.params as Rec).data as Rec).event);
      expect(lifecycle).toEqual(["running", "completed"]);
      const seqs = events.map((event) => event.seq as number);
      expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
      expect(new Set(seqs).size).toBe(seqs.length);

      const blocks = events
        .filter((event) => event.method === "messages")
        .map((event) => ((event.params as Rec).data as Rec).event);
      expect(blocks[0]).toBe("message-start");
      expect(blocks).toContain("content-block-delta");
      expect(blocks.at(-1)).toBe("message-finish");

      const values = events.filter((event) => event.method === "values").at(-1);
      const messages = ((values!.params as Rec).data as Rec).messages as Rec[];
      expect(messages[0]).toMatchObject({ type: "human", content: "hello over v2" });
      expect(messages.at(-1)?.type).toBe("ai");
      expect(String(messages.at(-1)?.content)).toContain("hello over v2");
    } finally {
      await thread.close();
    }
  });

  it("the SDK assembles the reply and the final values from the stream", async () => {
    const created = await client.threads.create();
    const thread = client.threads.stream(created.thread_id, { assistantId: "echo" });
    try {
      await thread.run.start({ input: human("assemble me") });
      const output = (await thread.output) as { messages: Rec[] };
      expect(output.messages.map((message) => message.type)).toEqual(["human", "ai"]);
      let text = "";
      for await (const message of thread.messages) {
        text = await message.text;
        break;
      }
      expect(text).toBe(String(output.messages[1]!.content));
      expect(text).toContain("assemble me");
      // The same conversation through v1.
      const state = await client.threads.getState<{ messages: Rec[] }>(created.thread_id);
      expect(state.values.messages.at(-1)?.content).toBe(text);
    } finally {
      await thread.close();
    }
  });
});

describe("every sample agent over v2", () => {
  for (const agent of ["echo", "scripted-demo", "word-count", "remote-echo"]) {
    it(`${agent}: run.start, the run's lifecycle to completed, the thread's values`, async () => {
      const created = await client.threads.create();
      const thread = client.threads.stream(created.thread_id, { assistantId: agent });
      try {
        const lifecycle = untilEnd(await thread.subscribe(["lifecycle"]));
        await thread.run.start({ input: human("count these four words") });
        const ends = (await lifecycle).map((event) => ((event.params as Rec).data as Rec).event);
        expect(ends).toEqual(["running", "completed"]);
        const output = (await thread.output) as { messages: Rec[] };
        expect(output.messages[0]).toMatchObject({
          type: "human",
          content: "count these four words",
        });
        const state = await client.threads.getState<Rec>(created.thread_id);
        // The SDK hands messages over as LangChain message objects.
        const brief = (messages: Rec[]) => messages.map((m) => [m.type, m.id, m.content]);
        expect(brief(output.messages)).toEqual(brief(state.values.messages as Rec[]));
        expect(output.messages.length).toBeGreaterThan(1);
      } finally {
        await thread.close();
      }
    });
  }
});

describe("interrupts over v2", () => {
  it("an interrupt is input.requested on the input channel, and the lifecycle's interrupted", async () => {
    const created = await client.threads.create();
    const thread = client.threads.stream(created.thread_id, { assistantId: "approval-demo" });
    try {
      const raw = await thread.subscribe(["input", "lifecycle"]);
      const collected = untilEnd(raw);
      await thread.run.start({ input: human("migrate the database") });
      const events = await collected;
      const asked = events.filter((event) => event.method === "input.requested");
      expect(asked.map((event) => (event.params as Rec).data)).toEqual([
        {
          interrupt_id: "approve-1",
          payload: { reason: "approval", message: "Approve the plan?" },
        },
      ]);
      expect(((events.at(-1)!.params as Rec).data as Rec).event).toBe("interrupted");
      expect((await client.threads.get(created.thread_id)).status).toBe("interrupted");
    } finally {
      await thread.close();
    }
  });

  it("the SDK reads the interrupt, answers it with input.respond, and the run finishes", async () => {
    const created = await client.threads.create();
    const thread = client.threads.stream(created.thread_id, { assistantId: "approval-demo" });
    try {
      await thread.run.start({ input: human("migrate the database") });
      await thread.output;
      expect(thread.interrupted).toBe(true);
      expect(thread.interrupts).toEqual([
        {
          interruptId: "approve-1",
          payload: { reason: "approval", message: "Approve the plan?" },
          namespace: [],
        },
      ]);
      await thread.input.respond({
        namespace: [],
        interrupt_id: "approve-1",
        response: { approved: true },
      });
      // A new subscription replays the resumed run from where it was answered.
      const events = await untilEnd(await thread.subscribe(["values", "lifecycle"]));
      const lifecycle = events
        .filter((event) => event.method === "lifecycle")
        .map((event) => ((event.params as Rec).data as Rec).event);
      expect(lifecycle).toEqual(["running", "completed"]);
      const values = events.filter((event) => event.method === "values").at(-1)!;
      const output = (values.params as Rec).data as { messages: Rec[]; status: string };
      expect(output.status).toBe("done");
      expect(output.messages.at(-1)?.content).toBe("Approved. Backed up and migrated.");
      expect(thread.interrupts).toEqual([]);
      const state = await client.threads.get(created.thread_id);
      expect(state.status).toBe("idle");
    } finally {
      await thread.close();
    }
  });

  it("refuses an answer the agent's resume schema does not accept, and one with nothing to answer", async () => {
    const created = await client.threads.create();
    const thread = client.threads.stream(created.thread_id, { assistantId: "approval-demo" });
    try {
      await expect(
        thread.input.respond({ namespace: [], interrupt_id: "approve-1", response: {} }),
      ).rejects.toThrow(/409/);
      await thread.run.start({ input: human("migrate the database") });
      await thread.output;
      await expect(
        thread.input.respond({
          namespace: [],
          interrupt_id: "approve-1",
          response: { approved: "yes" },
        }),
      ).rejects.toThrow(/422/);
      expect((await client.threads.get(created.thread_id)).status).toBe("interrupted");
    } finally {
      await thread.close();
    }
  });
});
