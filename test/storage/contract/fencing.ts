import { describe, expect, it } from "vitest";
import type { Fence, RunFrame, RunRecord, Storage } from "../../../src/storage/types.js";
import { isClaimLost } from "../../../src/util/errors.js";
import { makeRun, makeThread, type StorageFactory, sleep, useStorage } from "./helpers.js";

/** Short enough for the test to outlast it, so that a second replica may take the run over. */
const SHORT_LEASE = 50;

const frame = (runId: string, seq: number, mode: RunFrame["mode"] = "custom"): RunFrame => ({
  run_id: runId,
  seq,
  mode,
  data: JSON.stringify({ seq }),
});

async function expectClaimLost(promise: Promise<unknown>): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isClaimLost(err), `expected a refused fenced write, got ${String(err)}`).toBe(true);
}

/**
 * A run claimed by replica A, whose lease then ran out and replica B claimed it: returns both
 * claims' fences.
 */
async function takenOver(
  storage: Storage,
): Promise<{ run: RunRecord; stale: Fence; current: Fence }> {
  const thread = await makeThread(storage);
  const run = await makeRun(storage, thread.thread_id);
  const a = await storage.claimRun("replica-a", SHORT_LEASE, new Date());
  expect(a?.run_id).toBe(run.run_id);
  await sleep(SHORT_LEASE + 20);
  const b = await storage.claimRun("replica-b", 30_000, new Date());
  expect(b?.run_id).toBe(run.run_id);
  expect(b!.lease_epoch).toBeGreaterThan(a!.lease_epoch);
  return {
    run: b!,
    stale: { owner: "replica-a", epoch: a!.lease_epoch },
    current: { owner: "replica-b", epoch: b!.lease_epoch },
  };
}

export function describeFencing(factory: StorageFactory): void {
  const context = useStorage(factory);

  describe("claims", () => {
    it("a claim by a new owner, by queue or by id, bumps the run's lease epoch", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      expect(run.lease_epoch).toBe(0);
      const first = await context.storage.claimRun("r1", SHORT_LEASE, new Date());
      expect(first?.lease_epoch).toBe(1);
      await sleep(SHORT_LEASE + 20);
      const second = await context.storage.claimRunById(run.run_id, "r2", SHORT_LEASE, new Date());
      expect(second?.lease_epoch).toBe(2);
      expect((await context.storage.getRun(run.run_id))?.lease_epoch).toBe(2);
    });

    it("the same owner taking its own lapsed run back keeps the epoch (its execution goes on)", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      const first = await context.storage.claimRun("r", SHORT_LEASE, new Date());
      await sleep(SHORT_LEASE + 20);
      const again = await context.storage.claimRun("r", 30_000, new Date());
      expect(again?.run_id).toBe(run.run_id);
      expect(again?.lease_epoch).toBe(first?.lease_epoch);
      const fence = { owner: "r", epoch: first!.lease_epoch };
      await context.storage.appendFrames([frame(run.run_id, 1)], fence);
      expect((await context.storage.updateRun(run.run_id, { resume: null }, fence)).owner).toBe(
        "r",
      );
    });
  });

  describe("fenced writes", () => {
    it("succeed under the current claim", async () => {
      const { run, current } = await takenOver(context.storage);
      await context.storage.appendFrames([frame(run.run_id, 1), frame(run.run_id, 2)], current);
      const updated = await context.storage.updateRun(run.run_id, { resume: null }, current);
      expect(updated.owner).toBe("replica-b");
      const finished = await context.storage.finishRun(
        run.run_id,
        { status: "success", output: { ok: true }, owner: null, lease_expires_at: null },
        { status: "idle" },
        current,
      );
      expect(finished.status).toBe("success");
      // The final frame follows the outcome, under the claim the run ended with.
      await context.storage.appendFrames([frame(run.run_id, 3, "final")], current);
      expect((await context.storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([
        1, 2, 3,
      ]);
      expect((await context.storage.getRun(run.run_id))?.last_seq).toBe(3);
    });

    it("are refused once another claim took the run, and write nothing", async () => {
      const { run, stale, current } = await takenOver(context.storage);
      await context.storage.appendFrames([frame(run.run_id, 1)], current);
      const before = await context.storage.getRun(run.run_id);

      await expectClaimLost(
        context.storage.appendFrames([frame(run.run_id, 2), frame(run.run_id, 3)], stale),
      );
      await expectClaimLost(
        context.storage.updateRun(run.run_id, { status: "error", output: { stale: true } }, stale),
      );
      await expectClaimLost(
        context.storage.finishRun(
          run.run_id,
          { status: "error", output: { stale: true }, owner: null, lease_expires_at: null },
          { status: "error" },
          stale,
        ),
      );
      await expectClaimLost(
        context.storage.finishRun(run.run_id, { status: "error" }, { delete: true }, stale),
      );

      expect(await context.storage.getRun(run.run_id)).toEqual(before);
      expect((await context.storage.getThread(run.thread_id!))?.status).not.toBe("error");
      expect((await context.storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1]);
    });

    it("are refused after the run ended under the other claim: no frame after its final one", async () => {
      const { run, stale, current } = await takenOver(context.storage);
      await context.storage.finishRun(
        run.run_id,
        { status: "success", output: { by: "b" }, owner: null, lease_expires_at: null },
        { status: "idle" },
        current,
      );
      await context.storage.appendFrames([frame(run.run_id, 1, "final")], current);
      await expectClaimLost(context.storage.appendFrames([frame(run.run_id, 2, "final")], stale));
      await expectClaimLost(
        context.storage.updateRun(run.run_id, { status: "error", output: null }, stale),
      );
      const after = await context.storage.getRun(run.run_id);
      expect(after?.status).toBe("success");
      expect(after?.output).toEqual({ by: "b" });
      expect(after?.last_seq).toBe(1);
      expect((await context.storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1]);
    });

    it("a refused write fails alone: writes made beside it still land", async () => {
      const { run, stale, current } = await takenOver(context.storage);
      const results = await Promise.allSettled([
        context.storage.appendFrames([frame(run.run_id, 1)], stale),
        context.storage.appendFrames([frame(run.run_id, 1)], current),
        context.storage.updateRun(run.run_id, { status: "error" }, stale),
        context.storage.updateRun(run.run_id, { resume: null }, current),
      ]);
      expect(results.map((r) => r.status)).toEqual([
        "rejected",
        "fulfilled",
        "rejected",
        "fulfilled",
      ]);
      expect(isClaimLost((results[0] as PromiseRejectedResult).reason)).toBe(true);
      expect(isClaimLost((results[2] as PromiseRejectedResult).reason)).toBe(true);
      const after = await context.storage.getRun(run.run_id);
      expect(after?.status).toBe("pending");
      expect(after?.last_seq).toBe(1);
    });

    it("not_found, not a lost claim, for a run that does not exist", async () => {
      const fence = { owner: "r", epoch: 1 };
      const missing = "no-such-run";
      const err = await context.storage
        .updateRun(missing, { status: "error" }, fence)
        .catch((e) => e);
      expect(isClaimLost(err)).toBe(false);
      expect(err.code).toBe("not_found");
      const frameErr = await context.storage
        .appendFrames([frame(missing, 1)], fence)
        .catch((e) => e);
      expect(frameErr.code).toBe("not_found");
    });
  });
}
