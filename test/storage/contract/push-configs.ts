import { expect, it } from "vitest";
import type { PushConfigRecord, WebhookDelivery } from "../../../src/storage/types.js";
import {
  expectDomainError,
  id,
  makeRun,
  makeThread,
  PAST,
  type StorageFactory,
  seqFrame,
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
      stream: `${run}/push/cfg`,
      target: "https://hooks.example.com",
    };
    await context.storage.enqueueWebhook(delivery);
    expect(await context.storage.getWebhooksOfRun(run)).toEqual([delivery]);
    const [claimed] = await context.storage.claimDueWebhooks(new Date(), 60_000, 10);
    expect(claimed?.headers).toEqual(delivery.headers);
  });

  const delivery = (run: string, body = "{}"): WebhookDelivery => ({
    delivery_id: id(),
    run_id: run,
    url: "https://hooks.example.com/a2a",
    body,
    attempts: 0,
    next_attempt_at: PAST,
    state: "pending",
    last_error: null,
    created_at: PAST,
    headers: { "x-a2a-notification-token": "tok-1" },
    stream: `${run}/push/cfg`,
    target: "https://hooks.example.com",
  });

  it("moves a push cursor only from where it is, with its deliveries, all or nothing", async () => {
    const run = await runId();
    const { storage } = context;
    expect(await storage.getPushCursor(run)).toBeNull();
    expect(await storage.advancePushCursor(run, null, { seq: 0, closed: false }, [])).toBe(true);
    // A second start finds the cursor there and writes nothing.
    const lost = delivery(run, '{"lost":1}');
    expect(await storage.advancePushCursor(run, null, { seq: 9, closed: true }, [lost])).toBe(
      false,
    );
    expect(await storage.getPushCursor(run)).toEqual({ seq: 0, closed: false });
    const first = [delivery(run, '{"n":1}'), delivery(run, '{"n":2}')];
    const at0 = { seq: 0, closed: false };
    const at3 = { seq: 3, closed: false };
    expect(await storage.advancePushCursor(run, at0, at3, first)).toBe(true);
    // Another relay that read the cursor at 0 too is refused, and its deliveries are not kept.
    const stale = delivery(run, '{"stale":1}');
    expect(await storage.advancePushCursor(run, at0, { seq: 4, closed: false }, [stale])).toBe(
      false,
    );
    const closing = delivery(run, '{"n":3}');
    expect(await storage.advancePushCursor(run, at3, { seq: 3, closed: true }, [closing])).toBe(
      true,
    );
    expect(await storage.getPushCursor(run)).toEqual({ seq: 3, closed: true });
    expect((await storage.getWebhooksOfRun(run)).map((d) => d.body)).toEqual([
      '{"n":1}',
      '{"n":2}',
      '{"n":3}',
    ]);
    await storage.updateRun(run, { status: "success" });
    await storage.deleteRun(run);
    expect(await storage.getPushCursor(run)).toBeNull();
  });

  it("lists the relays behind: finished ones not closed at their last frame, running ones of the owner", async () => {
    const { storage } = context;
    const withPush = async (cursor: { seq: number; closed: boolean }, configs = true) => {
      const run = await runId();
      if (configs) await storage.putPushConfig(config(run));
      await storage.advancePushCursor(run, null, cursor, []);
      return run;
    };
    const mine = await withPush({ seq: 0, closed: false });
    await storage.updateRun(mine, { owner: "replica-a" });
    const queued = await withPush({ seq: 0, closed: false });
    const behind = await withPush({ seq: 1, closed: false });
    const done = await withPush({ seq: 2, closed: true });
    const moreFrames = await withPush({ seq: 1, closed: true });
    const noConfig = await withPush({ seq: 0, closed: false }, false);
    for (const run of [behind, done, moreFrames, noConfig]) {
      await storage.appendFrames([seqFrame(run, 1), seqFrame(run, 2, "final")]);
      await storage.updateRun(run, { status: run === done ? "success" : "interrupted" });
    }
    const ids = async (owner: string, agents = ["agent-a"]) =>
      new Set((await storage.pushBacklog(owner, agents, 100)).map((entry) => entry.run_id));
    const a = await ids("replica-a");
    const b = await ids("replica-b");
    for (const run of [mine, behind, moreFrames]) expect(a.has(run)).toBe(true);
    for (const run of [queued, done, noConfig]) expect(a.has(run)).toBe(false);
    for (const run of [behind, moreFrames]) expect(b.has(run)).toBe(true);
    for (const run of [mine, queued, done, noConfig]) expect(b.has(run)).toBe(false);
    // Only the agents asked for (those configured on the replica asking).
    expect((await ids("replica-a", ["agent-b"])).size).toBe(0);
    const [entry] = (await storage.pushBacklog("replica-a", ["agent-a"], 100)).filter(
      (e) => e.run_id === mine,
    );
    expect(entry).toEqual({ run_id: mine, agent_id: "agent-a" });
  });
}
