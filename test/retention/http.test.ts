import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RETENTION_DEFAULTS } from "../../src/retention/settings.js";
import type { Storage } from "../../src/storage/types.js";
import type { TestApp } from "../helpers/app.js";
import { readSse } from "../helpers/sse.js";
import {
  agentId,
  buildWith,
  type Event,
  finished,
  type Json,
  listen,
  newThread,
  say,
  snapshot,
  started,
  until,
  userSays,
} from "../runs/helpers.js";
import { openDisposable, requirePostgres } from "../storage/pg-helpers.js";

await requirePostgres();

const chatty: Event[] = [
  started,
  ...say("m1", "hello world"),
  snapshot({ n: 1 }),
  snapshot({ n: 2 }),
  finished(),
];

/**
 * Short enough for a test: frames are compacted about a third of a second after their run ends,
 * stateless runs swept a second after (long enough for the GET right after `wait` to find one on
 * a busy machine).
 */
const retention = {
  ...RETENTION_DEFAULTS,
  finishedStatelessRuns: 1,
  frames: 0.3,
  sweepInterval: 0.1,
};

describe.each([
  ["SQLite", async (): Promise<Storage | undefined> => undefined],
  ["PostgreSQL", async (): Promise<Storage | undefined> => openDisposable()],
])("retention through the HTTP API on %s", (_name, storage) => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await buildWith([{ name: "chatty", script: chatty }], {
      storage: await storage(),
      settings: { retention },
    });
    base = await listen(t);
  });
  afterAll(() => t.close());

  it("a finished stateless run is gone after its retention: GET and wait answer 404", async () => {
    const waited = await t.call("POST", "/runs/wait", {
      agent_id: agentId("chatty"),
      input: userSays("hi"),
    });
    expect(waited.status).toBe(200);
    const body = waited.body as { run: Json; output: Json };
    // Its outcome was complete while it lasted.
    expect(body.output).toMatchObject({ type: "result", values: { n: 2 } });
    expect((body.output.messages as unknown[]).length).toBeGreaterThan(0);
    const runId = body.run.run_id as string;
    expect((await t.call("GET", `/runs/${runId}`)).status).toBe(200);
    await until(
      async () => (await t.call("GET", `/runs/${runId}`)).status,
      (status) => status === 404,
      5000,
      "the stateless run to be deleted",
    );
    expect((await t.call("GET", `/runs/${runId}/wait`)).status).toBe(404);
    expect(await t.storage.readFrames(runId, 0)).toEqual([]);
  });

  it("a compacted run replays its final frame, and stays readable through GET and wait", async () => {
    const thread = await newThread(t);
    const runs = `/threads/${thread}/runs`;
    const live = await readSse(base, `${runs}/stream`, {
      body: {
        agent_id: agentId("chatty"),
        input: userSays("hi"),
        stream_mode: ["values", "custom"],
      },
    });
    expect(live.frames.length).toBeGreaterThan(3);
    const final = live.frames.at(-1)!;
    const runId = (final.data as Json).run_id as string;
    const waitedBefore = await t.call("GET", `${runs}/${runId}/wait`);
    await until(
      () => t.storage.readFrames(runId, 0),
      (frames) => frames.length === 1,
      5000,
      "the run's frames to be compacted",
    );
    // A replay from the start, or from a position before the end, gets the final frame only.
    for (const lastEventId of ["0", "2"]) {
      const replay = await readSse(base, `${runs}/${runId}/stream`, {
        headers: { "last-event-id": lastEventId },
      });
      expect(replay.status).toBe(200);
      expect(replay.frames).toEqual([final]);
    }
    // One that had seen the end gets nothing more.
    const done = await readSse(base, `${runs}/${runId}/stream`, {
      headers: { "last-event-id": String(final.id) },
    });
    expect(done.frames).toEqual([]);
    // The final frame still carries the whole outcome, and so do GET and wait.
    expect(final.data).toMatchObject({ status: "success", values: { n: 2 } });
    expect(((final.data as Json).messages as unknown[]).length).toBeGreaterThan(0);
    const run = await t.call("GET", `${runs}/${runId}`);
    expect(run.status).toBe(200);
    expect(run.body).toMatchObject({ run_id: runId, status: "success" });
    const waitedAfter = await t.call("GET", `${runs}/${runId}/wait`);
    expect(waitedAfter.status).toBe(200);
    expect(waitedAfter.body).toEqual(waitedBefore.body);
  });
});
