import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { createStorage } from "../../src/storage/index.js";
import type { TestApp } from "../helpers/app.js";
import { tempDbFile } from "../runs/helpers.js";
import { buildServing } from "./helpers.js";

const fixtures = resolve(import.meta.dirname, "../fixtures/misbehaving");

interface Bad {
  name: string;
  file: string;
  export: string;
  timeout?: number;
  concurrency?: number;
}

const bad: Bad[] = [
  { name: "throws-at-call", file: "throws.mjs", export: "atCall" },
  { name: "throws-mid-stream", file: "throws.mjs", export: "midStream" },
  { name: "throws-string", file: "throws.mjs", export: "throwsString" },
  { name: "hangs-before-first-event", file: "hangs.mjs", export: "beforeFirstEvent", timeout: 1 },
  {
    name: "hangs-after-start",
    file: "hangs.mjs",
    export: "afterStart",
    timeout: 1,
    concurrency: 1,
  },
  { name: "never-closes", file: "hangs.mjs", export: "neverCloses", timeout: 1 },
  { name: "second-run", file: "hangs.mjs", export: "secondRunAfterPause", timeout: 5 },
  { name: "only-garbage", file: "garbage.mjs", export: "onlyGarbage" },
  { name: "malformed", file: "garbage.mjs", export: "malformed" },
  { name: "sprinkled", file: "garbage.mjs", export: "sprinkled" },
  { name: "flood", file: "flood.mjs", export: "endless" },
];

function configOf(maxEventsPerRun: number): string {
  return JSON.stringify({
    server: { limits: { maxEventsPerRun } },
    agents: [
      {
        name: "good",
        version: "1.0.0",
        description: "well behaved",
        adapter: { type: "echo", delayMs: 5 },
      },
      ...bad.map((agent) => ({
        name: agent.name,
        version: "1.0.0",
        description: `misbehaves: ${agent.export}`,
        adapter: { type: "module", path: resolve(fixtures, agent.file), export: agent.export },
        limits: {
          runTimeoutSeconds: agent.timeout ?? 30,
          maxConcurrentRuns: agent.concurrency ?? 8,
        },
      })),
    ],
  });
}

const id = (name: string) => agentIdFor(name, "1.0.0");

interface WaitBody {
  run: { run_id: string; status: string };
  output?: { type: string; errcode?: number; description?: string; values?: unknown };
}

async function waitRun(t: TestApp, agent: string, text = "hi"): Promise<WaitBody> {
  const res = await t.call("POST", "/runs/wait", {
    agent_id: id(agent),
    input: { messages: [{ role: "user", content: text }] },
    on_completion: "keep",
  });
  expect(res.status, res.raw).toBe(200);
  return res.body as WaitBody;
}

describe("misbehaving agents", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildServing(configOf(20_000));
  });
  afterAll(async () => {
    await t.close();
  });

  it("each fails only its own run with a clear message while a good agent keeps answering", async () => {
    const started = Date.now();
    const [results, good] = await Promise.all([
      Promise.all(bad.map((agent) => waitRun(t, agent.name))),
      Promise.all(Array.from({ length: 5 }, (_, i) => waitRun(t, "good", `still here ${i}`))),
    ]);
    const by = Object.fromEntries(bad.map((agent, i) => [agent.name, results[i]!]));

    expect(by["throws-at-call"]!.output).toMatchObject({
      type: "error",
      errcode: 500,
      description: expect.stringContaining("exploded before the first event"),
    });
    expect(by["throws-mid-stream"]!.output).toMatchObject({
      errcode: 500,
      description: "agent failed: exploded mid-stream",
    });
    expect(by["throws-string"]!.output).toMatchObject({
      errcode: 500,
      description: "agent failed: a bare string",
    });
    // RUN_FINISHED, then the stream stays open: the run ends after a short grace, as the agent
    // said, well within its time limit of 1 s.
    // ...but a stream that goes on with another run is not cut: the last run decides.
    expect(by["second-run"]!.run.status).toBe("success");
    expect(by["second-run"]!.output).toMatchObject({ type: "result", values: { run: 2 } });
    expect(by["never-closes"]!.run.status).toBe("success");
    expect(by["never-closes"]!.output).toMatchObject({
      type: "result",
      values: { answered: true },
    });
    for (const name of ["hangs-before-first-event", "hangs-after-start"]) {
      expect(by[name]!.run.status, name).toBe("timeout");
      expect(by[name]!.output, name).toMatchObject({
        errcode: 504,
        description: "the run exceeded its time limit of 1 s",
      });
    }
    expect(by["only-garbage"]!.output).toMatchObject({
      errcode: 502,
      description: expect.stringContaining("the stream ended without RUN_STARTED"),
    });
    expect(by.malformed!.output).toMatchObject({
      errcode: 502,
      description: expect.stringMatching(/event 3 \(TEXT_MESSAGE_START\).*messageId/),
    });
    expect(by.sprinkled!.run.status).toBe("success");
    expect(by.sprinkled!.output).toMatchObject({ type: "result", values: { ok: true } });
    expect(by.flood!.output).toMatchObject({
      errcode: 502,
      description:
        "the agent sent more than 20000 events in one run (server.limits.maxEventsPerRun)",
    });

    for (const [i, answer] of good.entries()) {
      expect(answer.run.status).toBe("success");
      expect(JSON.stringify(answer.output)).toContain(`still here ${i}`);
    }
    // The hung agents were cut at their 1 s limit, not left to hold the requests.
    expect(Date.now() - started).toBeLessThan(8_000);
    expect((await t.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
  });

  it("a hung agent gives its concurrency slot back when its time limit ends it", async () => {
    // hangs-after-start runs one at a time: the second run only starts once the first is cut.
    const [first, second] = await Promise.all([
      waitRun(t, "hangs-after-start"),
      waitRun(t, "hangs-after-start"),
    ]);
    expect(first.run.status).toBe("timeout");
    expect(second.run.status).toBe("timeout");
  });

  it("a hung agent does not hold up shutdown", async () => {
    const other = await buildServing(configOf(0));
    const run = await other.call("POST", "/runs", {
      agent_id: id("hangs-after-start"),
      input: {},
      on_completion: "keep",
    });
    const runId = (run.body as { run_id: string }).run_id;
    await until(async () => (await other.storage.getRun(runId))?.segments.length === 1);
    const started = Date.now();
    await other.app.close();
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await other.storage.getRun(runId)).toMatchObject({
      status: "error",
      output: { errcode: 503, description: "the server shut down while the run was executing" },
    });
    await other.storage.close();
  });
});

describe("an agent that yields events without end", () => {
  it("is stopped at maxEventsPerRun, with memory staying bounded", async () => {
    const storage = createStorage(tempDbFile());
    const t = await buildServing(configOf(200_000), { storage });
    try {
      const before = process.memoryUsage().rss;
      const started = Date.now();
      const answer = await waitRun(t, "flood");
      const seconds = (Date.now() - started) / 1000;
      const grown = (process.memoryUsage().rss - before) / 2 ** 20;
      console.log(
        `flood: 200000 events in ${seconds.toFixed(1)} s (${Math.round(200_000 / seconds)}/s), RSS +${grown.toFixed(0)} MiB`,
      );
      expect(answer.output).toMatchObject({
        errcode: 502,
        description: expect.stringContaining("more than 200000 events"),
      });
      // 200 000 frames are on disk, not in memory.
      expect(grown).toBeLessThan(200);
      const stored = await storage.getRun(answer.run.run_id);
      expect(stored!.last_seq).toBeGreaterThan(200_000);
    } finally {
      await t.close();
      await storage.close();
    }
  }, 60_000);
});

async function until(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 10));
  }
}
