/**
 * Interrupts in LangGraph's shapes, with LangGraph's client against the sample's approval agent
 * (it proposes a plan, stops for {"approved": boolean}, then finishes): `__interrupt__` in
 * values, updates and `runs.wait`, the thread `interrupted` with its interrupts and the state's
 * tasks, and `command.resume` answering it, checked against the agent's resume schema.
 */
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { sampleServer } from "../helpers/sample.js";

type Rec = Record<string, unknown>;
type Values = { messages: Rec[]; __interrupt__?: Rec[]; [key: string]: unknown };

const INTERRUPT = {
  id: "approve-1",
  value: { reason: "approval", message: "Approve the plan?" },
};

let t: TestApp;
let client: Client;

beforeAll(async () => {
  let base: string;
  ({ t, base } = await sampleServer());
  client = new Client({ apiUrl: `${base}/langgraph` });
});
afterAll(() => t.close());

async function interruptedThread() {
  const thread = await client.threads.create();
  const values = (await client.runs.wait(thread.thread_id, "approval-demo", {
    input: { messages: [{ type: "human", content: "migrate the database" }] },
  })) as Values;
  return { threadId: thread.thread_id, values };
}

describe("an interrupt", () => {
  it("is __interrupt__ in runs.wait's result, with the values so far", async () => {
    const { values } = await interruptedThread();
    expect(values.__interrupt__).toEqual([INTERRUPT]);
    expect(values.status).toBe("awaiting-approval");
    expect(values.messages.at(-1)).toMatchObject({
      type: "ai",
      content: expect.stringMatching(/^Plan:/),
    });
  });

  it("leaves the thread interrupted, with its interrupts and the state's task", async () => {
    const { threadId } = await interruptedThread();
    const thread = await client.threads.get(threadId);
    expect(thread.status).toBe("interrupted");
    expect(Object.values(thread.interrupts)).toEqual([[INTERRUPT]]);
    const state = await client.threads.getState(threadId);
    expect(state.next).toEqual(["approval-demo"]);
    expect(state.tasks).toHaveLength(1);
    expect(state.tasks[0]!.interrupts).toEqual([INTERRUPT]);
    const found = await client.threads.search({ status: "interrupted", limit: 100 });
    expect(found.map((f) => f.thread_id)).toContain(threadId);
  });

  it("ends a stream with __interrupt__ in values and updates", async () => {
    const thread = await client.threads.create();
    const parts: Array<{ event: string; data: unknown }> = [];
    for await (const part of client.runs.stream(thread.thread_id, "approval-demo", {
      input: { messages: [{ type: "human", content: "go" }] },
      streamMode: ["values", "updates"],
    })) {
      parts.push(part);
    }
    expect(parts.slice(-2)).toEqual([
      { event: "updates", data: { __interrupt__: [INTERRUPT] } },
      { event: "values", data: { __interrupt__: [INTERRUPT] } },
    ]);
  });
});

describe("command.resume", () => {
  it("refuses an answer the agent's resume schema does not accept, and the thread stays interrupted", async () => {
    const { threadId } = await interruptedThread();
    await expect(
      client.runs.wait(threadId, "approval-demo", { command: { resume: { approved: "yes" } } }),
    ).rejects.toThrow(/422.*approved/s);
    expect((await client.threads.get(threadId)).status).toBe("interrupted");
  });

  it("resumes the interrupted run with a value, streamed to the end", async () => {
    const { threadId } = await interruptedThread();
    const parts: Array<{ event: string; data: unknown }> = [];
    for await (const part of client.runs.stream(threadId, "approval-demo", {
      command: { resume: { approved: true } },
      streamMode: ["values", "messages-tuple"],
    })) {
      parts.push(part);
    }
    expect(parts[0]!.event).toBe("metadata");
    const text = parts
      .filter((p) => p.event === "messages")
      .map((p) => (p.data as Rec[])[0]!.content)
      .join("");
    expect(text).toBe("Approved. Backed up and migrated.");
    const last = parts.filter((p) => p.event === "values").at(-1)!.data as Values;
    expect(last.__interrupt__).toBeUndefined();
    expect(last.status).toBe("done");
    const thread = await client.threads.get(threadId);
    expect(thread.status).toBe("idle");
    expect(thread.interrupts).toEqual({});
  });

  it("resumes with a map by interrupt id through runs.wait", async () => {
    const { threadId } = await interruptedThread();
    const values = (await client.runs.wait(threadId, "approval-demo", {
      command: { resume: { "approve-1": { approved: true, comment: "fine" } } },
    })) as Values;
    expect(values.messages.at(-1)!.content).toBe("Approved. Backed up and migrated.");
  });

  it("is refused on a thread with nothing to resume", async () => {
    const thread = await client.threads.create();
    await expect(
      client.runs.wait(thread.thread_id, "approval-demo", {
        command: { resume: { approved: true } },
      }),
    ).rejects.toThrow(/409.*no interrupted run/s);
  });
});
