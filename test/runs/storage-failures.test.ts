import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createStorage, type SqliteStorage } from "../../src/storage/index.js";
import { pageText } from "../../src/storage/sqlite/frame-pages.js";
import type { TestApp } from "../helpers/app.js";
import {
  type AgentSpec,
  agentId,
  buildWith,
  finished,
  type Json,
  newThread,
  post,
  progressScript,
  say,
  snapshot,
  started,
  tempDbFile,
  until,
  userSays,
} from "./helpers.js";

// A storage error fails the writes it concerns and the run they belong to, never the server.
// The failures are real ones, made by the database itself: triggers that RAISE on the rows of
// one run, and a full disk (SQLITE_FULL through `max_page_count`).

/** Five snapshots of ~100 kB each, 100 ms apart: a run that needs new pages as it goes. */
const bulky = [
  started,
  ...[1, 2, 3, 4, 5].map((n) => snapshot({ n, blob: "x".repeat(100_000) })),
  finished(),
];

const agents: AgentSpec[] = [
  { name: "echo", echo: true },
  {
    // Its first events are harmless; a later snapshot (and so its final frame) is poison.
    name: "turns-bad",
    script: [
      started,
      ...say("m1", "all fine"),
      snapshot({ step: 1 }),
      snapshot({ step: "poison" }),
      finished(),
    ],
    delayMs: 30,
  },
  { name: "stepper", script: progressScript(3) },
  { name: "bulky", script: bulky, delayMs: 100 },
];

type Wait = { run: { run_id: string; status: string }; output?: Json };

let t: TestApp;
let db: SqliteStorage["database"];
/** Rejections nobody handled: the process would have died on them. */
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown) => unhandled.push(reason);

beforeAll(async () => {
  // A 3 s lease: failures that could not be recorded are tried again every second.
  t = await buildWith(agents, {
    storage: createStorage(tempDbFile()),
    settings: { leaseSeconds: 3 },
  });
  db = (t.storage as SqliteStorage).database;
  // Frame pages may be stored deflated: the triggers below match their text.
  db.function("test_page_text", (data: unknown) =>
    pageText({ run_id: "", last_seq: 0, frames: 0, data: data as string | Buffer }),
  );
  process.on("unhandledRejection", onUnhandled);
});

afterAll(async () => {
  process.off("unhandledRejection", onUnhandled);
  await t.close();
  await t.storage.close();
});

afterEach(() => {
  for (const { name } of db
    .prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' AND name LIKE 'refuse_%'")
    .all() as Array<{ name: string }>) {
    db.exec(`DROP TRIGGER ${name}`);
  }
  db.pragma("max_page_count = 1073741823");
  expect(unhandled).toEqual([]);
});

function refuse(name: string, on: string, when: string, message: string): void {
  db.exec(
    `CREATE TRIGGER refuse_${name} BEFORE ${on} WHEN ${when} BEGIN SELECT RAISE(ABORT, '${message}'); END`,
  );
}

async function runAndWait(agent: string, input: Json = {}): Promise<Wait & { thread: string }> {
  const thread = await newThread(t);
  const body = (await post(t, `/threads/${thread}/runs/wait`, {
    agent_id: agentId(agent),
    input,
  })) as unknown as Wait;
  return { ...body, thread };
}

async function threadStatus(thread: string): Promise<string> {
  return ((await t.call("GET", `/threads/${thread}`)).body as { status: string }).status;
}

/** What shows the server still serves: a read, and a run of another thread that succeeds. */
async function expectServing(): Promise<void> {
  expect((await t.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
  const ok = await runAndWait("echo", userSays("still here?"));
  expect(ok.run.status).toBe("success");
}

describe("storage failures", () => {
  it("a run whose events cannot be stored ends as error naming the failure; a run beside it succeeds", async () => {
    refuse(
      "frames",
      "INSERT ON run_frames",
      "test_page_text(NEW.data) LIKE '%poison%'",
      "frames refused",
    );
    const [poisoned, healthy] = await Promise.all([
      runAndWait("echo", userSays("poison pill")),
      runAndWait("echo", userSays("plain water")),
    ]);
    expect(poisoned.run.status).toBe("error");
    expect(poisoned.output).toMatchObject({
      type: "error",
      errcode: 500,
      description: "the server could not store the run's events: frames refused",
    });
    expect(await threadStatus(poisoned.thread)).toBe("error");
    expect(healthy.run.status).toBe("success");
    // A stream joined afterwards ends: the run is over, whatever frames it lacks.
    const joined = await t.call(
      "GET",
      `/threads/${poisoned.thread}/runs/${poisoned.run.run_id}/stream`,
    );
    expect(joined.status).toBe(200);
    await expectServing();
  });

  it("a stream following a run whose events cannot be stored receives its final frame", async () => {
    refuse(
      "frames",
      "INSERT ON run_frames",
      "test_page_text(NEW.data) LIKE '%poison%'",
      "frames refused",
    );
    const thread = await newThread(t);
    const streamed = await t.call("POST", `/threads/${thread}/runs/stream`, {
      agent_id: agentId("turns-bad"),
      stream_mode: ["values"],
    });
    expect(streamed.status).toBe(200);
    const finalFrame = streamed.raw
      .split("\n\n")
      .filter((block) => block.includes("data: "))
      .at(-1)!;
    expect(finalFrame).toContain('"status":"error"');
    expect(finalFrame).toContain("the server could not store the run's events: frames refused");
    // Frames reach the stream before storage. The stream's frames keep their order and its final
    // frame comes after every frame published; storage holds the log up to the write that failed,
    // with no hole (and the final frame, if that could be stored).
    const ids = [...streamed.raw.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual([...ids].sort((a, b) => a - b));
    const finalId = ids.at(-1)!;
    const runId = (streamed.headers["content-location"] as string).split("/").at(-1)!;
    const stored = (await t.storage.readFrames(runId, 0)).filter((f) => f.seq !== finalId);
    expect(stored.length).toBeGreaterThan(0);
    expect(stored.map((f) => f.seq)).toEqual(stored.map((_, i) => i + 1));
    expect(finalId).toBeGreaterThan(stored.at(-1)!.seq + 1);
    await expectServing();
  });

  it("a run whose checkpoint cannot be stored ends as error naming the failure", async () => {
    refuse(
      "step_checkpoints",
      "INSERT ON checkpoints",
      `json_extract(NEW.metadata, '$.source') = 'step'`,
      "step checkpoint refused",
    );
    const stepper = await runAndWait("stepper");
    expect(stepper.run.status).toBe("error");
    expect(stepper.output?.description).toBe(
      "the server could not store the run's step checkpoint: step checkpoint refused",
    );
    refuse("checkpoints", "INSERT ON checkpoints", "NEW.messages LIKE '%keep%'", "refused");
    const echo = await runAndWait("echo", userSays("keep this"));
    expect(echo.run.status).toBe("error");
    expect(echo.output?.description).toBe(
      "the server could not store the run's checkpoint: refused",
    );
    expect(await threadStatus(echo.thread)).toBe("error");
    await expectServing();
  });

  it("a run whose outcome cannot be recorded ends as error saying why, not pending forever", async () => {
    refuse(
      "outcome",
      "UPDATE OF status ON runs",
      // The request, not the output: a stateful run's output refers to its checkpoint's state.
      "NEW.status = 'success' AND NEW.creation LIKE '%unrecordable%'",
      "outcome refused",
    );
    const waited = await runAndWait("echo", userSays("unrecordable"));
    expect(waited.run.status).toBe("error");
    expect(waited.output).toMatchObject({
      errcode: 500,
      description: "the server could not complete the run: outcome refused",
    });
    const stored = await t.storage.getRun(waited.run.run_id);
    expect(stored).toMatchObject({ status: "error", owner: null });
    expect(stored?.segments.every((segment) => segment.ended_at !== null)).toBe(true);
    await expectServing();
  });

  it("with the disk full, runs fail saying so, reads go on, and writes succeed again once there is room", async () => {
    const thread = await newThread(t, { note: "before" });
    const run = await post(t, `/threads/${thread}/runs`, { agent_id: agentId("bulky") });
    const runId = run.run_id as string;
    // Full once the run is under way: the file may not grow by a single page.
    await until(
      () => t.storage.getRun(runId),
      (r) => (r?.segments.length ?? 0) > 0,
      5_000,
      "the run to start",
    );
    db.pragma(`max_page_count = ${db.pragma("page_count", { simple: true })}`);

    // Reads are served; a write that needs room is refused alone, with a 500.
    expect((await t.call("GET", `/threads/${thread}`)).status).toBe(200);
    expect((await t.call("POST", "/agents/search", {})).status).toBe(200);
    const big = await t.app.inject({
      method: "POST",
      url: "/threads",
      payload: { metadata: { blob: "y".repeat(400_000) } },
    });
    expect(big.statusCode).toBe(500);

    // The run fails; once there is room again its failure is recorded, whatever could not be.
    await until(
      async () => t.app.deps.engine.isExecutingHere(runId),
      (executing) => !executing,
      10_000,
      "the run's execution to end",
    );
    db.pragma("max_page_count = 1073741823");
    const ended = await until(
      () => t.storage.getRun(runId),
      (r) => r?.status !== "pending",
      10_000,
      "the run's failure to be recorded",
    );
    expect(ended).toMatchObject({ status: "error", owner: null });
    expect((ended!.output as Json).description).toMatch(/database or disk is full/);
    await expectServing();
  });
});
