import { describe, expect, it } from "vitest";
import { inMs, makeRun, makeThread, type StorageFactory, useStorage } from "./helpers.js";

const LEASE = 30_000;

export function describeClaims(factory: StorageFactory): void {
  const context = useStorage(factory);

  describe("claimRun", () => {
    it("claims the oldest runnable run and sets owner and lease", async () => {
      const a = await makeThread(context.storage);
      const b = await makeThread(context.storage);
      const first = await makeRun(context.storage, a.thread_id);
      const second = await makeRun(context.storage, b.thread_id);
      const now = new Date();
      const claimed = await context.storage.claimRun("replica-1", LEASE, now);
      expect(claimed?.run_id).toBe(first.run_id);
      expect(claimed?.owner).toBe("replica-1");
      expect(claimed?.lease_expires_at).toBe(inMs(LEASE, now).toISOString());
      expect(claimed?.status).toBe("pending");
      expect((await context.storage.getRun(first.run_id))?.owner).toBe("replica-1");
      // The other thread's run is free to start alongside.
      expect((await context.storage.claimRun("replica-2", LEASE, now))?.run_id).toBe(second.run_id);
      expect(await context.storage.claimRun("replica-2", LEASE, now)).toBeNull();
    });

    it("returns null when nothing is pending", async () => {
      expect(await context.storage.claimRun("r", LEASE, new Date())).toBeNull();
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      await context.storage.updateRun(run.run_id, { status: "success" });
      expect(await context.storage.claimRun("r", LEASE, new Date())).toBeNull();
    });

    it("runs one run per thread at a time, oldest first", async () => {
      const thread = await makeThread(context.storage);
      const first = await makeRun(context.storage, thread.thread_id);
      const second = await makeRun(context.storage, thread.thread_id);
      const now = new Date();
      expect((await context.storage.claimRun("r", LEASE, now))?.run_id).toBe(first.run_id);
      expect(await context.storage.claimRun("r", LEASE, now)).toBeNull();
      await context.storage.updateRun(first.run_id, {
        status: "success",
        owner: null,
        lease_expires_at: null,
      });
      expect((await context.storage.claimRun("r", LEASE, now))?.run_id).toBe(second.run_id);
    });

    it("honours start_after, and a waiting run holds back later runs on its thread", async () => {
      const now = new Date();
      const thread = await makeThread(context.storage);
      const other = await makeThread(context.storage);
      const scheduled = await makeRun(context.storage, thread.thread_id, {
        start_after: inMs(60_000, now).toISOString(),
      });
      const behind = await makeRun(context.storage, thread.thread_id);
      const elsewhere = await makeRun(context.storage, other.thread_id);
      expect((await context.storage.claimRun("r", LEASE, now))?.run_id).toBe(elsewhere.run_id);
      expect(await context.storage.claimRun("r", LEASE, now)).toBeNull();
      const later = inMs(60_000, now);
      expect((await context.storage.claimRun("r", LEASE, later))?.run_id).toBe(scheduled.run_id);
      await context.storage.updateRun(scheduled.run_id, { status: "success", owner: null });
      expect((await context.storage.claimRun("r", LEASE, later))?.run_id).toBe(behind.run_id);
    });

    it("lets another replica claim a run whose lease expired", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      const queued = await makeRun(context.storage, thread.thread_id);
      const now = new Date();
      await context.storage.claimRun("dead", 1_000, now);
      expect(await context.storage.claimRun("alive", LEASE, inMs(999, now))).toBeNull();
      const reclaimed = await context.storage.claimRun("alive", LEASE, inMs(1_001, now));
      expect(reclaimed?.run_id).toBe(run.run_id);
      expect(reclaimed?.owner).toBe("alive");
      // The run queued behind it still waits.
      expect(await context.storage.claimRun("other", LEASE, inMs(1_002, now))).toBeNull();
      expect((await context.storage.getRun(queued.run_id))?.owner).toBeNull();
    });

    it("does not start a resumed older run while a newer one on the thread executes", async () => {
      const thread = await makeThread(context.storage);
      const older = await makeRun(context.storage, thread.thread_id);
      const newer = await makeRun(context.storage, thread.thread_id);
      const now = new Date();
      await context.storage.claimRun("r", LEASE, now);
      await context.storage.updateRun(older.run_id, {
        status: "interrupted",
        owner: null,
        lease_expires_at: null,
      });
      expect((await context.storage.claimRun("r", LEASE, now))?.run_id).toBe(newer.run_id);
      await context.storage.updateRun(older.run_id, { status: "pending" });
      expect(await context.storage.claimRun("r2", LEASE, now)).toBeNull();
      await context.storage.updateRun(newer.run_id, { status: "success", owner: null });
      expect((await context.storage.claimRun("r2", LEASE, now))?.run_id).toBe(older.run_id);
    });

    it("limits the claim to the given agents", async () => {
      const a = await makeThread(context.storage);
      const b = await makeThread(context.storage);
      await makeRun(context.storage, a.thread_id, { agent_id: "busy-agent" });
      const free = await makeRun(context.storage, b.thread_id, { agent_id: "free-agent" });
      const now = new Date();
      expect(await context.storage.claimRun("r", LEASE, now, [])).toBeNull();
      expect(await context.storage.claimRun("r", LEASE, now, ["other"])).toBeNull();
      const claimed = await context.storage.claimRun("r", LEASE, now, ["free-agent", "x"]);
      expect(claimed?.run_id).toBe(free.run_id);
    });

    it("hands each run to exactly one of several concurrent claimers", async () => {
      const runs = [];
      for (let i = 0; i < 5; i++) {
        const thread = await makeThread(context.storage);
        runs.push(await makeRun(context.storage, thread.thread_id));
      }
      const now = new Date();
      const claims = await Promise.all(
        Array.from({ length: 8 }, (_, i) => context.storage.claimRun(`r${i}`, LEASE, now)),
      );
      const claimed = claims.filter((c) => c !== null).map((c) => c.run_id);
      expect(claimed.sort()).toEqual(runs.map((r) => r.run_id).sort());
    });
  });

  describe("claimRunById", () => {
    it("claims a queued run out of queue order, and the scheduler then skips it", async () => {
      const thread = await makeThread(context.storage);
      const running = await makeRun(context.storage, thread.thread_id);
      const queued = await makeRun(context.storage, thread.thread_id);
      const now = new Date();
      expect((await context.storage.claimRun("r", LEASE, now))?.run_id).toBe(running.run_id);
      const claimed = await context.storage.claimRunById(queued.run_id, "canceller", LEASE, now);
      expect(claimed?.run_id).toBe(queued.run_id);
      expect(claimed?.owner).toBe("canceller");
      expect(claimed?.lease_expires_at).toBe(inMs(LEASE, now).toISOString());
      await context.storage.updateRun(running.run_id, { status: "success", owner: null });
      expect(await context.storage.claimRun("r", LEASE, now)).toBeNull();
    });

    it("returns null while another owner holds a live lease, and claims after it expires", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      const now = new Date();
      await context.storage.claimRun("executor", 1_000, now);
      expect(
        await context.storage.claimRunById(run.run_id, "other", LEASE, inMs(500, now)),
      ).toBeNull();
      expect((await context.storage.getRun(run.run_id))?.owner).toBe("executor");
      const late = await context.storage.claimRunById(run.run_id, "other", LEASE, inMs(1_500, now));
      expect(late?.owner).toBe("other");
    });

    it("claims an interrupted run once; a second claimer gets null", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      await context.storage.updateRun(run.run_id, { status: "interrupted" });
      const now = new Date();
      const claimed = await context.storage.claimRunById(run.run_id, "a", LEASE, now);
      expect(claimed?.status).toBe("interrupted");
      expect(claimed?.owner).toBe("a");
      expect(await context.storage.claimRunById(run.run_id, "b", LEASE, now)).toBeNull();
    });

    it("returns null for a finished or unknown run", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      await context.storage.updateRun(run.run_id, { status: "timeout" });
      expect(await context.storage.claimRunById(run.run_id, "a", LEASE, new Date())).toBeNull();
      expect(await context.storage.claimRunById("no-such-run", "a", LEASE, new Date())).toBeNull();
    });
  });

  describe("renewLeases", () => {
    it("extends the leases the owner holds on pending runs and lists them", async () => {
      const a = await makeThread(context.storage);
      const b = await makeThread(context.storage);
      const c = await makeThread(context.storage);
      const mine = await makeRun(context.storage, a.thread_id);
      const done = await makeRun(context.storage, b.thread_id);
      const theirs = await makeRun(context.storage, c.thread_id);
      const now = new Date();
      await context.storage.claimRun("me", 1_000, now);
      await context.storage.claimRun("me", 1_000, now);
      await context.storage.claimRun("them", 1_000, now);
      await context.storage.updateRun(done.run_id, { status: "success" });

      const later = inMs(500, now);
      const held = await context.storage.renewLeases("me", LEASE, later);
      expect(held).toEqual([mine.run_id]);
      expect((await context.storage.getRun(mine.run_id))?.lease_expires_at).toBe(
        inMs(LEASE, later).toISOString(),
      );
      expect((await context.storage.getRun(theirs.run_id))?.lease_expires_at).toBe(
        inMs(1_000, now).toISOString(),
      );
      expect(await context.storage.renewLeases("nobody", LEASE, later)).toEqual([]);
    });

    it("stops listing a run once another replica has taken it over", async () => {
      const thread = await makeThread(context.storage);
      const run = await makeRun(context.storage, thread.thread_id);
      const now = new Date();
      await context.storage.claimRun("slow", 1_000, now);
      await context.storage.claimRun("fast", LEASE, inMs(2_000, now));
      expect(await context.storage.renewLeases("slow", LEASE, inMs(2_001, now))).toEqual([]);
      expect(await context.storage.renewLeases("fast", LEASE, inMs(2_001, now))).toEqual([
        run.run_id,
      ]);
    });
  });

  describe("expiredRuns", () => {
    it("lists pending runs whose lease ran out", async () => {
      const a = await makeThread(context.storage);
      const b = await makeThread(context.storage);
      const c = await makeThread(context.storage);
      const short = await makeRun(context.storage, a.thread_id);
      const long = await makeRun(context.storage, b.thread_id);
      await makeRun(context.storage, c.thread_id);
      const now = new Date();
      await context.storage.claimRun("x", 1_000, now);
      await context.storage.claimRun("y", LEASE, now);
      expect(await context.storage.expiredRuns(inMs(999, now))).toEqual([]);
      const expired = await context.storage.expiredRuns(inMs(1_001, now));
      expect(expired.map((r) => r.run_id)).toEqual([short.run_id]);
      expect(expired[0]?.owner).toBe("x");
      await context.storage.updateRun(short.run_id, { status: "error" });
      expect(await context.storage.expiredRuns(inMs(1_001, now))).toEqual([]);
      expect(
        (await context.storage.expiredRuns(inMs(LEASE + 1, now))).map((r) => r.run_id),
      ).toEqual([long.run_id]);
    });
  });

  describe("nextStartAfter", () => {
    it("gives the earliest start_after among pending unclaimed runs", async () => {
      expect(await context.storage.nextStartAfter()).toBeNull();
      const now = new Date();
      const a = await makeThread(context.storage);
      const b = await makeThread(context.storage);
      const c = await makeThread(context.storage);
      const soon = inMs(10_000, now).toISOString();
      const later = inMs(20_000, now).toISOString();
      const claimedRun = await makeRun(context.storage, a.thread_id);
      await context.storage.claimRun("r", LEASE, now);
      await makeRun(context.storage, b.thread_id, { start_after: later });
      const soonRun = await makeRun(context.storage, c.thread_id, { start_after: soon });
      expect(claimedRun.owner).toBeNull();
      expect(await context.storage.nextStartAfter()).toBe(soon);
      await context.storage.updateRun(soonRun.run_id, { status: "error" });
      expect(await context.storage.nextStartAfter()).toBe(later);
    });
  });
}
