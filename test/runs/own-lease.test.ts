import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import {
  agentId,
  buildWith,
  type Json,
  newThread,
  post,
  slowScript,
  tempDbFile,
} from "./helpers.js";

// A run whose lease lapses while this very process is still executing it (the lease renewal
// comes later than the lease: here by configuration, in production when one long synchronous
// stretch blocks the event loop) is not "a run whose executor died": the process that finds it
// claimable is the one executing it, and it must not start it a second time.

let t: TestApp;

beforeAll(async () => {
  t = await buildWith([{ name: "slow", script: slowScript(15), delayMs: 100 }], {
    // Renewals come every second at the soonest: a 0.3 s lease lapses between them.
    settings: { leaseSeconds: 0.3, database: tempDbFile() },
  });
});
afterAll(() => t?.close());

describe("a lease that lapses under its own executor", () => {
  it("a stateless run ends once, with its own outcome", async () => {
    const wait = (await post(t, "/runs/wait", {
      agent_id: agentId("slow"),
      input: {},
    })) as { run: Json; output: Json };
    expect(wait.run.status).toBe("success");
    expect(wait.output).toMatchObject({ type: "result", values: { done: true } });
  });

  it("a thread run's frames are numbered once each, ending in one final frame", async () => {
    const threadId = await newThread(t);
    const run = await post(t, `/threads/${threadId}/runs`, {
      agent_id: agentId("slow"),
      input: {},
    });
    const wait = await t.call("GET", `/threads/${threadId}/runs/${run.run_id}/wait`);
    expect((wait.body as { run: Json }).run.status).toBe("success");
    const frames = await t.storage.readFrames(run.run_id as string, 0);
    expect(frames.map((frame) => frame.seq)).toEqual(frames.map((_, i) => i + 1));
    expect(frames.filter((frame) => frame.mode === "final")).toHaveLength(1);
    expect(frames.at(-1)?.mode).toBe("final");
    const done = await t.call("GET", `/threads/${threadId}/runs/${run.run_id}`);
    expect((done.body as Json).status).toBe("success");
  });
});
