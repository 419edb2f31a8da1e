import { describe, expect, it } from "vitest";
import type { RunSearch, RunStatus, ThreadStatus } from "../../../src/storage/types.js";
import {
  claimFor,
  expectDomainError,
  ISO_UTC_MS,
  id,
  makeRun,
  makeThread,
  newRun,
  PAST,
  type StorageFactory,
  tick,
  trickyJson,
  useStorage,
} from "./helpers.js";

const DELETE = { delete: true } as const;

const page = (search: Partial<RunSearch> = {}): RunSearch => ({ limit: 100, offset: 0, ...search });

export function describeRuns(factory: StorageFactory): void {
  const context = useStorage(factory);

  describe("a run's trace context", () => {
    const TRACE = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\nvendor=opaque";

    it("is kept with a run on a thread, and null for a run created without one", async () => {
      const thread = await makeThread(context.storage);
      const traced = await makeRun(context.storage, thread.thread_id, { trace_context: TRACE });
      expect(traced.trace_context).toBe(TRACE);
      const untraced = await makeRun(context.storage, thread.thread_id);
      expect(untraced.trace_context).toBeNull();
      expect((await context.storage.getRun(traced.run_id))?.trace_context).toBe(TRACE);
    });

    it("is kept with a stateless run claimed by its insert, through a claim by another replica", async () => {
      const now = new Date();
      const run = await context.storage.insertRun(
        {
          run_id: id(),
          thread_id: id(),
          agent_id: "agent-a",
          kind: "stateless",
          creation: {},
          metadata: {},
          start_after: PAST,
          trace_context: TRACE,
        },
        {
          reject_if_busy: false,
          create_hidden_thread: true,
          claim: {
            owner: "replica-1",
            leaseMs: 1,
            now,
            segment: { agui_run_id: id(), started_at: now.toISOString(), ended_at: null },
          },
        },
      );
      expect(run.trace_context).toBe(TRACE);
      await context.storage.updateRun(run.run_id, { status: "interrupted" });
      await context.storage.updateRun(run.run_id, { status: "pending", owner: null });
      const later = new Date(now.getTime() + 60_000);
      const claimed = await context.storage.claimRun("replica-2", 30_000, later);
      expect(claimed).toMatchObject({ run_id: run.run_id, trace_context: TRACE });
    });
  });

  describe("a run's face", () => {
    it("is kept by every insert, and null for a run inserted without one (as older runs)", async () => {
      const storage = context.storage;
      const thread = await makeThread(storage);
      const plain = await makeRun(storage, thread.thread_id, { face: "acp" });
      expect(plain.face).toBe("acp");
      expect((await storage.getRun(plain.run_id))?.face).toBe("acp");
      const older = await makeRun(storage, thread.thread_id);
      expect(older.face).toBeNull();
      expect((await storage.getRun(older.run_id))?.face).toBeNull();

      // Taken by a claim (the oldest due run).
      const later = new Date(Date.now() + 60_000);
      expect(await storage.claimRun("replica-2", 30_000, later)).toMatchObject({
        run_id: plain.run_id,
        face: "acp",
      });

      // A stateless run with its hidden thread, claimed by its insert.
      const hidden = await storage.insertRun(newRun(id(), { kind: "stateless", face: "a2a" }), {
        reject_if_busy: false,
        create_hidden_thread: true,
        claim: claimFor("replica-1"),
      });
      expect(hidden.face).toBe("a2a");

      // A run with the thread it creates.
      const threadId = id();
      const created = await storage.insertRunOnNewThread!(
        { thread_id: threadId, metadata: {}, if_exists: "raise" },
        newRun(threadId, { face: "copilotkit" }),
        { reject_if_busy: false, mark_thread_busy: true },
      );
      expect(created?.face).toBe("copilotkit");

      // A held insert, written once with its end.
      const held = storage.insertRunHeld?.(newRun(id(), { kind: "stateless", face: "mcp" }), {
        reject_if_busy: false,
        create_hidden_thread: true,
        claim: claimFor("replica-1"),
      });
      if (held) {
        expect(held.run.face).toBe("mcp");
        expect((await held.committed).face).toBe("mcp");
      }

      const listed = await storage.searchRuns(page({ thread_id: thread.thread_id }));
      expect(listed.map((run) => run.face).sort()).toEqual(["acp", null].sort());
      for (const run of [hidden, created!]) {
        expect((await storage.getRun(run.run_id))?.face).toBe(run.face);
      }
    });

    it("survives the run's end, read back whole or from what the insert kept", async () => {
      const storage = context.storage;
      const claim = claimFor("replica-1");
      const run = await storage.insertRun(newRun(id(), { kind: "stateless", face: "langgraph" }), {
        reject_if_busy: false,
        create_hidden_thread: true,
        claim,
      });
      const ended = await storage.finishRun(
        run.run_id,
        {
          status: "success",
          output: { type: "result", values: {}, messages: [] },
          segments: [{ ...claim.segment, ended_at: new Date().toISOString() }],
          owner: null,
          lease_expires_at: null,
        },
        { delete: true },
        { owner: "replica-1", epoch: 1 },
      );
      expect(ended.face).toBe("langgraph");
      expect((await storage.getRun(run.run_id))?.face).toBe("langgraph");
    });
  });

  describe("finishRun, deleting the thread", () => {
    const statelessRun = async (threadId = id()) =>
      context.storage.insertRun(
        {
          run_id: id(),
          thread_id: threadId,
          agent_id: "agent-a",
          kind: "stateless",
          creation: {},
          metadata: {},
          start_after: PAST,
        },
        { reject_if_busy: false, create_hidden_thread: true },
      );
    const success = { status: "success" as const, output: { type: "result", values: { n: 1 } } };

    it("ends the run and deletes its thread in one step", async () => {
      const run = await statelessRun();
      const ended = await context.storage.finishRun(run.run_id, success, DELETE);
      expect(ended).toMatchObject({ run_id: run.run_id, thread_id: null, ...success });
      expect(await context.storage.getRun(run.run_id)).toEqual(ended);
      expect(await context.storage.getThread(run.thread_id!)).toBeNull();
    });

    it("refuses while another run on the thread is pending, writing nothing", async () => {
      const thread = await makeThread(context.storage);
      const first = await makeRun(context.storage, thread.thread_id);
      await makeRun(context.storage, thread.thread_id);
      await expectDomainError(context.storage.finishRun(first.run_id, success, DELETE), "conflict");
      expect(await context.storage.getRun(first.run_id)).toEqual(first);
      expect(await context.storage.getThread(thread.thread_id)).not.toBeNull();
    });

    it("fails with not_found for an unknown run or one without a thread", async () => {
      await expectDomainError(context.storage.finishRun(id(), success, DELETE), "not_found");
      const run = await statelessRun();
      await context.storage.finishRun(run.run_id, success, DELETE);
      const before = await context.storage.getRun(run.run_id);
      await expectDomainError(
        context.storage.finishRun(run.run_id, { status: "error" }, DELETE),
        "not_found",
      );
      expect(await context.storage.getRun(run.run_id)).toEqual(before);
    });
  });

  describe("finishRun, setting the thread's status", () => {
    const success = { status: "success" as const, output: { type: "result", values: { n: 1 } } };
    /** A thread made busy by its one pending run, as a run engine leaves it while running. */
    const busyThread = async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      await context.storage.setThreadStatus(thread.thread_id, "busy");
      return { thread, run };
    };

    it("ends the run and sets its thread's status in one step", async () => {
      const { thread, run } = await busyThread();
      const ended = await context.storage.finishRun(run.run_id, success, { status: "idle" });
      expect(ended).toMatchObject({ run_id: run.run_id, thread_id: thread.thread_id, ...success });
      expect(await context.storage.getRun(run.run_id)).toEqual(ended);
      expect((await context.storage.getThread(thread.thread_id))?.status).toBe("idle");
    });

    it("writes neither when the thread's status is refused", async () => {
      const { thread, run } = await busyThread();
      await expectDomainError(
        context.storage.finishRun(run.run_id, success, { status: "finished" as ThreadStatus }),
        "invalid",
      );
      // The run's outcome went first and is undone with the thread's refused status.
      expect(await context.storage.getRun(run.run_id)).toEqual(run);
      expect((await context.storage.getThread(thread.thread_id))?.status).toBe("busy");
    });

    it("writes neither when the run's outcome is refused", async () => {
      const { thread, run } = await busyThread();
      await expectDomainError(
        context.storage.finishRun(run.run_id, { status: "done" as RunStatus }, { status: "idle" }),
        "invalid",
      );
      expect(await context.storage.getRun(run.run_id)).toEqual(run);
      expect((await context.storage.getThread(thread.thread_id))?.status).toBe("busy");
    });

    it("records the outcome of a run whose thread is gone", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      // Not pending any more, so its thread may be deleted under it.
      await context.storage.updateRun(run.run_id, { status: "interrupted" });
      await context.storage.deleteThread(thread.thread_id);
      const ended = await context.storage.finishRun(run.run_id, success, { status: "idle" });
      expect(ended).toMatchObject({ run_id: run.run_id, thread_id: null, ...success });
      expect(await context.storage.getRun(run.run_id)).toEqual(ended);
    });

    it("fails with not_found for an unknown run, writing nothing", async () => {
      const { thread } = await busyThread();
      await expectDomainError(
        context.storage.finishRun(id(), success, { status: "idle" }),
        "not_found",
      );
      expect((await context.storage.getThread(thread.thread_id))?.status).toBe("busy");
    });
  });

  describe("updateRun with an output", () => {
    it("returns the record as stored, output included, without reading the output back", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      const output = { type: "result", values: { text: "x".repeat(100_000) }, messages: [] };
      const updated = await context.storage.updateRun(run.run_id, { status: "success", output });
      expect(updated.output).toEqual(output);
      expect(updated.status).toBe("success");
      expect(await context.storage.getRun(run.run_id)).toEqual(updated);
    });

    it("keeps a long output with every kind of character exact", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      // Characters of one to four UTF-8 bytes, escapes and a surrogate pair on every
      // boundary a piece of 64 K characters could fall on.
      const text = Array.from(
        { length: 40_000 },
        (_, i) => ["a", "é", "€", "😀", '"\\\n'][i % 5],
      ).join("");
      const output = { type: "result", values: { text, extra: trickyJson() }, messages: [] };
      await context.storage.updateRun(run.run_id, { status: "success", output });
      expect((await context.storage.getRun(run.run_id))?.output).toEqual(output);
    });
  });

  describe("insertRun", () => {
    it("creates a stateless run's hidden thread in the same write", async () => {
      const threadId = id();
      const run = await context.storage.insertRun(
        {
          run_id: id(),
          thread_id: threadId,
          agent_id: "agent-a",
          kind: "stateless",
          creation: { input: {} },
          metadata: {},
          start_after: PAST,
        },
        { reject_if_busy: false, create_hidden_thread: true },
      );
      expect(run).toMatchObject({
        thread_id: threadId,
        status: "pending",
        checkpoint_before: null,
      });
      expect(await context.storage.getThread(threadId)).toMatchObject({
        thread_id: threadId,
        hidden: true,
        status: "busy",
        metadata: {},
        values: null,
        messages: null,
        checkpoint_id: null,
      });
      expect(await context.storage.searchThreads({ limit: 10, offset: 0 })).toEqual([]);
    });

    it("refuses to create a hidden thread over an existing one, writing nothing", async () => {
      const thread = await makeThread(context.storage, { keep: true });
      const runId = id();
      await expectDomainError(
        context.storage.insertRun(
          {
            run_id: runId,
            thread_id: thread.thread_id,
            agent_id: "agent-a",
            kind: "stateless",
            creation: {},
            metadata: {},
            start_after: PAST,
          },
          { reject_if_busy: false, create_hidden_thread: true },
        ),
        "conflict",
      );
      expect(await context.storage.getRun(runId)).toBeNull();
      expect(await context.storage.getThread(thread.thread_id)).toEqual(thread);
    });

    it("inserts a pending run with empty outcome fields", async () => {
      const thread = await makeThread(context.storage);
      const cp = await context.storage.addCheckpoint(thread.thread_id, {
        checkpoint_id: id(),
        values: {},
        messages: null,
        metadata: {},
      });
      const creation = { input: trickyJson(), config: { tags: ["a"] }, stream_mode: null };
      const run = await makeRun(context.storage, thread.thread_id, {
        run_id: "run-1",
        agent_id: "agent-x",
        creation,
        metadata: { who: "me" },
        start_after: "2030-01-02T03:04:05Z",
      });
      expect(run).toEqual({
        run_id: "run-1",
        thread_id: thread.thread_id,
        agent_id: "agent-x",
        kind: "stateful",
        status: "pending",
        created_at: expect.stringMatching(ISO_UTC_MS),
        updated_at: run.created_at,
        creation,
        metadata: { who: "me" },
        output: null,
        interrupts: [],
        resume: null,
        segments: [],
        start_after: "2030-01-02T03:04:05.000Z",
        checkpoint_before: cp.checkpoint_id,
        owner: null,
        lease_expires_at: null,
        lease_epoch: 0,
        cancel_requested: null,
        last_seq: 0,
        principal: null,
        trace_context: null,
        face: null,
      });
      expect(JSON.stringify(run.creation)).toBe(JSON.stringify(creation));
      expect(await context.storage.getRun("run-1")).toEqual(run);
    });

    it("fails with not_found for an unknown thread", async () => {
      await expectDomainError(makeRun(context.storage, id()), "not_found");
    });

    it("raises a conflict for a duplicate run id", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      await context.storage.updateRun(run.run_id, { status: "success" });
      await expectDomainError(
        makeRun(context.storage, thread.thread_id, { run_id: run.run_id }),
        "conflict",
      );
    });

    it("queues behind a pending run unless reject_if_busy", async () => {
      const thread = await makeThread(context.storage);
      await makeRun(context.storage, thread.thread_id);
      const queued = await makeRun(context.storage, thread.thread_id, {}, false);
      expect(queued.status).toBe("pending");
      await expectDomainError(makeRun(context.storage, thread.thread_id, {}, true), "conflict");
      expect(await context.storage.pendingRunsOfThread(thread.thread_id)).toHaveLength(2);
    });

    it("accepts reject_if_busy once the earlier runs have finished", async () => {
      const thread = await makeThread(context.storage);
      const first = await makeRun(context.storage, thread.thread_id, {}, true);
      await context.storage.updateRun(first.run_id, { status: "interrupted" });
      const second = await makeRun(context.storage, thread.thread_id, {}, true);
      expect(second.status).toBe("pending");
    });

    it("lets exactly one of two racing reject_if_busy inserts win", async () => {
      const thread = await makeThread(context.storage);
      const results = await Promise.allSettled([
        makeRun(context.storage, thread.thread_id, {}, true),
        makeRun(context.storage, thread.thread_id, {}, true),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      expect(await context.storage.pendingRunsOfThread(thread.thread_id)).toHaveLength(1);
    });

    it("returns null for an unknown run", async () => {
      expect(await context.storage.getRun(id())).toBeNull();
    });
  });

  describe("searchRuns", () => {
    it("keeps to the given agents inside the query, so a page is full while more match", async () => {
      // Interleaved with runs of another agent: paging first and filtering after would leave
      // every page short.
      const made = [];
      for (const agent_id of ["a", "b", "c", "b", "a", "b", "c", "b"]) {
        const thread = await makeThread(context.storage);
        made.push(await makeRun(context.storage, thread.thread_id, { agent_id }));
        await tick();
      }
      const allowed = made
        .filter((r) => r.agent_id !== "b")
        .map((r) => r.run_id)
        .reverse();
      const ids = async (search: Partial<RunSearch>) =>
        (await context.storage.searchRuns(page({ agent_ids: ["a", "c"], ...search }))).map(
          (r) => r.run_id,
        );
      expect(await ids({ limit: 3 })).toEqual(allowed.slice(0, 3));
      expect(await ids({ limit: 3, offset: 3 })).toEqual(allowed.slice(3));
      expect(await ids({ agent_id: "c", limit: 1 })).toEqual([allowed[0]]);
      expect(await ids({ agent_ids: [] })).toEqual([]);
    });

    it("filters by agent, status, kind, thread and metadata, newest first", async () => {
      const t1 = await makeThread(context.storage);
      const t2 = await makeThread(context.storage, {}, true);
      const r1 = await makeRun(context.storage, t1.thread_id, {
        agent_id: "a",
        metadata: { env: "prod", cfg: { x: [1] }, "a.b": true },
      });
      await tick();
      const r2 = await makeRun(context.storage, t2.thread_id, {
        agent_id: "b",
        kind: "stateless",
        metadata: { env: "dev" },
      });
      await tick();
      const r3 = await makeRun(context.storage, t1.thread_id, {
        agent_id: "a",
        metadata: { env: "prod" },
      });
      await context.storage.updateRun(r1.run_id, { status: "success" });
      const ids = async (search: Partial<RunSearch>) =>
        (await context.storage.searchRuns(page(search))).map((r) => r.run_id);

      expect(await ids({})).toEqual([r3.run_id, r2.run_id, r1.run_id]);
      expect(await ids({ agent_id: "a" })).toEqual([r3.run_id, r1.run_id]);
      expect(await ids({ status: "pending" })).toEqual([r3.run_id, r2.run_id]);
      expect(await ids({ kind: "stateless" })).toEqual([r2.run_id]);
      expect(await ids({ thread_id: t1.thread_id })).toEqual([r3.run_id, r1.run_id]);
      expect(await ids({ metadata: { env: "prod" } })).toEqual([r3.run_id, r1.run_id]);
      expect(await ids({ metadata: { cfg: { x: [1] }, "a.b": true } })).toEqual([r1.run_id]);
      expect(await ids({ metadata: { cfg: { x: [2] } } })).toEqual([]);
      expect(await ids({ metadata: { env: "prod" }, status: "pending", agent_id: "a" })).toEqual([
        r3.run_id,
      ]);
      expect(await ids({ limit: 1, offset: 1 })).toEqual([r2.run_id]);
      expect(await ids({ agent_id: "nobody" })).toEqual([]);
    });

    it("orders runs created within one millisecond by insertion, newest first", async () => {
      const thread = await makeThread(context.storage);
      const runs = [];
      for (let i = 0; i < 5; i++) runs.push(await makeRun(context.storage, thread.thread_id));
      const found = await context.storage.searchRuns(page({ thread_id: thread.thread_id }));
      expect(found.map((r) => r.run_id)).toEqual(runs.map((r) => r.run_id).reverse());
    });
  });

  describe("countRuns", () => {
    it("counts matching runs, at most limit", async () => {
      const t1 = await makeThread(context.storage);
      const t2 = await makeThread(context.storage, {}, true);
      const a1 = await makeRun(context.storage, t1.thread_id, { agent_id: "count-a" });
      await makeRun(context.storage, t1.thread_id, { agent_id: "count-a" });
      await makeRun(context.storage, t2.thread_id, { agent_id: "count-a", kind: "stateless" });
      await makeRun(context.storage, t2.thread_id, { agent_id: "count-b", kind: "stateless" });
      await context.storage.updateRun(a1.run_id, { status: "success" });
      const count = (filter: Parameters<typeof context.storage.countRuns>[0], limit = 100) =>
        context.storage.countRuns(filter, limit);

      expect(await count({ agent_id: "count-a" })).toBe(3);
      expect(await count({ agent_id: "count-a", status: "pending" })).toBe(2);
      expect(await count({ agent_id: "count-a", status: "pending" }, 1)).toBe(1);
      expect(await count({ agent_id: "count-a", status: "pending" }, 0)).toBe(0);
      expect(await count({ agent_id: "count-a", kind: "stateless" })).toBe(1);
      expect(await count({ thread_id: t2.thread_id })).toBe(2);
      expect(await count({ thread_id: t1.thread_id, status: "success" })).toBe(1);
      expect(await count({ agent_id: "nobody" })).toBe(0);
      expect(await count({}, 2)).toBe(2);
    });
  });

  describe("pendingRunsOfThread", () => {
    it("lists the thread's pending runs oldest first", async () => {
      const thread = await makeThread(context.storage);
      const other = await makeThread(context.storage);
      const a = await makeRun(context.storage, thread.thread_id);
      const b = await makeRun(context.storage, thread.thread_id);
      const c = await makeRun(context.storage, thread.thread_id);
      await makeRun(context.storage, other.thread_id);
      await context.storage.updateRun(b.run_id, { status: "error" });
      const pending = await context.storage.pendingRunsOfThread(thread.thread_id);
      expect(pending.map((r) => r.run_id)).toEqual([a.run_id, c.run_id]);
      expect(await context.storage.pendingRunsOfThread(id())).toEqual([]);
    });
  });

  describe("updateRun", () => {
    it("changes only the fields given and bumps updated_at", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id, { metadata: { m: 1 } });
      await tick();
      const output = { type: "interrupt", interrupt: { approval: { id: "i1", message: "ok?" } } };
      const interrupts = [{ id: "i1", reason: "approval", responseSchema: { type: "object" } }];
      const segments = [{ agui_run_id: "seg-1", started_at: PAST, ended_at: null }];
      const updated = await context.storage.updateRun(run.run_id, {
        status: "interrupted",
        output,
        interrupts,
        segments,
      });
      expect(updated).toEqual({
        ...run,
        status: "interrupted",
        output,
        interrupts,
        segments,
        updated_at: expect.stringMatching(ISO_UTC_MS),
      });
      expect(updated.updated_at > run.updated_at).toBe(true);

      const resumed = await context.storage.updateRun(run.run_id, {
        status: "pending",
        resume: [{ interruptId: "i1", status: "resolved", payload: { ok: true } }],
        interrupts: [],
        cancel_requested: "rollback",
        checkpoint_before: "cp-x",
        start_after: "2031-01-01T00:00:00Z",
      });
      expect(resumed.output).toEqual(output);
      expect(resumed.resume).toEqual([
        { interruptId: "i1", status: "resolved", payload: { ok: true } },
      ]);
      expect(resumed.cancel_requested).toBe("rollback");
      expect(resumed.checkpoint_before).toBe("cp-x");
      expect(resumed.start_after).toBe("2031-01-01T00:00:00.000Z");
      expect(resumed.segments).toEqual(segments);
      expect(resumed.metadata).toEqual({ m: 1 });

      const cleared = await context.storage.updateRun(run.run_id, {
        resume: null,
        cancel_requested: null,
        output: null,
      });
      expect(cleared.resume).toBeNull();
      expect(cleared.cancel_requested).toBeNull();
      expect(cleared.output).toBeNull();
      expect(await context.storage.getRun(run.run_id)).toEqual(cleared);
    });

    it("fails with not_found for an unknown run", async () => {
      await expectDomainError(context.storage.updateRun(id(), { status: "success" }), "not_found");
    });

    it("rejects a status outside the contract as invalid", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      await expectDomainError(
        context.storage.updateRun(run.run_id, { status: "running" as never }),
        "invalid",
      );
      expect((await context.storage.getRun(run.run_id))?.status).toBe("pending");
    });
  });

  describe("deleteRun", () => {
    it("deletes a finished run with its frames and webhook deliveries", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      await context.storage.appendFrames([
        { run_id: run.run_id, seq: 1, mode: "final", data: "{}" },
      ]);
      await context.storage.enqueueWebhook({
        delivery_id: id(),
        run_id: run.run_id,
        url: "https://example.com/hook",
        body: "{}",
        attempts: 0,
        next_attempt_at: PAST,
        state: "pending",
        last_error: null,
        created_at: PAST,
        stream: run.run_id,
        target: "https://example.com",
      });
      await context.storage.updateRun(run.run_id, { status: "success" });
      await context.storage.deleteRun(run.run_id);
      expect(await context.storage.getRun(run.run_id)).toBeNull();
      expect(await context.storage.readFrames(run.run_id, 0)).toEqual([]);
      expect(await context.storage.getWebhooksOfRun(run.run_id)).toEqual([]);
    });

    it("refuses with a conflict while the run is pending", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      await expectDomainError(context.storage.deleteRun(run.run_id), "conflict");
      expect(await context.storage.getRun(run.run_id)).not.toBeNull();
    });

    it("fails with not_found for an unknown run", async () => {
      await expectDomainError(context.storage.deleteRun(id()), "not_found");
    });
  });
}
