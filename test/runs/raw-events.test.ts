/**
 * `events.dropRaw`: RAW events and `rawEvent` fields are neither stored nor streamed, and the
 * run's content is the same. Measured on a LangGraph-like stream (a 40-character reply in
 * token-sized events, each with a ~1.3 KB rawEvent, and a RAW event per LangChain callback).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readUpdate } from "../../src/engine/frames/codec.js";
import type { TestApp } from "../helpers/app.js";
import { LANGGRAPH_LIKE_REPLY, langGraphLikeStream } from "../helpers/langgraph-like-stream.js";
import { openSse } from "../helpers/sse.js";
import { agentId, buildWith, type Json, listen, newThread, post, userSays } from "./helpers.js";

/** What one run stored: its frames' bytes, their count, and the AG-UI events among them. */
async function storedRun(t: TestApp, agent: string) {
  const threadId = await newThread(t);
  const waited = await post(t, `/threads/${threadId}/runs/wait`, {
    agent_id: agentId(agent),
    input: userSays("What is the capital of France?"),
  });
  const run = waited.run as Json;
  const frames = await t.storage.readFrames(run.run_id as string, 0);
  const events = frames
    .filter((frame) => frame.mode === "custom")
    .map((frame) => readUpdate(frame) as Json);
  const bytes = frames.reduce((sum, frame) => sum + Buffer.byteLength(frame.data), 0);
  return { run, output: waited.output as Json, frames: frames.length, bytes, events };
}

const textOf = (events: Json[]) =>
  events
    .filter((e) => e.type === "TEXT_MESSAGE_CONTENT")
    .map((e) => e.delta)
    .join("");

describe("events.dropRaw", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildWith([
      { name: "keeps-raw", script: langGraphLikeStream() },
      { name: "drops-raw", script: langGraphLikeStream(), events: { dropRaw: true } },
    ]);
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("off (the default): RAW events and rawEvent fields are stored as the agent sent them", async () => {
    const kept = await storedRun(t, "keeps-raw");
    expect(kept.run.status).toBe("success");
    expect(kept.events.filter((e) => e.type === "RAW")).toHaveLength(90);
    const content = kept.events.filter((e) => e.type === "TEXT_MESSAGE_CONTENT");
    expect(content.every((e) => e.rawEvent !== undefined)).toBe(true);
    expect(textOf(kept.events)).toBe(LANGGRAPH_LIKE_REPLY);
  });

  it("on: no RAW event and no rawEvent is stored; the content, state and result are the same", async () => {
    const kept = await storedRun(t, "keeps-raw");
    const dropped = await storedRun(t, "drops-raw");
    expect(dropped.run.status).toBe("success");
    expect(dropped.events.some((e) => e.type === "RAW")).toBe(false);
    expect(dropped.events.some((e) => "rawEvent" in e)).toBe(false);
    expect(textOf(dropped.events)).toBe(LANGGRAPH_LIKE_REPLY);
    const withoutRaw = kept.events
      .filter((e) => e.type !== "RAW")
      .map(({ rawEvent: _, ...rest }) => rest);
    // The same events otherwise (the runs' own ids aside).
    const types = (events: Json[]) => events.map((e) => e.type);
    expect(types(dropped.events)).toEqual(types(withoutRaw));
    expect(dropped.output.values).toEqual(kept.output.values);
    const said = (output: Json) =>
      (output.messages as Json[]).map((m) => [m.role, m.content, m.metadata]);
    expect(said(dropped.output)).toEqual(said(kept.output));
    // What the figures in docs/config.md rest on: the stored run is a small fraction.
    expect(dropped.bytes * 10).toBeLessThan(kept.bytes);
  });

  it("on: the stream a client follows carries no RAW event and no rawEvent either", async () => {
    const threadId = await newThread(t);
    const connection = await openSse(base, `/threads/${threadId}/runs/stream`, {
      body: { agent_id: agentId("drops-raw"), input: userSays("hi"), stream_mode: "custom" },
    });
    await connection.ended;
    const updates = connection.frames
      .map((frame) => (frame.data as { update?: Json }).update)
      .filter((update): update is Json => update !== undefined);
    expect(updates.length).toBeGreaterThan(10);
    expect(updates.some((e) => e.type === "RAW" || "rawEvent" in e)).toBe(false);
  });
});
