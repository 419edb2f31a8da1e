import type { LookupAddress } from "node:dns";
import { afterEach, describe, expect, it } from "vitest";
import type { Storage, WebhookDelivery } from "../../src/storage/index.js";
import type { WebhookDeliverer } from "../../src/webhooks/deliverer.js";
import {
  addRun,
  eventually,
  makeDeliverer,
  openStorage,
  type Receiver,
  runJson,
  startReceiver,
} from "./helpers.js";

const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(
  reply?: Parameters<typeof startReceiver>[0],
  overrides: Parameters<typeof makeDeliverer>[1] = {},
) {
  const receiver = await startReceiver(reply);
  const { storage, runId } = await openStorage();
  const { deliverer, lines } = makeDeliverer(storage, overrides);
  cleanups.push(async () => {
    await deliverer.stop();
    await storage.close();
    await receiver.close();
  });
  return { receiver, storage, runId, deliverer, lines };
}

/** Waits until every delivery of the run has left the pending state. */
function settled(storage: Storage, runId: string): Promise<WebhookDelivery[]> {
  return eventually(async () => {
    const deliveries = await storage.getWebhooksOfRun(runId);
    return deliveries.length > 0 && deliveries.every((d) => d.state !== "pending")
      ? deliveries
      : undefined;
  });
}

function failTimes(times: number, status = 500): Parameters<typeof startReceiver>[0] {
  let failures = 0;
  return (_request, response) => {
    if (failures < times) {
      failures++;
      response.writeHead(status).end("nope");
    } else {
      response.writeHead(200).end("ok");
    }
  };
}

describe("WebhookDeliverer", () => {
  it("POSTs the run JSON with the delivery headers and marks the delivery delivered", async () => {
    const { receiver, storage, runId, deliverer, lines } = await setup();
    deliverer.start();
    const run = runJson(runId, "success");
    await deliverer.enqueue({ run_id: runId }, `${receiver.origin}/hook?token=t`, run);

    const [delivery] = await settled(storage, runId);
    expect(delivery).toMatchObject({ state: "delivered", attempts: 1, last_error: null });
    expect(receiver.requests).toHaveLength(1);
    const request = receiver.requests[0]!;
    expect(request.method).toBe("POST");
    expect(request.path).toBe("/hook?token=t");
    expect(JSON.parse(request.body)).toEqual(run);
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["x-acp-delivery-id"]).toBe(delivery!.delivery_id);
    expect(request.headers["x-acp-event"]).toBe("run.status_changed");
    expect(deliverer.stats()).toEqual({ delivered: 1, retried: 0, failed: 0 });

    const logged = lines.find((line) => line.msg === "webhook delivered");
    expect(logged).toMatchObject({
      level: 30,
      run_id: runId,
      delivery_id: delivery!.delivery_id,
      url: `${receiver.origin}/hook?token=t`,
      status: 204,
    });
    expect(JSON.stringify(lines)).not.toContain("x-acp-delivery-id");
  });

  it("enqueue resolves once stored, before the receiver answers", async () => {
    let answer: (() => void) | undefined;
    const { receiver, storage, runId, deliverer } = await setup((_request, response) => {
      answer = () => response.writeHead(204).end();
    });
    deliverer.start();
    await deliverer.enqueue(
      { run_id: runId },
      `${receiver.origin}/hook`,
      runJson(runId, "pending"),
    );
    const [stored] = await storage.getWebhooksOfRun(runId);
    expect(stored).toMatchObject({ state: "pending", attempts: 0 });

    await receiver.waitForRequests(1);
    expect((await storage.getWebhooksOfRun(runId))[0]!.state).toBe("pending");
    answer!();
    expect((await settled(storage, runId))[0]!.state).toBe("delivered");
  });

  it("retries a 500 with backoff, under the same delivery id, until it succeeds", async () => {
    const { receiver, storage, runId, deliverer, lines } = await setup(failTimes(2));
    deliverer.start();
    await deliverer.enqueue({ run_id: runId }, `${receiver.origin}/hook`, runJson(runId, "error"));

    const [delivery] = await settled(storage, runId);
    expect(delivery).toMatchObject({ state: "delivered", attempts: 3 });
    expect(receiver.requests).toHaveLength(3);
    const ids = new Set(receiver.requests.map((r) => r.headers["x-acp-delivery-id"]));
    expect([...ids]).toEqual([delivery!.delivery_id]);
    expect(deliverer.stats()).toEqual({ delivered: 1, retried: 2, failed: 0 });

    const retries = lines.filter((line) => line.msg === "webhook attempt failed; will retry");
    expect(retries.map((line) => [line.level, line.attempt, line.error])).toEqual([
      [40, 1, "HTTP 500"],
      [40, 2, "HTTP 500"],
    ]);
  });

  it("gives up after maxAttempts and marks the delivery failed with the last error", async () => {
    const { receiver, storage, runId, deliverer, lines } = await setup(failTimes(99, 503), {
      maxAttempts: 3,
    });
    deliverer.start();
    await deliverer.enqueue({ run_id: runId }, `${receiver.origin}/hook`, runJson(runId, "error"));

    const [delivery] = await settled(storage, runId);
    expect(delivery).toMatchObject({ state: "failed", attempts: 3, last_error: "HTTP 503" });
    expect(receiver.requests).toHaveLength(3);
    expect(deliverer.stats()).toEqual({ delivered: 0, retried: 2, failed: 1 });
    expect(lines.find((line) => line.msg === "webhook delivery failed")).toMatchObject({
      level: 50,
      run_id: runId,
      delivery_id: delivery!.delivery_id,
      attempt: 3,
      error: "HTTP 503",
    });
  });

  it("does not follow a 302 and counts it as a failed attempt", async () => {
    const { receiver, storage, runId, deliverer } = await setup(
      (request, response) => {
        if (request.path === "/hook") response.writeHead(302, { location: "/elsewhere" }).end();
        else response.writeHead(200).end();
      },
      { maxAttempts: 1 },
    );
    deliverer.start();
    await deliverer.enqueue(
      { run_id: runId },
      `${receiver.origin}/hook`,
      runJson(runId, "success"),
    );

    const [delivery] = await settled(storage, runId);
    expect(delivery!.state).toBe("failed");
    expect(delivery!.last_error).toBe(
      "HTTP 302 redirect to /elsewhere not followed (webhook redirects are refused)",
    );
    expect(receiver.requests.map((r) => r.path)).toEqual(["/hook"]);
  });

  it("refuses a private target at delivery time: failed at once, no request, no retries", async () => {
    const { receiver, storage, runId, deliverer, lines } = await setup(undefined, {
      allowPrivateTargets: false,
    });
    deliverer.start();
    const url = `${receiver.origin}/hook`;
    await deliverer.enqueue({ run_id: runId }, url, runJson(runId, "success"));

    const [delivery] = await settled(storage, runId);
    expect(delivery).toMatchObject({
      state: "failed",
      attempts: 1,
      last_error: `webhook ${url} resolves to a loopback address (127.0.0.1); private targets are refused unless server.webhooks.allowPrivateTargets is set`,
    });
    expect(receiver.requests).toHaveLength(0);
    expect(deliverer.stats()).toEqual({ delivered: 0, retried: 0, failed: 1 });
    expect(lines.some((line) => line.msg === "webhook attempt failed; will retry")).toBe(false);
  });

  it("connects only to addresses the guard vetted, so a rebinding name is refused", async () => {
    // First answer (the pre-connect check) is public, the second (the connect) is loopback.
    // The name is under .invalid, so even a bug that skipped the fake resolver reaches nothing.
    const answers = [["93.184.216.34"], ["127.0.0.1"]];
    let calls = 0;
    const resolve = async (): Promise<LookupAddress[]> =>
      (answers[Math.min(calls++, 1)] ?? []).map((address) => ({ address, family: 4 }));
    const { receiver, storage, runId, deliverer } = await setup(undefined, {
      allowPrivateTargets: false,
      resolve,
    });
    deliverer.start();
    await deliverer.enqueue(
      { run_id: runId },
      `http://rebind.invalid:${receiver.port}/hook`,
      runJson(runId, "success"),
    );

    const [delivery] = await settled(storage, runId);
    expect(delivery!.state).toBe("failed");
    expect(delivery!.attempts).toBe(1);
    expect(delivery!.last_error).toBe(
      "webhook host rebind.invalid resolves to a loopback address (127.0.0.1) at connect time; private targets are refused unless server.webhooks.allowPrivateTargets is set",
    );
    expect(receiver.requests).toHaveLength(0);
    expect(calls).toBe(2);
  });

  it("resolves host names through the injected resolver when connecting", async () => {
    const resolve = async (): Promise<LookupAddress[]> => [{ address: "127.0.0.1", family: 4 }];
    const { receiver, storage, runId, deliverer } = await setup(undefined, { resolve });
    deliverer.start();
    await deliverer.enqueue(
      { run_id: runId },
      `http://hooks.invalid:${receiver.port}/hook`,
      runJson(runId, "success"),
    );
    expect((await settled(storage, runId))[0]!.state).toBe("delivered");
    expect(receiver.requests[0]!.headers.host).toBe(`hooks.invalid:${receiver.port}`);
  });

  it("retries a receiver that does not answer within timeoutMs", async () => {
    const { receiver, storage, runId, deliverer } = await setup(() => {}, {
      timeoutMs: 100,
      maxAttempts: 2,
    });
    deliverer.start();
    await deliverer.enqueue(
      { run_id: runId },
      `${receiver.origin}/hook`,
      runJson(runId, "success"),
    );
    const [delivery] = await settled(storage, runId);
    expect(delivery).toMatchObject({
      state: "failed",
      attempts: 2,
      last_error: "timed out after 100 ms",
    });
  });

  it("keeps a run's deliveries in order: a later one waits while an earlier one retries", async () => {
    const { receiver, storage, runId, deliverer } = await setup((request, response) => {
      const status = JSON.parse(request.body).status as string;
      const firstTry = receiver.requests.filter((r) => r.body === request.body).length === 1;
      response.writeHead(status === "pending" && firstTry ? 500 : 200).end();
    });
    const otherRun = await addRun(storage);
    await deliverer.enqueue({ run_id: runId }, `${receiver.origin}/a`, runJson(runId, "pending"));
    await deliverer.enqueue({ run_id: runId }, `${receiver.origin}/a`, runJson(runId, "success"));
    await deliverer.enqueue(
      { run_id: otherRun },
      `${receiver.origin}/b`,
      runJson(otherRun, "success"),
    );
    deliverer.start();

    await settled(storage, runId);
    await settled(storage, otherRun);
    const ofRun = receiver.requests
      .filter((r) => r.path === "/a")
      .map((r) => JSON.parse(r.body).status as string);
    expect(ofRun).toEqual(["pending", "pending", "success"]);
    expect(receiver.requests.filter((r) => r.path === "/b")).toHaveLength(1);
    expect(deliverer.stats()).toEqual({ delivered: 3, retried: 1, failed: 0 });
  });

  it("delivers what was enqueued before start()", async () => {
    const { receiver, storage, runId, deliverer } = await setup();
    await deliverer.enqueue(
      { run_id: runId },
      `${receiver.origin}/hook`,
      runJson(runId, "success"),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(receiver.requests).toHaveLength(0);
    deliverer.start();
    expect((await settled(storage, runId))[0]!.state).toBe("delivered");
  });
});

describe("WebhookDeliverer.stop", () => {
  async function slowSetup(delayMs: number | null, stopTimeoutMs?: number) {
    const overrides = stopTimeoutMs === undefined ? {} : { stopTimeoutMs };
    return setup((_request, response) => {
      if (delayMs !== null) setTimeout(() => response.writeHead(200).end(), delayMs);
    }, overrides);
  }

  async function enqueueAndWait(receiver: Receiver, deliverer: WebhookDeliverer, runId: string) {
    deliverer.start();
    await deliverer.enqueue(
      { run_id: runId },
      `${receiver.origin}/hook`,
      runJson(runId, "success"),
    );
    await receiver.waitForRequests(1);
  }

  it("waits for an in-flight attempt to finish and records it", async () => {
    const { receiver, storage, runId, deliverer } = await slowSetup(200);
    await enqueueAndWait(receiver, deliverer, runId);
    const started = Date.now();
    await deliverer.stop();
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect((await storage.getWebhooksOfRun(runId))[0]).toMatchObject({
      state: "delivered",
      attempts: 1,
    });
  });

  it("is bounded: aborts an attempt that outlasts stopTimeoutMs and leaves it pending", async () => {
    const { receiver, storage, runId, deliverer, lines } = await slowSetup(null, 100);
    await enqueueAndWait(receiver, deliverer, runId);
    const started = Date.now();
    await deliverer.stop();
    expect(Date.now() - started).toBeLessThan(1500);
    const [delivery] = await storage.getWebhooksOfRun(runId);
    expect(delivery).toMatchObject({ state: "pending", attempts: 0 });
    expect(Date.parse(delivery!.next_attempt_at)).toBeLessThanOrEqual(Date.now());
    expect(
      lines.some((line) => line.msg === "webhook attempt aborted by shutdown; left pending"),
    ).toBe(true);
  });

  it("stops polling: nothing is sent after stop()", async () => {
    const { receiver, runId, deliverer } = await setup();
    deliverer.start();
    await deliverer.stop();
    await deliverer.enqueue(
      { run_id: runId },
      `${receiver.origin}/hook`,
      runJson(runId, "success"),
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(receiver.requests).toHaveLength(0);
  });
});

describe("WebhookDeliverer claims", () => {
  it("a live deliverer keeps its claim past the lease: another deliverer does not send it again", async () => {
    // The receiver answers after 4 leases; the claim is renewed meanwhile.
    const { receiver, storage, runId, deliverer } = await setup(
      (_request, response) => {
        setTimeout(() => response.writeHead(200).end(), 800);
      },
      { leaseMs: 200 },
    );
    const { deliverer: other } = makeDeliverer(storage, { leaseMs: 200 });
    cleanups.push(() => other.stop());
    deliverer.start();
    await deliverer.enqueue(
      { run_id: runId },
      `${receiver.origin}/hook`,
      runJson(runId, "success"),
    );
    await receiver.waitForRequests(1);
    other.start();
    const [delivery] = await settled(storage, runId);
    expect(delivery).toMatchObject({ state: "delivered", attempts: 1 });
    expect(receiver.requests).toHaveLength(1);
  });
});
