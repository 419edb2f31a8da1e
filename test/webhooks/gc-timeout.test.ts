/**
 * An attempt's timeout holds after a full garbage collection. On Node 20 a collection drops the
 * inner timeout of `AbortSignal.any([AbortSignal.timeout(…)])` (nodejs/node#57736), which the
 * deliverer once bounded attempts with: a receiver that never answered then held its attempt
 * until undici's own 300 s headers timeout. Needs `gc()` (vitest.config.ts runs the tests with
 * `--expose-gc`); without it this fails rather than skip.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { Storage } from "../../src/storage/index.js";
import {
  eventually,
  makeDeliverer,
  openStorage,
  runJson,
  startHangingReceivers,
} from "./helpers.js";

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function collect(): void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (typeof gc !== "function") throw new Error("this test needs node --expose-gc");
  gc();
}

async function firstAttemptEnded(storage: Storage, runId: string) {
  return eventually(async () => {
    const [delivery] = await storage.getWebhooksOfRun(runId);
    return delivery && delivery.attempts > 0 ? delivery : undefined;
  }, 10_000);
}

describe.each([
  ["undici's fetch over the guarded agent (the default client)", {}],
  // Node's own fetch has undici's 300 s headers timeout: only the attempt's own timer bounds it.
  ["an injected fetch", { fetch: globalThis.fetch }],
])("a hanging receiver's attempt times out after a full GC, with %s", (_name, client) => {
  it("the attempt ends at timeoutMs and is retried", async () => {
    const receivers = await startHangingReceivers(1);
    const { storage, runId } = await openStorage();
    const { deliverer } = makeDeliverer(storage, {
      timeoutMs: 1000,
      maxAttempts: 2,
      stopTimeoutMs: 100,
      ...client,
    });
    cleanups.push(async () => {
      await deliverer.stop();
      await storage.close();
      await receivers.close();
    });
    deliverer.start();
    await deliverer.enqueue({ run_id: runId }, receivers.urls[0]!, runJson(runId, "success"));
    await eventually(async () => (receivers.open()[0] === 1 ? true : undefined));
    // Full collections while the attempt waits for its answer.
    for (let i = 0; i < 3; i++) {
      collect();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(await firstAttemptEnded(storage, runId)).toMatchObject({
      attempts: 1,
      last_error: "timed out after 1000 ms",
    });
  });
});
