import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { readSse } from "../helpers/sse.js";
import {
  agentId,
  buildWith,
  type Event,
  finished,
  listen,
  newThread,
  say,
  started,
} from "./helpers.js";

/** A parent that runs a subagent: the subagent's own work carries its subagentRunId. */
const withSubagent: Event[] = [
  started,
  { type: "SUBAGENT_STARTED", subagentRunId: "sub-1", name: "researcher" },
  { type: "TEXT_MESSAGE_START", messageId: "s1", role: "assistant", subagentRunId: "sub-1" },
  { type: "TEXT_MESSAGE_CONTENT", messageId: "s1", delta: "found it", subagentRunId: "sub-1" },
  { type: "TEXT_MESSAGE_END", messageId: "s1", subagentRunId: "sub-1" },
  { type: "SUBAGENT_FINISHED", subagentRunId: "sub-1" },
  ...say("p1", "summary"),
  finished(),
];

type Frame = { data: { type: string; update?: { type: string; subagentRunId?: string } } };

describe("stream_subgraphs and stream_mode", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildWith([
      { name: "parent", script: withSubagent },
      {
        name: "values-only",
        script: [started, ...say("m", "hi"), finished()],
        specs: { capabilities: { streaming: { values: true, custom: false } } },
      },
    ]);
    base = await listen(t);
  });
  afterAll(() => t.close());

  const updates = (frames: Frame[]) =>
    frames.filter((f) => f.data.type === "custom").map((f) => f.data.update!);

  it("POST …/runs/stream › leaves the subagents' output out by default", async () => {
    const threadId = await newThread(t);
    const connection = await readSse(base, `/threads/${threadId}/runs/stream`, {
      body: { agent_id: agentId("parent"), stream_mode: "custom" },
    });
    const events = updates(connection.frames as Frame[]);
    expect(events.map((e) => e.type)).toContain("SUBAGENT_STARTED");
    expect(
      events.filter((e) => e.subagentRunId !== undefined && !e.type.startsWith("SUBAGENT_")),
    ).toEqual([]);
    expect(events.map((e) => e.type)).toContain("TEXT_MESSAGE_CONTENT");
  });

  it("POST …/runs/stream › includes them with stream_subgraphs: true", async () => {
    const threadId = await newThread(t);
    const connection = await readSse(base, `/threads/${threadId}/runs/stream`, {
      body: { agent_id: agentId("parent"), stream_mode: "custom", stream_subgraphs: true },
    });
    const attributed = updates(connection.frames as Frame[]).filter(
      (e) => e.subagentRunId === "sub-1" && !e.type.startsWith("SUBAGENT_"),
    );
    expect(attributed.map((e) => e.type)).toEqual([
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
    ]);
  });

  it("POST /runs/stream › stateless runs (no stream_subgraphs option) include them", async () => {
    const connection = await readSse(base, "/runs/stream", {
      body: { agent_id: agentId("parent"), stream_mode: "custom" },
    });
    expect(
      updates(connection.frames as Frame[]).some(
        (e) => e.subagentRunId === "sub-1" && e.type === "TEXT_MESSAGE_CONTENT",
      ),
    ).toBe(true);
  });

  it("POST /runs › 422 for a stream mode the agent's descriptor does not declare", async () => {
    const res = await t.call("POST", "/runs", {
      agent_id: agentId("values-only"),
      stream_mode: ["values", "custom"],
    });
    expect(res.status).toBe(422);
    expect(res.body).toContain('stream_mode "custom" is not supported');
    const ok = await t.call("POST", "/runs", {
      agent_id: agentId("values-only"),
      stream_mode: "values",
    });
    expect(ok.status).toBe(200);
  });
});
