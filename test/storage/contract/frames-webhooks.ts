import { describe, expect, it } from "vitest";
import type { RunFrame, WebhookDelivery } from "../../../src/storage/types.js";
import {
  expectDomainError,
  id,
  inMs,
  makeRun,
  makeThread,
  PAST,
  type StorageContext,
  type StorageFactory,
  useStorage,
} from "./helpers.js";

async function makeRunId(context: StorageContext): Promise<string> {
  const thread = await makeThread(context.storage);
  return (await makeRun(context.storage, thread.thread_id)).run_id;
}

const frame = (runId: string, seq: number, mode: RunFrame["mode"] = "custom"): RunFrame => ({
  run_id: runId,
  seq,
  mode,
  data: JSON.stringify({ seq, text: "ünïcödé ✓" }),
});

const delivery = (runId: string, over: Partial<WebhookDelivery> = {}): WebhookDelivery => ({
  delivery_id: id(),
  run_id: runId,
  url: "https://hooks.example.com/acp",
  body: JSON.stringify({ run_id: runId, status: "success" }),
  attempts: 0,
  next_attempt_at: PAST,
  state: "pending",
  last_error: null,
  created_at: PAST,
  stream: id(),
  target: "https://hooks.example.com",
  ...over,
});

export function describeFramesAndWebhooks(factory: StorageFactory): void {
  const context = useStorage(factory);

  describe("appendFrames / readFrames", () => {
    it("stores frames and reads them back ascending after a sequence number", async () => {
      const runId = await makeRunId(context);
      await context.storage.appendFrames([frame(runId, 1, "values"), frame(runId, 2)]);
      await context.storage.appendFrames([
        frame(runId, 4),
        frame(runId, 3),
        frame(runId, 5, "final"),
      ]);
      const all = await context.storage.readFrames(runId, 0);
      expect(all.map((f) => f.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(all[0]).toEqual(frame(runId, 1, "values"));
      expect(all[4]?.mode).toBe("final");
      expect((await context.storage.readFrames(runId, 3)).map((f) => f.seq)).toEqual([4, 5]);
      expect((await context.storage.readFrames(runId, 1, 2)).map((f) => f.seq)).toEqual([2, 3]);
      expect(await context.storage.readFrames(runId, 5)).toEqual([]);
      expect(await context.storage.readFrames(id(), 0)).toEqual([]);
    });

    it("keeps the run's last_seq at the highest stored frame", async () => {
      const runId = await makeRunId(context);
      await context.storage.appendFrames([frame(runId, 1), frame(runId, 3), frame(runId, 2)]);
      expect((await context.storage.getRun(runId))?.last_seq).toBe(3);
      await context.storage.appendFrames([]);
      expect((await context.storage.getRun(runId))?.last_seq).toBe(3);
    });

    it("appends to several runs in one call, keeping them apart", async () => {
      const a = await makeRunId(context);
      const b = await makeRunId(context);
      await context.storage.appendFrames([frame(a, 1), frame(b, 1), frame(a, 2)]);
      expect((await context.storage.readFrames(a, 0)).map((f) => f.seq)).toEqual([1, 2]);
      expect((await context.storage.readFrames(b, 0)).map((f) => f.run_id)).toEqual([b]);
      expect((await context.storage.getRun(a))?.last_seq).toBe(2);
      expect((await context.storage.getRun(b))?.last_seq).toBe(1);
    });

    it("stores many small frames", async () => {
      const runId = await makeRunId(context);
      const frames = Array.from({ length: 2_000 }, (_, i) => frame(runId, i + 1));
      await context.storage.appendFrames(frames);
      const read = await context.storage.readFrames(runId, 0);
      expect(read).toHaveLength(2_000);
      expect(read[1_999]).toEqual(frames[1_999]);
    });

    it("rejects a duplicate sequence number with a conflict, storing nothing of that call", async () => {
      const runId = await makeRunId(context);
      await context.storage.appendFrames([frame(runId, 1)]);
      await expectDomainError(
        context.storage.appendFrames([frame(runId, 2), frame(runId, 1)]),
        "conflict",
      );
      expect((await context.storage.readFrames(runId, 0)).map((f) => f.seq)).toEqual([1]);
      expect((await context.storage.getRun(runId))?.last_seq).toBe(1);
    });

    it("fails with not_found for an unknown run", async () => {
      await expectDomainError(context.storage.appendFrames([frame(id(), 1)]), "not_found");
    });
  });

  describe("webhooks", () => {
    it("enqueues deliveries and lists them per run", async () => {
      const runId = await makeRunId(context);
      const first = delivery(runId);
      const second = delivery(runId, { url: "https://other.example.com/", state: "failed" });
      await context.storage.enqueueWebhook(first);
      await context.storage.enqueueWebhook(second);
      expect(await context.storage.getWebhooksOfRun(runId)).toEqual([first, second]);
      expect(await context.storage.getWebhooksOfRun(id())).toEqual([]);
    });

    it("claims due pending deliveries once, pushing their next attempt out", async () => {
      const runId = await makeRunId(context);
      const now = new Date();
      const due = delivery(runId, { next_attempt_at: inMs(-1_000, now).toISOString() });
      const notYet = delivery(runId, { next_attempt_at: inMs(60_000, now).toISOString() });
      const done = delivery(runId, { state: "delivered" });
      for (const d of [due, notYet, done]) await context.storage.enqueueWebhook(d);

      const claimed = await context.storage.claimDueWebhooks(now, 10_000, 10);
      expect(claimed).toEqual([{ ...due, next_attempt_at: inMs(10_000, now).toISOString() }]);
      expect(await context.storage.claimDueWebhooks(now, 10_000, 10)).toEqual([]);
      // Not acknowledged in time: due again once the claim lapses.
      const again = await context.storage.claimDueWebhooks(inMs(10_000, now), 10_000, 10);
      expect(again.map((d) => d.delivery_id)).toEqual([due.delivery_id]);
    });

    it("claims at most limit deliveries, and concurrent claimers never share one", async () => {
      const runId = await makeRunId(context);
      const all = Array.from({ length: 5 }, () => delivery(runId));
      for (const d of all) await context.storage.enqueueWebhook(d);
      const now = new Date();
      const batches = await Promise.all([
        context.storage.claimDueWebhooks(now, 60_000, 2),
        context.storage.claimDueWebhooks(now, 60_000, 2),
        context.storage.claimDueWebhooks(now, 60_000, 2),
      ]);
      expect(batches.map((b) => b.length).sort()).toEqual([1, 2, 2]);
      const ids = batches.flat().map((d) => d.delivery_id);
      expect(new Set(ids).size).toBe(5);
    });

    it("updates attempts, state and errors; delivered ones are not claimed again", async () => {
      const runId = await makeRunId(context);
      const d = delivery(runId);
      await context.storage.enqueueWebhook(d);
      const retryAt = "2001-01-01T00:00:00.000Z";
      await context.storage.updateWebhook(d.delivery_id, {
        attempts: 1,
        last_error: "HTTP 503",
        next_attempt_at: retryAt,
      });
      expect((await context.storage.getWebhooksOfRun(runId))[0]).toEqual({
        ...d,
        attempts: 1,
        last_error: "HTTP 503",
        next_attempt_at: retryAt,
      });
      await context.storage.updateWebhook(d.delivery_id, { state: "delivered", attempts: 2 });
      const [read] = await context.storage.getWebhooksOfRun(runId);
      expect(read?.state).toBe("delivered");
      expect(read?.last_error).toBe("HTTP 503");
      expect(await context.storage.claimDueWebhooks(new Date(), 1_000, 10)).toEqual([]);
    });

    it("fails with not_found for an unknown delivery or run", async () => {
      await expectDomainError(context.storage.updateWebhook(id(), { attempts: 1 }), "not_found");
      await expectDomainError(context.storage.enqueueWebhook(delivery(id())), "not_found");
    });
  });
}
