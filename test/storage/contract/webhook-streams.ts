import { expect, it } from "vitest";
import type { PushConfigRecord, WebhookDelivery } from "../../../src/storage/types.js";
import {
  id,
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

const delivery = (
  runId: string,
  stream: string,
  over: Partial<WebhookDelivery> = {},
): WebhookDelivery => ({
  delivery_id: id(),
  run_id: runId,
  url: "https://hooks.example.com/a2a",
  body: JSON.stringify({ n: id() }),
  attempts: 0,
  next_attempt_at: PAST,
  state: "pending",
  last_error: null,
  created_at: PAST,
  stream,
  target: "https://hooks.example.com",
  ...over,
});

/**
 * Webhook streams: a stream's deliveries are handed out one at a time, in order (the later
 * ones parked until the one before is settled), streams independently of each other, none to
 * a busy target; and the push config limit per run.
 */
export function describeWebhookStreams(factory: StorageFactory): void {
  const context = useStorage(factory);
  const claim = async (busyTargets: string[] = []) =>
    (await context.storage.claimDueWebhooks(new Date(), 60_000, 100, busyTargets)).map(
      (d) => d.delivery_id,
    );

  it("hands out a stream's first pending delivery only, the next once it is settled", async () => {
    const { storage } = context;
    const runId = await makeRunId(context);
    const [a1, a2, a3] = [1, 2, 3].map(() => delivery(runId, `${runId}/a`));
    const b1 = delivery(runId, `${runId}/b`);
    for (const d of [a1!, a2!, b1, a3!]) await storage.enqueueWebhook(d);

    expect(await claim()).toEqual([a1!.delivery_id, b1.delivery_id]);
    expect(await claim()).toEqual([]);
    // A retry keeps its place: the stream's later deliveries still wait.
    await storage.updateWebhook(a1!.delivery_id, { attempts: 1, next_attempt_at: PAST });
    expect(await claim()).toEqual([a1!.delivery_id]);
    await storage.updateWebhook(a1!.delivery_id, { attempts: 2, state: "delivered" });
    expect(await claim()).toEqual([a2!.delivery_id]);
    // A delivery that finally failed lets the next one go too.
    await storage.updateWebhook(a2!.delivery_id, { attempts: 5, state: "failed" });
    expect(await claim()).toEqual([a3!.delivery_id]);
    await storage.updateWebhook(a3!.delivery_id, { attempts: 1, state: "delivered" });
    // With nothing pending in its stream, a new delivery is due at once.
    const a4 = delivery(runId, `${runId}/a`);
    await storage.enqueueWebhook(a4);
    expect(await claim()).toEqual([a4.delivery_id]);
    expect((await storage.getWebhooksOfRun(runId)).map((d) => d.delivery_id)).toEqual(
      [a1!, a2!, b1, a3!, a4].map((d) => d.delivery_id),
    );
  });

  it("keeps the order of deliveries stored with a push cursor, stream by stream", async () => {
    const { storage } = context;
    const runId = await makeRunId(context);
    const batch = [
      delivery(runId, `${runId}/a`),
      delivery(runId, `${runId}/b`),
      delivery(runId, `${runId}/a`),
      delivery(runId, `${runId}/b`),
    ];
    expect(await storage.advancePushCursor(runId, null, { seq: 4, closed: false }, batch)).toBe(
      true,
    );
    expect(await claim()).toEqual([batch[0]!.delivery_id, batch[1]!.delivery_id]);
    await storage.updateWebhook(batch[1]!.delivery_id, { attempts: 1, state: "delivered" });
    expect(await claim()).toEqual([batch[3]!.delivery_id]);
    await storage.updateWebhook(batch[0]!.delivery_id, { attempts: 1, state: "delivered" });
    expect(await claim()).toEqual([batch[2]!.delivery_id]);
  });

  it("passes over busy targets until they are free again", async () => {
    const { storage } = context;
    const runId = await makeRunId(context);
    const toA = delivery(runId, `${runId}/a`, { target: "https://a.example.com" });
    const toB = delivery(runId, `${runId}/b`, { target: "https://b.example.com" });
    await storage.enqueueWebhook(toA);
    await storage.enqueueWebhook(toB);
    expect(await claim(["https://a.example.com"])).toEqual([toB.delivery_id]);
    expect(await claim(["https://b.example.com"])).toEqual([toA.delivery_id]);
  });

  it("a delivery stored while the one before it is being settled is handed out once that is", async () => {
    const { storage } = context;
    const runId = await makeRunId(context);
    for (let round = 0; round < 20; round++) {
      const stream = `${runId}/${round}`;
      const first = delivery(runId, stream);
      await storage.enqueueWebhook(first);
      expect(await claim()).toEqual([first.delivery_id]);
      const next = delivery(runId, stream);
      await Promise.all([
        storage.updateWebhook(first.delivery_id, { attempts: 1, state: "delivered" }),
        storage.enqueueWebhook(next),
      ]);
      expect(await claim()).toEqual([next.delivery_id]);
      await storage.updateWebhook(next.delivery_id, { attempts: 1, state: "delivered" });
    }
  });

  it("refuses a push config past the run's limit; replacing one counts as none", async () => {
    const { storage } = context;
    const runId = await makeRunId(context);
    const other = await makeRunId(context);
    const config = (run: string, configId: string): PushConfigRecord => ({
      run_id: run,
      config_id: configId,
      url: `https://hooks.example.com/${configId}`,
      token: null,
      authentication: null,
      created_at: PAST,
    });
    expect(await storage.putPushConfig(config(runId, "a"), 2)).toBe(true);
    expect(await storage.putPushConfig(config(runId, "b"), 2)).toBe(true);
    expect(await storage.putPushConfig(config(runId, "c"), 2)).toBe(false);
    expect(await storage.putPushConfig({ ...config(runId, "b"), token: "t" }, 2)).toBe(true);
    expect(await storage.putPushConfig(config(other, "c"), 2)).toBe(true);
    expect((await storage.getPushConfigs(runId)).map((c) => [c.config_id, c.token])).toEqual([
      ["a", null],
      ["b", "t"],
    ]);
    // Two at once for the last place: one gets it.
    await storage.deletePushConfig(runId, "a");
    const raced = await Promise.all([
      storage.putPushConfig(config(runId, "x"), 2),
      storage.putPushConfig(config(runId, "y"), 2),
    ]);
    expect(raced.filter(Boolean)).toHaveLength(1);
    expect(await storage.getPushConfigs(runId)).toHaveLength(2);
  });
}
