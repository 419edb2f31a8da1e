import { describe, expect, it } from "vitest";
import { createStorage } from "../../src/storage/index.js";
import {
  agentId,
  buildWith,
  finished,
  newThread,
  post,
  settledRun,
  snapshot,
  started,
  tempDbFile,
} from "./helpers.js";

type Run = { run_id: string; status: string; created_at: string };

const agents = [{ name: "quick", script: [started, snapshot({ ran: true }), finished()] }];

describe("after_seconds", () => {
  it("POST /threads/{id}/runs › does not start the run before after_seconds", async () => {
    const t = await buildWith(agents);
    try {
      const threadId = await newThread(t);
      const run = (await post(t, `/threads/${threadId}/runs`, {
        agent_id: agentId("quick"),
        after_seconds: 1,
      })) as Run;
      const early = await t.storage.getRun(run.run_id);
      expect(early).toMatchObject({ status: "pending", segments: [] });
      const thread = (await t.call("GET", `/threads/${threadId}`)).body as { status: string };
      expect(thread.status).toBe("busy");

      const done = await settledRun(t, run.run_id, undefined, 4_000);
      expect(done.status).toBe("success");
      // The run is due a second after it was asked for (start_after, set as the request is
      // taken, a few ms before the row's created_at), and does not start before it is due.
      const due = Date.parse(early!.start_after!);
      expect(due - Date.parse(run.created_at)).toBeGreaterThan(900);
      expect(due - Date.parse(run.created_at)).toBeLessThanOrEqual(1_000);
      const started = Date.parse(done.segments[0]!.started_at);
      expect(started).toBeGreaterThanOrEqual(due);
      expect(started - Date.parse(run.created_at)).toBeLessThan(2_500);
    } finally {
      await t.close();
    }
  });

  it("POST /runs › a scheduled run survives a restart and completes on the next server", async () => {
    const file = tempDbFile();
    const a = await buildWith(agents, { storage: createStorage(file) });
    const run = (await post(a, "/runs", {
      agent_id: agentId("quick"),
      after_seconds: 1,
      on_completion: "keep",
    })) as Run;
    await a.close();
    const left = await a.storage.getRun(run.run_id);
    expect(left).toMatchObject({ status: "pending", segments: [], owner: null });
    await a.storage.close();

    const b = await buildWith(agents, { storage: createStorage(file) });
    try {
      const done = await settledRun(b, run.run_id, undefined, 4_000);
      expect(done.status).toBe("success");
      // Not before it was due (start_after is set as the request is taken, a few ms before the
      // row's created_at: see the test above).
      const due = Date.parse(left!.start_after);
      expect(due - Date.parse(run.created_at)).toBeGreaterThan(900);
      expect(Date.parse(done.segments[0]!.started_at)).toBeGreaterThanOrEqual(due);
      const wait = (await b.call("GET", `/runs/${run.run_id}/wait`)).body as {
        output: { values: unknown };
      };
      expect(wait.output.values).toEqual({ ran: true });
    } finally {
      await b.close();
      await b.storage.close();
    }
  });
});
