/**
 * Values frames are stored as the segment's start plus its events, and rebuilt on read (see
 * src/engine/frames/codec.ts). Whoever reads a run's stream, and whenever, gets the same bytes:
 * a live follower, joiners that come in while the run goes on, and replays from every position
 * of the finished log, on SQLite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { openDisposable, requirePostgres } from "../storage/pg-helpers.js";
import {
  agentId,
  buildWith,
  type Event,
  finished,
  type Json,
  newThread,
  post,
  settledRun,
  snapshot,
  started,
  userSays,
} from "./helpers.js";

interface Frame {
  id: number;
  data: string;
}

/** The frames of an SSE body (keep-alives are off in tests). */
function parseSse(body: string): Frame[] {
  return body
    .split("\n\n")
    .filter((block) => block.startsWith("id: "))
    .map((block) => {
      const lines = block.split("\n");
      return {
        id: Number(lines[0]!.slice(4)),
        data: lines.find((line) => line.startsWith("data: "))!.slice(6),
      };
    });
}

const text = (id: string, parts: string[]): Event[] => [
  { type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" },
  ...parts.map((delta) => ({ type: "TEXT_MESSAGE_CONTENT", messageId: id, delta })),
  { type: "TEXT_MESSAGE_END", messageId: id },
];

const parts = (n: number, word: string) => Array.from({ length: n }, (_, i) => `${word} ${i}; `);

/** Text growth, reasoning, a tool call and its result, state snapshots and patches, and a messages snapshot that replaces, adds and removes. */
const MIXED: Event[] = [
  started,
  snapshot({ n: 0, list: [] }),
  ...text("m1", parts(12, "alpha")),
  { type: "REASONING_START", messageId: "r1" },
  { type: "REASONING_MESSAGE_START", messageId: "r1-m", role: "reasoning" },
  ...parts(6, "thinking").map((delta) => ({
    type: "REASONING_MESSAGE_CONTENT",
    messageId: "r1-m",
    delta,
  })),
  { type: "REASONING_MESSAGE_END", messageId: "r1-m" },
  { type: "REASONING_END", messageId: "r1" },
  { type: "TOOL_CALL_START", toolCallId: "c1", toolCallName: "lookup", parentMessageId: "m1" },
  ...['{"q":', '"the', ' answer"', "}"].map((delta) => ({
    type: "TOOL_CALL_ARGS",
    toolCallId: "c1",
    delta,
  })),
  { type: "TOOL_CALL_END", toolCallId: "c1" },
  { type: "TOOL_CALL_RESULT", messageId: "t1", toolCallId: "c1", content: "42" },
  { type: "STATE_DELTA", delta: [{ op: "add", path: "/list/-", value: 1 }] },
  { type: "STATE_DELTA", delta: [{ op: "replace", path: "/n", value: 2 }] },
  // Fails as a whole (no such path): the state stays as it was.
  { type: "STATE_DELTA", delta: [{ op: "remove", path: "/missing/x" }] },
  ...text("m2", parts(8, "beta")),
  {
    type: "MESSAGES_SNAPSHOT",
    messages: [
      { id: "m1", role: "assistant", content: "replaced" },
      { id: "m9", role: "user", content: "added" },
    ],
  },
  ...text("m3", parts(10, "gamma")),
  snapshot({ n: 3, list: [1, 2], nested: { deep: ["x"] } }),
  finished(),
];

const GATED: Event[][] = [
  [
    started,
    ...text("g1", parts(10, "first")),
    snapshot({ phase: "asked" }),
    finished({ outcome: { type: "interrupt", interrupts: [{ id: "i1", reason: "approval" }] } }),
  ],
  [
    started,
    ...text("g2", parts(10, "second")),
    { type: "STATE_DELTA", delta: [{ op: "replace", path: "/phase", value: "done" }] },
    finished(),
  ],
];

for (const backend of ["sqlite", "postgres"] as const) {
  describe(`values streams rebuilt from the log (${backend})`, () => {
    let t: TestApp;
    beforeAll(async () => {
      if (backend === "postgres") await requirePostgres();
      t = await buildWith(
        [
          { name: "mixed", script: MIXED, delayMs: 3 },
          { name: "gated", segments: GATED, delayMs: 3 },
        ],
        backend === "postgres" ? { storage: await openDisposable() } : {},
      );
    }, 30_000);
    afterAll(async () => {
      const storage = t.storage;
      await t.close();
      if (backend === "postgres") await storage.close();
    });

    const streamUrl = (threadId: string, runId: string) =>
      `/threads/${threadId}/runs/${runId}/stream`;

    async function join(threadId: string, runId: string, afterSeq: number): Promise<Frame[]> {
      const response = await t.app.inject({
        method: "GET",
        url: streamUrl(threadId, runId),
        headers: { "last-event-id": String(afterSeq) },
      });
      expect(response.statusCode).toBe(200);
      return parseSse(response.body);
    }

    /**
     * Starts a run and follows it live from its start, with joiners that come in at the seqs
     * reached while it goes on. Resolves when the segment is over.
     */
    async function followLive(threadId: string, runId: string, fromSeq: number) {
      const live = join(threadId, runId, fromSeq);
      const joiners: Promise<{ at: number; frames: Frame[] }>[] = [];
      let done = false;
      void live.finally(() => {
        done = true;
      });
      const seen = new Set<number>();
      while (!done) {
        const run = await t.storage.getRun(runId);
        const at = run?.last_seq ?? 0;
        if (!seen.has(at) && at > fromSeq) {
          seen.add(at);
          joiners.push(join(threadId, runId, at).then((frames) => ({ at, frames })));
        }
        await new Promise((resolve) => setTimeout(resolve, 7));
      }
      return { live: await live, joiners: await Promise.all(joiners) };
    }

    function expectSameAfter(reference: Frame[], at: number, frames: Frame[]) {
      const expected = reference.filter((frame) => frame.id > at);
      expect(frames.map((f) => f.id)).toEqual(expected.map((f) => f.id));
      // Byte for byte, frame by frame (a mismatch names the frame).
      for (const [i, frame] of frames.entries()) expect(frame.data).toBe(expected[i]!.data);
    }

    async function replaysMatch(threadId: string, runId: string, reference: Frame[]) {
      const last = reference.at(-1)!.id;
      for (let at = 0; at <= last; at++) {
        expectSameAfter(reference, at, await join(threadId, runId, at));
      }
    }

    it("a live follower, joiners during the run and replays from every position get the same values stream", async () => {
      const threadId = await newThread(t);
      const created = (await post(t, `/threads/${threadId}/runs`, {
        agent_id: agentId("mixed"),
        input: userSays("go"),
        stream_mode: ["values", "custom"],
      })) as { run_id: string };
      const { live, joiners } = await followLive(threadId, created.run_id, 0);
      const values = live.filter((f) => JSON.parse(f.data).type === "values");
      expect(values.length).toBeGreaterThan(5);
      expect(live.map((f) => f.id)).toEqual(live.map((_, i) => i + 1));
      expect(joiners.length).toBeGreaterThan(0);
      for (const { at, frames } of joiners) expectSameAfter(live, at, frames);
      await replaysMatch(threadId, created.run_id, live);

      // The values stream is the accumulated state and messages: its last frame is the result.
      const final = JSON.parse(live.at(-1)!.data) as Json;
      const lastValues = JSON.parse(values.at(-2)!.data) as Json;
      expect(final.values).toEqual({ n: 3, list: [1, 2], nested: { deep: ["x"] } });
      expect(lastValues.values).toEqual(final.values);
      expect(lastValues.messages).toEqual(final.messages);
      const ids = (final.messages as Json[]).map((m) => m.id);
      // The snapshot replaced m1, added m9 and dropped m2; it carried no reasoning, so r1-m stays.
      expect(ids).toEqual(["m1", "r1-m", "m9", "m3"]);
      // The run's output and the wait answer are complete: values and messages are in them.
      const wait = await t.call("GET", `/threads/${threadId}/runs/${created.run_id}/wait`);
      expect(wait.status).toBe(200);
      const waited = wait.body as { output: Json };
      // The final frame's output is the result without the values and messages it carries.
      const result = { type: "result", values: final.values, messages: final.messages };
      expect(final.output).toEqual({ type: "result" });
      expect(waited.output).toEqual(result);
      expect(waited.output).toMatchObject({ type: "result", values: final.values });
      expect((waited.output.messages as Json[]).map((m) => m.id)).toEqual(ids);
      const got = await t.call("GET", `/threads/${threadId}/runs/${created.run_id}`);
      expect(got.status).toBe(200);
      const stored = await t.storage.getRun(created.run_id);
      expect(stored?.output).toEqual(result);
    }, 60_000);

    it("the values stream of a run with text, reasoning and tool calls covers each change", async () => {
      const threadId = await newThread(t);
      const created = (await post(t, `/threads/${threadId}/runs`, {
        agent_id: agentId("mixed"),
        input: userSays("go"),
        stream_mode: ["values"],
      })) as { run_id: string };
      await settledRun(t, created.run_id, "success");
      const frames = (await join(threadId, created.run_id, 0)).map(
        (f) => JSON.parse(f.data) as Json,
      );
      const messagesOf = (frame: Json) => frame.messages as Json[];
      const reasoning = frames.find((f) => messagesOf(f).some((m) => m.role === "reasoning"));
      expect(reasoning).toBeDefined();
      const withCall = frames.find((f) =>
        messagesOf(f).some((m) => JSON.stringify(m).includes('{\\"q\\":\\"the answer\\"}')),
      );
      expect(withCall).toBeDefined();
      expect(frames.some((f) => messagesOf(f).some((m) => m.role === "tool"))).toBe(true);
      expect(frames.some((f) => (f.values as Json).n === 2)).toBe(true);
    }, 30_000);

    it("an interrupted and resumed run: each segment rebuilt from its own start, live and replayed alike", async () => {
      const threadId = await newThread(t);
      const created = (await post(t, `/threads/${threadId}/runs`, {
        agent_id: agentId("gated"),
        input: userSays("please"),
        stream_mode: ["values", "custom"],
      })) as { run_id: string };
      const runId = created.run_id;
      const first = await followLive(threadId, runId, 0);
      for (const { at, frames } of first.joiners) expectSameAfter(first.live, at, frames);
      await settledRun(t, runId, "interrupted");
      const boundary = first.live.at(-1)!.id;

      const resumed = await t.call("POST", `/threads/${threadId}/runs/${runId}`, {
        approval: { approved: true },
      });
      expect(resumed.status).toBe(200);
      const second = await followLive(threadId, runId, boundary);
      const live = [...first.live, ...second.live];
      for (const { at, frames } of second.joiners) expectSameAfter(live, at, frames);
      await settledRun(t, runId, "success");
      await replaysMatch(threadId, runId, live);

      const final = JSON.parse(live.at(-1)!.data) as Json;
      expect(final.values).toEqual({ phase: "done" });
      expect((final.messages as Json[]).map((m) => m.id)).toContain("g1");
      expect((final.messages as Json[]).map((m) => m.id)).toContain("g2");
    }, 60_000);
  });
}
