import { expect, it } from "vitest";
import type { PushConfigRecord, WebhookDelivery } from "../../../src/storage/types.js";
import {
  expectDomainError,
  id,
  makeRun,
  makeThread,
  PAST,
  type StorageFactory,
  useStorage,
} from "./helpers.js";

const config = (runId: string, over: Partial<PushConfigRecord> = {}): PushConfigRecord => ({
  run_id: runId,
  config_id: id(),
  url: "https://hooks.example.com/a2a",
  token: "tok-1",
  authentication: { scheme: "Bearer", credentials: "secret" },
  created_at: PAST,
  ...over,
});

/** A2A push notification configs, and the headers a webhook delivery carries. */
export function describePushConfigs(factory: StorageFactory): void {
  const context = useStorage(factory);
  const runId = async () => {
    const thread = await makeThread(context.storage);
    return (await makeRun(context.storage, thread.thread_id)).run_id;
  };

  it("stores a run's configs, replaces one by id, lists them oldest first and deletes them", async () => {
    const run = await runId();
    const first = config(run, { created_at: "2026-01-01T00:00:00.000Z" });
    const second = config(run, {
      created_at: "2026-01-02T00:00:00.000Z",
      token: null,
      authentication: null,
    });
    await context.storage.putPushConfig(second);
    await context.storage.putPushConfig(first);
    expect(await context.storage.getPushConfigs(run)).toEqual([first, second]);
    const moved = { ...first, url: "https://elsewhere.example.com/hook", token: "tok-2" };
    await context.storage.putPushConfig(moved);
    expect(await context.storage.getPushConfigs(run)).toEqual([moved, second]);
    expect(await context.storage.deletePushConfig(run, first.config_id)).toBe(true);
    expect(await context.storage.deletePushConfig(run, first.config_id)).toBe(false);
    expect(await context.storage.getPushConfigs(run)).toEqual([second]);
    expect(await context.storage.getPushConfigs(id())).toEqual([]);
  });

  it("refuses a config of an unknown run, and deletes a run's configs with it", async () => {
    await expectDomainError(context.storage.putPushConfig(config(id())), "not_found");
    const run = await runId();
    await context.storage.putPushConfig(config(run));
    await context.storage.updateRun(run, { status: "success" });
    await context.storage.deleteRun(run);
    expect(await context.storage.getPushConfigs(run)).toEqual([]);
  });

  it("keeps a webhook delivery's extra headers", async () => {
    const run = await runId();
    const delivery: WebhookDelivery = {
      delivery_id: id(),
      run_id: run,
      url: "https://hooks.example.com/a2a",
      body: "{}",
      attempts: 0,
      next_attempt_at: PAST,
      state: "pending",
      last_error: null,
      created_at: PAST,
      headers: { "x-a2a-notification-token": "tok-1", authorization: "Bearer secret" },
    };
    await context.storage.enqueueWebhook(delivery);
    expect(await context.storage.getWebhooksOfRun(run)).toEqual([delivery]);
    const [claimed] = await context.storage.claimDueWebhooks(new Date(), 60_000, 10);
    expect(claimed?.headers).toEqual(delivery.headers);
  });
}
