import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFullFrames } from "../../src/engine/frames/follow.js";
import type { TestApp } from "../helpers/app.js";
import { assertSpecFrame } from "../helpers/spec.js";
import { openSse, readSse, type SseConnection, type SseFrame } from "../helpers/sse.js";
import {
  agentId,
  buildWith,
  type Event,
  finished,
  type Json,
  listen,
  newThread,
  progressScript,
  runStarted,
  say,
  settledRun,
  snapshot,
  started,
  until,
  userSays,
} from "./helpers.js";

type Data = Json & { type: string; run_id: string; status: string };

const chatty: Event[] = [
  started,
  { type: "STEP_STARTED", stepName: "think" },
  ...say("m1", "hello world"),
  snapshot({ n: 1 }),
  { type: "STEP_FINISHED", stepName: "think" },
  snapshot({ n: 2 }),
  finished(),
];

const agents = [
  { name: "chatty", script: chatty },
  // The same events, slowly enough to join mid-run.
  { name: "chatty-slow", script: chatty, delayMs: 40 },
  {
    name: "asks",
    script: [
      started,
      finished({ outcome: { type: "interrupt", interrupts: [{ id: "i1", reason: "approval" }] } }),
    ],
  },
  {
    name: "gate",
    segments: [
      [
        started,
        snapshot({ phase: 1 }),
        finished({ outcome: { type: "interrupt", interrupts: [{ id: "g", reason: "approval" }] } }),
      ],
      [started, snapshot({ phase: 2 }), finished()],
    ],
  },
  // About 0.6 s.
  { name: "steady", script: progressScript(6), delayMs: 30 },
  // About 4 s: only ever cut short.
  { name: "endless", script: progressScript(40), delayMs: 30 },
];

/** Checks framing and the spec on every frame; returns the parsed data. */
function checkFrames(frames: SseFrame[]): Data[] {
  for (const frame of frames) {
    expect(frame.event).toBe("agent_event");
    expect(frame.rawData).not.toContain("\n");
    assertSpecFrame(frame);
  }
  return frames.map((f) => f.data as Data);
}

const ids = (frames: SseFrame[]) => frames.map((f) => Number(f.id));

describe.each([
  ["thread runs", "stateful"],
  ["stateless runs", "stateless"],
] as const)("streams over a socket › %s", (_label, kind) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildWith(agents);
    base = await listen(t);
  });
  afterAll(() => t.close());

  async function runsPath(): Promise<string> {
    return kind === "stateful" ? `/threads/${await newThread(t)}/runs` : "/runs";
  }

  async function streamRun(agent: string, extra: Json = {}) {
    const runs = await runsPath();
    const body = {
      agent_id: agentId(agent),
      input: userSays("hi"),
      on_completion: "keep",
      ...extra,
    };
    return { runs, connection: await readSse(base, `${runs}/stream`, { body }) };
  }

  it("POST …/runs/stream › frames: id +1 each, event agent_event, one-line JSON, spec-valid; final frame then close", async () => {
    const { runs, connection } = await streamRun("chatty", { stream_mode: ["values", "custom"] });
    expect(connection.status).toBe(200);
    expect(connection.headers["content-type"]).toMatch(/^text\/event-stream/);
    const frames = connection.frames;
    const data = checkFrames(frames);
    const count = frames.length;
    expect(ids(frames)).toEqual(Array.from({ length: count }, (_, i) => i + 1));

    const last = data.at(-1)!;
    expect(last).toMatchObject({ type: "values", status: "success", values: { n: 2 } });
    // A result's values and messages are the frame's, not repeated in its output.
    expect(last.output).toEqual({ type: "result" });
    expect(data.slice(0, -1).every((d) => d.status === "pending")).toBe(true);
    const runId = last.run_id;
    expect(connection.headers["content-location"]).toBe(`${runs}/${runId}`);
    // Everything stored was sent, in order (read back in full form, as streams send it).
    const stored = await readFullFrames(t.storage, runId, 0);
    expect(stored.map((f) => f.seq)).toEqual(ids(frames));
    expect(stored.map((f) => f.data)).toEqual(frames.map((f) => f.rawData));
  });

  it("POST …/runs/stream › stream_mode custom sends one custom frame per AG-UI event, then the final frame", async () => {
    const { connection } = await streamRun("chatty", { stream_mode: "custom" });
    const data = checkFrames(connection.frames);
    const events = data.slice(0, -1);
    expect(events.every((d) => d.type === "custom")).toBe(true);
    expect(events.map((d) => (d.update as Event).type)).toEqual(chatty.map((e) => e.type));
    expect(data.at(-1)).toMatchObject({ type: "values", status: "success" });
  });

  it("POST …/runs/stream › stream_mode values (and the default) send only values frames", async () => {
    for (const mode of [{ stream_mode: "values" }, {}]) {
      const { connection } = await streamRun("chatty", mode);
      const data = checkFrames(connection.frames);
      expect(data.every((d) => d.type === "values")).toBe(true);
      expect(data.length).toBeGreaterThanOrEqual(2);
      // The last values frame before the final one already carries the finished state.
      expect(data.at(-2)).toMatchObject({ status: "pending", values: { n: 2 } });
      expect((data.at(-2)!.messages as Json[]).at(-1)).toEqual({
        id: "m1",
        role: "assistant",
        content: "hello world",
      });
      expect(data.at(-1)!.status).toBe("success");
      const seqs = ids(connection.frames);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    }
  });

  it("POST …/runs/stream › an interrupted run's final frame carries the interrupt", async () => {
    const { connection } = await streamRun("asks");
    const last = checkFrames(connection.frames).at(-1)!;
    expect(last).toMatchObject({
      status: "interrupted",
      output: { type: "interrupt", interrupt: { approval: { id: "i1", reason: "approval" } } },
    });
  });

  it("GET …/runs/{run_id}/stream › Last-Event-ID mid-run replays what was missed: no gap, no duplicate", async () => {
    const runs = await runsPath();
    const full = await openSse(base, `${runs}/stream`, {
      body: {
        agent_id: agentId("chatty-slow"),
        stream_mode: ["values", "custom"],
        on_completion: "keep",
      },
    });
    const third = await full.frame(2);
    const runId = (third.data as Data).run_id;
    const joined = await readSse(base, `${runs}/${runId}/stream`, {
      headers: { "last-event-id": third.id },
    });
    await full.ended;
    expect((await t.storage.getRun(runId))?.status).toBe("success");
    checkFrames(joined.frames);
    expect(joined.frames.length).toBeGreaterThan(2);
    expect(joined.frames).toEqual(full.frames.slice(3));
  });

  it("GET …/runs/{run_id}/stream › joining a finished run sends exactly its final frame; Last-Event-ID 0 replays all", async () => {
    const { runs, connection } = await streamRun("chatty", { stream_mode: ["values", "custom"] });
    const final = connection.frames.at(-1)!;
    const runId = (final.data as Data).run_id;
    const late = await readSse(base, `${runs}/${runId}/stream`);
    expect(late.status).toBe(200);
    expect(late.frames).toEqual([final]);
    const replay = await readSse(base, `${runs}/${runId}/stream`, {
      headers: { "last-event-id": "0" },
    });
    expect(replay.frames).toEqual(connection.frames);
  });

  it("GET …/runs/{run_id}/stream › after a resume, replays both segments and ends after the last final frame", async () => {
    const first = await streamRun("gate", { stream_mode: ["values", "custom"] });
    const interrupted = first.connection.frames.at(-1)!;
    expect(interrupted.data).toMatchObject({ status: "interrupted" });
    const runId = (interrupted.data as Data).run_id;
    const url = `${first.runs}/${runId}`;
    // Joining the interrupted run: its final frame, then the stream closes.
    expect((await readSse(base, `${url}/stream`)).frames).toEqual([interrupted]);

    const resumed = await t.call("POST", url, { approval: { ok: true } });
    expect(resumed.status).toBe(200);
    await settledRun(t, runId);
    const replay = await readSse(base, `${url}/stream`, { headers: { "last-event-id": "0" } });
    const data = checkFrames(replay.frames);
    expect(ids(replay.frames)).toEqual(Array.from({ length: data.length }, (_, i) => i + 1));
    expect(replay.frames.slice(0, first.connection.frames.length)).toEqual(first.connection.frames);
    expect(data.filter((d) => d.output !== undefined).map((d) => d.status)).toEqual([
      "interrupted",
      "success",
    ]);
    expect(data.at(-1)).toMatchObject({ status: "success", values: { phase: 2 } });
    const aguiRuns = data
      .filter((d) => d.type === "custom" && (d.update as Event).type === "RUN_STARTED")
      .map((d) => (d.update as Event).runId);
    expect(new Set(aguiRuns).size).toBe(2);
  });

  it("GET …/runs/{run_id}/stream › a run still queued: the stream opens (headers sent) before any frame", async () => {
    const runs = await runsPath();
    const queued = await t.call("POST", runs, {
      agent_id: agentId("chatty"),
      input: userSays("hi"),
      after_seconds: 600,
      on_completion: "keep",
    });
    expect(queued.status).toBe(200);
    const runId = (queued.body as { run_id: string }).run_id;
    const joined = await openSse(base, `${runs}/${runId}/stream`);
    try {
      expect(joined.status).toBe(200);
      expect(joined.headers["content-type"]).toMatch(/^text\/event-stream/);
      expect(joined.frames).toHaveLength(0);
    } finally {
      joined.destroy();
      await t.call("POST", `${runs}/${runId}/cancel`);
    }
  });

  it("GET …/runs/{run_id}/stream › 404 for an unknown run, 422 for a bad Last-Event-ID", async () => {
    const runs = await runsPath();
    const unknown = "3c2b1a09-8f7e-4d6c-9b5a-4f3e2d1c0b9a";
    const missing = await readSse(base, `${runs}/${unknown}/stream`);
    expect(missing.status).toBe(404);
    const done = await streamRun("chatty");
    const runId = (done.connection.frames.at(-1)!.data as Data).run_id;
    const bad = await readSse(base, `${done.runs}/${runId}/stream`, {
      headers: { "last-event-id": "abc" },
    });
    expect(bad.status).toBe(422);
    expect(bad.raw()).toContain("Last-Event-ID must be a non-negative integer");
  });
});

describe("streams › keep-alive comments", () => {
  // About 1.3 s: over one keep-alive interval.
  const lasting = [{ name: "lasting", script: progressScript(14), delayMs: 30 }];
  let on: TestApp;
  let off: TestApp;
  beforeAll(async () => {
    [on, off] = await Promise.all([
      buildWith(lasting, { settings: { keepAliveSeconds: 1 } }),
      buildWith(lasting, { settings: { keepAliveSeconds: 0 } }),
    ]);
  });
  afterAll(() => Promise.all([on.close(), off.close()]));

  it("POST /runs/stream › sends ': keep-alive' comment lines with keepAliveSeconds 1, none with 0", async () => {
    const body = { agent_id: agentId("lasting"), stream_mode: "custom" };
    const [withComments, without] = await Promise.all([
      listen(on).then((base) => readSse(base, "/runs/stream", { body })),
      listen(off).then((base) => readSse(base, "/runs/stream", { body })),
    ]);
    expect(withComments.comments.length).toBeGreaterThanOrEqual(1);
    expect(withComments.comments.every((c) => c === "keep-alive")).toBe(true);
    // A lone comment line (no blank line after it: see src/http/streaming/sse-keep-alive.ts), then the next frame.
    expect(withComments.raw()).toMatch(/(^|\n\n): keep-alive\n(: keep-alive\n)*id: \d+\n/);
    expect(withComments.raw()).not.toContain(": keep-alive\n\n");
    expect(without.comments).toEqual([]);
    expect(without.raw()).not.toMatch(/^:/m);
    // Frames are intact either way.
    expect(checkFrames(withComments.frames).at(-1)!.status).toBe("success");
    expect(withComments.frames.length).toBe(without.frames.length);
  });
});

describe("streams › on_disconnect", () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildWith(agents);
    base = await listen(t);
  });
  afterAll(() => t.close());

  async function dropMidStream(agent: string, extra: Json = {}): Promise<string> {
    const connection: SseConnection = await openSse(base, "/runs/stream", {
      body: { agent_id: agentId(agent), stream_mode: "custom", on_completion: "keep", ...extra },
    });
    const first = await connection.frame(0);
    connection.destroy();
    return (first.data as Data).run_id;
  }

  it("POST /runs/stream › the run is cancelled when the client goes away (default on_disconnect)", async () => {
    const runId = await dropMidStream("endless");
    const run = await settledRun(t, runId, undefined, 2_000);
    expect(run.status).toBe("error");
    expect(run.output).toMatchObject({ errcode: 499, description: "run was cancelled" });
  });

  it("POST /runs/stream › on_disconnect continue lets the run complete", async () => {
    const runId = await dropMidStream("steady", { on_disconnect: "continue" });
    expect((await settledRun(t, runId, undefined, 3_000)).status).toBe("success");
  });

  it("GET /runs/{run_id}/stream › a client leaving a joined stream does not cancel the run", async () => {
    const created = await t.call("POST", "/runs", { agent_id: agentId("steady") });
    const runId = (created.body as Data).run_id;
    await runStarted(t, runId);
    const joined = await openSse(base, `/runs/${runId}/stream`, {
      headers: { "last-event-id": "0" },
    });
    await joined.frame(0);
    joined.destroy();
    expect((await settledRun(t, runId, undefined, 3_000)).status).toBe("success");
  });

  /** POST /threads/{id}/runs/wait on a raw socket, dropped once the run executes. */
  async function dropMidWait(agent: string, extra: Json = {}) {
    const threadId = await newThread(t);
    const req = request(new URL(`/threads/${threadId}/runs/wait`, base), {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    req.on("error", () => undefined);
    req.end(JSON.stringify({ agent_id: agentId(agent), input: userSays("hi"), ...extra }));
    const runs = await until(
      () => t.storage.searchRuns({ thread_id: threadId, limit: 1, offset: 0 }),
      (found) => found.length === 1,
      2_000,
      "the run to exist",
    );
    await runStarted(t, runs[0]!.run_id);
    req.destroy();
    return { threadId, runId: runs[0]!.run_id };
  }

  it("POST /threads/{id}/runs/wait › the run is cancelled when the client goes away", async () => {
    const { threadId, runId } = await dropMidWait("endless");
    const run = await settledRun(t, runId, undefined, 2_000);
    expect(run.status).toBe("error");
    expect(run.output).toMatchObject({ errcode: 499 });
    const thread = (await t.call("GET", `/threads/${threadId}`)).body as Json;
    expect(thread.status).toBe("idle");
  });

  it("POST /threads/{id}/runs/wait › on_disconnect continue lets the run complete", async () => {
    const { runId } = await dropMidWait("steady", { on_disconnect: "continue" });
    expect((await settledRun(t, runId, undefined, 3_000)).status).toBe("success");
  });

  it("streams and waits that end or are dropped leave no live listener behind", async () => {
    await until(
      async () => t.app.deps.engine.bus.listenerCount(),
      (count) => count === 0,
      2_000,
      "the frame bus to have no listeners",
    );
  });
});
