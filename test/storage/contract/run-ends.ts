import { describe, expect, it } from "vitest";
import type { RunPatch, RunRecord, Storage } from "../../../src/storage/types.js";
import { isClaimLost } from "../../../src/util/errors.js";
import {
  claimFor,
  expectDomainError,
  id,
  inMs,
  makeRun,
  makeThread,
  messages,
  newRun,
  type StorageFactory,
  seqFrame,
  sleep,
  useStorage,
} from "./helpers.js";

// A run in two commits: its creation may claim it (InsertRunOptions.claim, mark_thread_busy), and
// its end stores its last frames and checkpoint with the outcome (finishRun's `writes`).

const frame = seqFrame;

const success: RunPatch = { status: "success", owner: null, lease_expires_at: null };

async function claimedRun(storage: Storage): Promise<RunRecord> {
  const thread = await makeThread(storage);
  const run = await storage.insertRun(newRun(thread.thread_id), {
    reject_if_busy: false,
    mark_thread_busy: true,
    claim: claimFor("replica-a"),
  });
  expect(run.owner).toBe("replica-a");
  return run;
}

export function describeRunEnds(factory: StorageFactory): void {
  const context = useStorage(factory);

  describe("insertRun with a claim", () => {
    it("claims a due run alone on its thread: owner, lease, epoch 1, its segment open, thread busy", async () => {
      const thread = await makeThread(context.storage);
      const claim = claimFor("replica-a");
      const run = await context.storage.insertRun(newRun(thread.thread_id), {
        reject_if_busy: false,
        mark_thread_busy: true,
        claim,
      });
      expect(run.owner).toBe("replica-a");
      expect(run.lease_epoch).toBe(1);
      expect(Date.parse(run.lease_expires_at!)).toBeGreaterThan(Date.now() + 20_000);
      expect(run.segments).toEqual([claim.segment]);
      expect(run.status).toBe("pending");
      expect(await context.storage.getRun(run.run_id)).toEqual(run);
      expect((await context.storage.getThread(thread.thread_id))?.status).toBe("busy");
      // Held: nobody else claims it.
      expect(await context.storage.claimRun("replica-b", 30_000, new Date())).toBeNull();
    });

    it("claims a stateless run with its new hidden thread", async () => {
      const run = await context.storage.insertRun(newRun(id(), { kind: "stateless" }), {
        reject_if_busy: false,
        create_hidden_thread: true,
        claim: claimFor("replica-a"),
      });
      expect(run.owner).toBe("replica-a");
      expect((await context.storage.getThread(run.thread_id!))?.status).toBe("busy");
    });

    it("leaves a run unclaimed when another run is pending on its thread, or it is not due", async () => {
      const thread = await makeThread(context.storage);
      const first = await makeRun(context.storage, thread.thread_id);
      const queued = await context.storage.insertRun(newRun(thread.thread_id), {
        reject_if_busy: false,
        claim: claimFor("replica-a"),
      });
      expect(queued.owner).toBeNull();
      expect(queued.lease_epoch).toBe(0);
      expect(queued.segments).toEqual([]);
      const other = await makeThread(context.storage);
      const later = await context.storage.insertRun(
        newRun(other.thread_id, { start_after: inMs(60_000).toISOString() }),
        { reject_if_busy: false, claim: claimFor("replica-a") },
      );
      expect(later.owner).toBeNull();
      // The queue still hands them out in order.
      expect((await context.storage.claimRun("replica-b", 30_000, new Date()))?.run_id).toBe(
        first.run_id,
      );
    });

    it("a busy thread refused with reject_if_busy keeps its status and gets no run", async () => {
      const thread = await makeThread(context.storage);
      await makeRun(context.storage, thread.thread_id);
      await context.storage.setThreadStatus(thread.thread_id, "interrupted");
      await expectDomainError(
        context.storage.insertRun(newRun(thread.thread_id), {
          reject_if_busy: true,
          mark_thread_busy: true,
          claim: claimFor("replica-a"),
        }),
        "conflict",
      );
      expect((await context.storage.getThread(thread.thread_id))?.status).toBe("interrupted");
      expect(await context.storage.pendingRunsOfThread(thread.thread_id)).toHaveLength(1);
    });
  });

  describe("insertRun with the agent's queue limit", () => {
    it("inserts a stateless run while the agent has room; a full queue is refused and writes nothing", async () => {
      const { storage } = context;
      const agent = `queue-${id()}`;
      const stateless = (threadId = id()) =>
        storage.insertRun(newRun(threadId, { kind: "stateless", agent_id: agent }), {
          reject_if_busy: false,
          create_hidden_thread: true,
          queue_limit: 2,
        });
      const first = await stateless();
      await stateless();
      const refusedThread = id();
      const refused = await stateless(refusedThread).then(
        () => null,
        (err: unknown) => err as Error,
      );
      expect(refused).toMatchObject({
        code: "overloaded",
        message: `agent ${agent} already has 2 pending runs (its limit); try again later`,
      });
      expect(await storage.getThread(refusedThread)).toBeNull();
      expect(await storage.countRuns({ agent_id: agent }, 10)).toBe(2);
      // A run that ended gives its place back.
      await storage.updateRun(first.run_id, { status: "success" });
      await stateless();
      expect(await storage.countRuns({ agent_id: agent, status: "pending" }, 10)).toBe(2);
    });

    it("refuses a stateful run on a full queue, leaving its thread as it was", async () => {
      const { storage } = context;
      const agent = `queue-${id()}`;
      const busy = await makeThread(storage);
      await makeRun(storage, busy.thread_id, { agent_id: agent });
      const thread = await makeThread(storage);
      await expectDomainError(
        storage.insertRun(newRun(thread.thread_id, { agent_id: agent }), {
          reject_if_busy: false,
          mark_thread_busy: true,
          queue_limit: 1,
        }),
        "overloaded",
      );
      expect((await storage.getThread(thread.thread_id))?.status).toBe("idle");
      expect(await storage.pendingRunsOfThread(thread.thread_id)).toEqual([]);
      // Another agent's queue is its own.
      const other = await storage.insertRun(newRun(thread.thread_id, { agent_id: `${agent}-b` }), {
        reject_if_busy: false,
        queue_limit: 1,
      });
      expect(other.status).toBe("pending");
    });
  });

  describe("finishRun with writes", () => {
    it("stores the last frames, the checkpoint, the outcome and the thread's status together", async () => {
      const run = await claimedRun(context.storage);
      const fence = { owner: "replica-a", epoch: run.lease_epoch };
      await context.storage.appendFrames([frame(run.run_id, 1)], fence);
      const finished = await context.storage.finishRun(
        run.run_id,
        success,
        { status: "idle" },
        fence,
        {
          frames: [frame(run.run_id, 2), frame(run.run_id, 3, "final")],
          checkpoint: {
            checkpoint_id: id(),
            values: { answer: 42 },
            messages: messages("q", "a"),
            metadata: { run_id: run.run_id, source: "run" },
          },
        },
      );
      expect(finished.status).toBe("success");
      expect(finished.last_seq).toBe(3);
      const frames = await context.storage.readFrames(run.run_id, 0);
      expect(frames.map((f) => [f.seq, f.mode])).toEqual([
        [1, "custom"],
        [2, "custom"],
        [3, "final"],
      ]);
      const thread = await context.storage.getThread(run.thread_id!);
      expect(thread?.status).toBe("idle");
      expect(thread?.values).toEqual({ answer: 42 });
      expect(thread?.messages).toEqual(messages("q", "a"));
      const history = await context.storage.listCheckpoints(run.thread_id!, { limit: 10 });
      expect(history[0]?.metadata).toEqual({ run_id: run.run_id, source: "run" });
    });

    it("with the thread's deletion stores the frames and removes the thread", async () => {
      const run = await context.storage.insertRun(newRun(id(), { kind: "stateless" }), {
        reject_if_busy: false,
        create_hidden_thread: true,
        claim: claimFor("replica-a"),
      });
      const fence = { owner: "replica-a", epoch: run.lease_epoch };
      const finished = await context.storage.finishRun(
        run.run_id,
        success,
        { delete: true },
        fence,
        { frames: [frame(run.run_id, 1), frame(run.run_id, 2, "final")] },
      );
      expect(finished.thread_id).toBeNull();
      expect((await context.storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1, 2]);
      expect(await context.storage.getThread(run.thread_id!)).toBeNull();
    });

    it("writes nothing when any part fails: a frame that exists, a checkpoint that does", async () => {
      const run = await claimedRun(context.storage);
      const fence = { owner: "replica-a", epoch: run.lease_epoch };
      await context.storage.appendFrames([frame(run.run_id, 1)], fence);
      await expectDomainError(
        context.storage.finishRun(run.run_id, success, { status: "idle" }, fence, {
          frames: [frame(run.run_id, 1), frame(run.run_id, 2, "final")],
        }),
        "conflict",
      );
      const existing = id();
      await context.storage.addCheckpoint(run.thread_id!, {
        checkpoint_id: existing,
        values: { before: true },
        messages: null,
        metadata: {},
      });
      await expectDomainError(
        context.storage.finishRun(run.run_id, success, { status: "idle" }, fence, {
          frames: [frame(run.run_id, 2, "final")],
          checkpoint: { checkpoint_id: existing, values: {}, messages: null, metadata: {} },
        }),
        "conflict",
      );
      const after = await context.storage.getRun(run.run_id);
      expect(after?.status).toBe("pending");
      expect(after?.last_seq).toBe(1);
      expect((await context.storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1]);
      const thread = await context.storage.getThread(run.thread_id!);
      expect(thread?.status).toBe("busy");
      expect(thread?.values).toEqual({ before: true });
    });

    it("is refused whole under a claim another replica took over", async () => {
      const thread = await makeThread(context.storage);
      const run = await context.storage.insertRun(newRun(thread.thread_id), {
        reject_if_busy: false,
        claim: { ...claimFor("replica-a"), leaseMs: 50 },
      });
      await sleep(70);
      const taken = await context.storage.claimRun("replica-b", 30_000, new Date());
      expect(taken?.run_id).toBe(run.run_id);
      const err = await context.storage
        .finishRun(
          run.run_id,
          success,
          { status: "idle" },
          { owner: "replica-a", epoch: run.lease_epoch },
          { frames: [frame(run.run_id, 1, "final")] },
        )
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(isClaimLost(err), String(err)).toBe(true);
      expect(await context.storage.readFrames(run.run_id, 0)).toEqual([]);
      expect((await context.storage.getRun(run.run_id))?.owner).toBe("replica-b");
    });
  });
}
