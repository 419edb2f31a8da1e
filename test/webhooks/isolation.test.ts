/**
 * A receiver that hangs (accepts a request, never answers) holds up only its own deliveries:
 * however many hang, with their attempts still open, the other receivers get theirs, in order;
 * one receiver gets at most `perTargetConcurrency` attempts at once; a retry waiting for its
 * backoff takes no slot. The hanging attempts' timeout is a minute, far beyond any wait here:
 * what is delivered is delivered while they are all still open.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Storage, WebhookDelivery } from "../../src/storage/index.js";
import {
  addRun,
  eventually,
  makeDeliverer,
  openStorage,
  runJson,
  startHangingReceivers,
  startReceiver,
} from "./helpers.js";

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const CONCURRENCY = 4;

async function setup(hanging: number, overrides: Parameters<typeof makeDeliverer>[1] = {}) {
  const receivers = await startHangingReceivers(hanging);
  const healthy = await startReceiver();
  const { storage, runId } = await openStorage();
  const { deliverer } = makeDeliverer(storage, {
    concurrency: CONCURRENCY,
    slowAfterMs: 200,
    timeoutMs: 60_000,
    stopTimeoutMs: 100,
    ...overrides,
  });
  cleanups.push(async () => {
    await deliverer.stop();
    await storage.close();
    await receivers.close();
    await healthy.close();
  });
  return { receivers, healthy, storage, runId, deliverer };
}

function settled(storage: Storage, runId: string): Promise<WebhookDelivery[]> {
  return eventually(async () => {
    const deliveries = await storage.getWebhooksOfRun(runId);
    return deliveries.length > 0 && deliveries.every((d) => d.state !== "pending")
      ? deliveries
      : undefined;
  }, 10_000);
}

describe("webhook receivers that hang", () => {
  it("four times as many as the concurrency hold up no other receiver", async () => {
    const hangingCount = 4 * CONCURRENCY;
    const { receivers, healthy, storage, deliverer } = await setup(hangingCount);
    deliverer.start();
    const hangingRuns: string[] = [];
    for (const url of receivers.urls) {
      const run = await addRun(storage);
      hangingRuns.push(run);
      await deliverer.enqueue({ run_id: run }, url, runJson(run, "pending"));
    }
    // Every hanging receiver holds an attempt open.
    await eventually(async () => (receivers.open().every((n) => n === 1) ? true : undefined));

    const healthyRun = await addRun(storage);
    for (const status of ["pending", "success"]) {
      await deliverer.enqueue(
        { run_id: healthyRun },
        `${healthy.origin}/hook`,
        runJson(healthyRun, status),
      );
    }
    const delivered = await settled(storage, healthyRun);
    expect(delivered.map((d) => d.state)).toEqual(["delivered", "delivered"]);
    expect(healthy.requests.map((r) => JSON.parse(r.body).status)).toEqual(["pending", "success"]);
    // …while every hanging attempt is still open, none timed out or retried.
    expect(receivers.open()).toEqual(Array(hangingCount).fill(1));
    for (const run of hangingRuns) {
      expect((await storage.getWebhooksOfRun(run))[0]).toMatchObject({
        state: "pending",
        attempts: 0,
      });
    }
  });

  it("a stream that hangs holds up no other stream of the same run, which stays in order", async () => {
    const { receivers, healthy, storage, runId, deliverer } = await setup(1);
    deliverer.start();
    const hung = (status: string) =>
      deliverer.delivery(runId, receivers.urls[0]!, runJson(runId, status), {}, `${runId}/a`);
    const fine = (status: string) =>
      deliverer.delivery(runId, `${healthy.origin}/b`, runJson(runId, status), {}, `${runId}/b`);
    for (const delivery of [hung("pending"), fine("pending"), hung("success"), fine("success")]) {
      await storage.enqueueWebhook(delivery);
    }
    deliverer.wake();
    await healthy.waitForRequests(2);
    expect(healthy.requests.map((r) => JSON.parse(r.body).status)).toEqual(["pending", "success"]);
    expect(receivers.open()).toEqual([1]);
  });

  it("one receiver gets at most perTargetConcurrency attempts at once", async () => {
    const { receivers, healthy, storage, deliverer } = await setup(1, {
      perTargetConcurrency: 2,
    });
    deliverer.start();
    for (let i = 0; i < 10; i++) {
      const run = await addRun(storage);
      await deliverer.enqueue({ run_id: run }, receivers.urls[0]!, runJson(run, "pending"));
    }
    await eventually(async () => (receivers.open()[0] === 2 ? true : undefined));
    const other = await addRun(storage);
    await deliverer.enqueue({ run_id: other }, `${healthy.origin}/hook`, runJson(other, "success"));
    expect((await settled(storage, other))[0]!.state).toBe("delivered");
    expect(receivers.open()).toEqual([2]);
  });

  it("a retry waiting for its backoff takes no slot", async () => {
    const failing = await startReceiver((_request, response) => response.writeHead(503).end());
    const { healthy, storage, runId, deliverer } = await setup(0, {
      concurrency: 1,
      baseDelayMs: 60_000,
      maxDelayMs: 60_000,
    });
    cleanups.push(() => failing.close());
    deliverer.start();
    await deliverer.enqueue({ run_id: runId }, `${failing.origin}/hook`, runJson(runId, "error"));
    await failing.waitForRequests(1);
    const other = await addRun(storage);
    await deliverer.enqueue({ run_id: other }, `${healthy.origin}/hook`, runJson(other, "success"));
    expect((await settled(storage, other))[0]!.state).toBe("delivered");
    const [retrying] = await storage.getWebhooksOfRun(runId);
    expect(retrying).toMatchObject({ state: "pending", attempts: 1, last_error: "HTTP 503" });
  });
});
