/**
 * A tools/call's SSE stream dropped and resumed with `Last-Event-ID` (Streamable HTTP,
 * "Resumability and Redelivery"): on the server that holds the session, from its log; once the
 * call has ended, or after a restart (the session revived from its record in SQLite), from the
 * run's stored frames. Every progress value after the last one seen arrives once, in order, then
 * the result under the call's request id. Forged ids and another caller's ids are refused.
 * (Across replicas on PostgreSQL: test/scale/mcp-replicas.test.ts.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStorage } from "../../src/storage/index.js";
import type { TestApp } from "../helpers/app.js";
import { listen, tempDbFile } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";
import {
  callAndDrop,
  callToEnd,
  eventsOf,
  openSession,
  progressOf,
  resume,
  type SseEvent,
  textOfAnswer,
} from "./sse-calls.js";

const KEY = "first-key-0123456789abcdef";
const OTHER_KEY = "second-key-0123456789abcdef";
const CONFIG = {
  server: {
    auth: {
      keys: [
        { key: KEY, name: "first" },
        { key: OTHER_KEY, name: "second" },
      ],
    },
  },
  agents: [echoAgent("echo", { adapter: { type: "echo", delayMs: 15 } })],
};
const said = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
const first = { authorization: `Bearer ${KEY}` };
const second = { authorization: `Bearer ${OTHER_KEY}` };

const lastMessageOf = (events: SseEvent[]) =>
  events
    .filter((event) => event.message?.method === "notifications/progress")
    .map((event) => (event.message!.params as { message?: string }).message)
    .at(-1);

/** What the resumed events must be after `seen`: later progress, each once, in order; the result. */
function expectResumed(seen: SseEvent[], resumed: SseEvent[], reference: SseEvent[], id: number) {
  const lastSeen = progressOf(seen).at(-1)!;
  const progress = progressOf(resumed);
  expect(progress.length).toBeGreaterThan(0);
  for (const [i, value] of progress.entries()) {
    expect(value).toBeGreaterThan(i === 0 ? lastSeen : progress[i - 1]!);
  }
  // Up to where the same call, never dropped, ended: the whole reply told.
  expect(lastMessageOf(resumed)).toBe(lastMessageOf(reference));
  expect(textOfAnswer(resumed, id)).toBe(said);
  const ids = resumed.flatMap((event) => (event.id ? [event.id] : []));
  expect(new Set(ids).size).toBe(ids.length);
}

describe("MCP call streams resumed with Last-Event-ID", () => {
  const dbFile = tempDbFile();
  let t: TestApp;
  let url: string;
  let reference: SseEvent[];

  const serve = async () => {
    t = await buildServing(CONFIG, { unchecked: true, storage: createStorage(dbFile) });
    url = `${await listen(t)}/mcp`;
  };
  beforeAll(async () => {
    await serve();
    reference = await callToEnd(url, await openSession(url, first), {
      id: 1,
      name: "echo",
      message: said,
    });
    expect(textOfAnswer(reference, 1)).toBe(said);
  });
  afterAll(async () => {
    await t?.close();
    await t?.storage.close();
  });

  /** Waits for the call stream to be recorded (its run made), then for that run to end. */
  const ended = async (lastEventId: string) => {
    const streams = t.storage.mcpSessions();
    let stream = await streams.getCallStream(lastEventId.slice(0, 32));
    while (!stream) {
      await new Promise((done) => setTimeout(done, 20));
      stream = await streams.getCallStream(lastEventId.slice(0, 32));
    }
    for (;;) {
      const run = await t.storage.getRun(stream!.run_id);
      if (run && run.status !== "pending") return;
      await new Promise((done) => setTimeout(done, 20));
    }
  };

  it("on the server holding the session, while the call runs, missing nothing", async () => {
    const session = await openSession(url, first);
    const { events, lastEventId } = await callAndDrop(url, session, {
      id: 2,
      name: "echo",
      message: said,
      progressEvents: 3,
    });
    const resumed = await resume(url, session, lastEventId);
    expect(resumed.status).toBe(200);
    expectResumed(events, eventsOf(await resumed.text()), reference, 2);
  });

  it("once the call has ended, from the run's stored frames", async () => {
    const session = await openSession(url, first);
    const { events, lastEventId } = await callAndDrop(url, session, {
      id: 3,
      name: "echo",
      message: said,
      progressEvents: 2,
    });
    await ended(lastEventId);
    const resumed = await resume(url, session, lastEventId);
    expect(resumed.status).toBe(200);
    const again = eventsOf(await resumed.text());
    expectResumed(events, again, reference, 3);
    // An id of the resumed stream resumes it again, from there.
    const middle = again.find((event) => event.message?.method === "notifications/progress")!;
    const twice = eventsOf(await (await resume(url, session, middle.id!)).text());
    expectResumed([middle], twice, reference, 3);
  });

  it("a stream dropped right after it opened resumes from the run's start", async () => {
    const session = await openSession(url, first);
    // Only the priming event (an id, no data) was read.
    const { events, lastEventId } = await callAndDrop(url, session, {
      id: 10,
      name: "echo",
      message: said,
      progressEvents: 1,
      until: (seen) => seen.some((event) => event.id !== undefined),
    });
    expect(events.every((event) => event.message === undefined)).toBe(true);
    await ended(lastEventId);
    const resumed = eventsOf(await (await resume(url, session, lastEventId)).text());
    const progress = progressOf(resumed);
    expect(progress.length).toBeGreaterThan(1);
    for (const [i, value] of progress.entries()) {
      if (i > 0) expect(value).toBeGreaterThan(progress[i - 1]!);
    }
    expect(lastMessageOf(resumed)).toBe(lastMessageOf(reference));
    expect(textOfAnswer(resumed, 10)).toBe(said);
  });

  it("after a restart: the session is revived from its record, the stream from the run", async () => {
    const session = await openSession(url, first);
    const { events, lastEventId } = await callAndDrop(url, session, {
      id: 4,
      name: "echo",
      message: said,
      progressEvents: 2,
    });
    await ended(lastEventId);
    await t.close();
    await t.storage.close();
    await serve();
    const resumed = await resume(url, session, lastEventId);
    expect(resumed.status).toBe(200);
    expectResumed(events, eventsOf(await resumed.text()), reference, 4);
    const listed = await fetch(url, {
      method: "POST",
      headers: session,
      body: JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/list" }),
    });
    expect(listed.status).toBe(200);
    const [answer] = eventsOf(await listed.text()).filter((event) => event.message?.id === 5);
    expect((answer!.message!.result as { tools: Array<{ name: string }> }).tools[0]!.name).toBe(
      "echo",
    );
  });

  it("refuses a forged or malformed Last-Event-ID with a 4xx in JSON-RPC's shape", async () => {
    const session = await openSession(url, first);
    for (const [id, status] of [
      ["garbage", 400],
      ["12", 400],
      [`${"f".repeat(32)}.-1`, 400],
      [`${"f".repeat(32)}.99999999999999999999`, 400],
      [`${"0".repeat(32)}.3`, 404],
      [`${"a".repeat(32)}.3.1`, 404],
    ] as const) {
      const refused = await resume(url, session, id);
      expect(refused.status, id).toBe(status);
      expect(await refused.json()).toMatchObject({ jsonrpc: "2.0", id: null, error: {} });
    }
  });

  it("answers another caller's event id and session as not found", async () => {
    const mine = await openSession(url, first);
    const { lastEventId } = await callAndDrop(url, mine, {
      id: 6,
      name: "echo",
      message: said,
      progressEvents: 1,
    });
    const theirs = await openSession(url, second);
    // Their own session, my event id.
    const withTheirSession = await resume(url, theirs, lastEventId);
    expect(withTheirSession.status).toBe(404);
    expect(JSON.stringify(await withTheirSession.json())).not.toContain(said.slice(0, 10));
    // My session id with their key, for the stream and for a request.
    const mySessionTheirKey = { ...mine, ...second };
    expect((await resume(url, mySessionTheirKey, lastEventId)).status).toBe(404);
    const listed = await fetch(url, {
      method: "POST",
      headers: mySessionTheirKey,
      body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" }),
    });
    expect(listed.status).toBe(404);
    // Mine still resumes for me.
    await ended(lastEventId);
    expect((await resume(url, mine, lastEventId)).status).toBe(200);
  });

  it("a question the dropped stream carried is still answered: the resumed stream gets the result", async () => {
    const session = await openSession(url, first, { elicitation: { form: {} } });
    const isQuestion = (event: SseEvent) => event.message?.method === "elicitation/create";
    const { events, lastEventId } = await callAndDrop(url, session, {
      id: 8,
      name: "echo",
      message: "/approve ship it",
      progressEvents: 0,
      until: (seen) => seen.some(isQuestion),
    });
    const asked = events.find(isQuestion)!;
    const resumed = await resume(url, session, lastEventId);
    expect(resumed.status).toBe(200);
    // The server that asked still waits for the answer to the question the client saw.
    const answered = await fetch(url, {
      method: "POST",
      headers: session,
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: asked.message!.id,
        result: { action: "accept", content: { approved: true } },
      }),
    });
    expect(answered.status).toBe(202);
    const rest = eventsOf(await resumed.text());
    expect(rest.some(isQuestion)).toBe(false);
    expect(textOfAnswer(rest, 8)).toContain("ship it");
  });
});
