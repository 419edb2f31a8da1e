/**
 * Webhook receivers that misbehave: one that answers with a huge body, one that trickles its
 * body, one that never finishes its headers. Each costs one delivery attempt: the deliverer
 * never reads a response body (so neither its size nor its pace matters), bounds the whole
 * attempt by timeoutMs, and meanwhile delivers to other receivers.
 */
import { once } from "node:events";
import type { ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import type { Storage, WebhookDelivery } from "../../src/storage/index.js";
import {
  addRun,
  eventually,
  makeDeliverer,
  openStorage,
  runJson,
  startReceiver,
} from "./helpers.js";

const MiB = 1024 * 1024;
const cleanups: Array<() => Promise<void>> = [];

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(
  reply: Parameters<typeof startReceiver>[0],
  overrides: Parameters<typeof makeDeliverer>[1] = {},
) {
  const receiver = await startReceiver(reply);
  const { storage, runId } = await openStorage();
  const { deliverer } = makeDeliverer(storage, overrides);
  cleanups.push(async () => {
    await deliverer.stop();
    await storage.close();
    await receiver.close();
  });
  return { receiver, storage, runId, deliverer };
}

function settled(storage: Storage, runId: string): Promise<WebhookDelivery[]> {
  return eventually(async () => {
    const deliveries = await storage.getWebhooksOfRun(runId);
    return deliveries.length > 0 && deliveries.every((d) => d.state !== "pending")
      ? deliveries
      : undefined;
  }, 15_000);
}

/** Writes `total` bytes with backpressure, counting what was written until the client left. */
async function stream(response: ServerResponse, total: number, sent: { bytes: number }) {
  const chunk = Buffer.alloc(64 * 1024, "x");
  const closed = once(response, "close");
  while (sent.bytes < total && !response.destroyed) {
    sent.bytes += chunk.length;
    if (!response.write(chunk)) await Promise.race([once(response, "drain"), closed]);
  }
  if (!response.destroyed) response.end();
}

describe("hostile webhook receivers", () => {
  it("a huge response body is not read: the delivery counts, the connection is closed", async () => {
    const sent = { bytes: 0 };
    let closed: Promise<unknown> | undefined;
    const { receiver, storage, runId, deliverer } = await setup((_request, response) => {
      closed = once(response, "close");
      response.writeHead(200, { "content-type": "application/octet-stream" });
      void stream(response, 300 * MiB, sent);
    });
    deliverer.start();
    await deliverer.enqueue(
      { run_id: runId },
      `${receiver.origin}/hook`,
      runJson(runId, "success"),
    );
    const [delivery] = await settled(storage, runId);
    expect(delivery).toMatchObject({ state: "delivered", attempts: 1 });
    await closed;
    expect(sent.bytes).toBeLessThan(64 * MiB);
  });

  it("a body that trickles forever does not hold the attempt: a 200 is delivered, a 500 retried", async () => {
    const trickle = (status: number) => (_request: unknown, response: ServerResponse) => {
      response.writeHead(status, { "content-type": "text/plain" });
      const timer = setInterval(() => {
        if (response.destroyed) clearInterval(timer);
        else response.write(".");
      }, 50);
      response.on("close", () => clearInterval(timer));
    };
    const ok = await setup(trickle(200));
    ok.deliverer.start();
    await ok.deliverer.enqueue(
      { run_id: ok.runId },
      `${ok.receiver.origin}/hook`,
      runJson(ok.runId, "success"),
    );
    expect((await settled(ok.storage, ok.runId))[0]).toMatchObject({
      state: "delivered",
      attempts: 1,
    });

    const failing = await setup(trickle(500), { maxAttempts: 2 });
    failing.deliverer.start();
    await failing.deliverer.enqueue(
      { run_id: failing.runId },
      `${failing.receiver.origin}/hook`,
      runJson(failing.runId, "success"),
    );
    expect((await settled(failing.storage, failing.runId))[0]).toMatchObject({
      state: "failed",
      attempts: 2,
      last_error: "HTTP 500",
    });
  });

  it("headers that never finish cost one attempt of timeoutMs each, while other deliveries go on", async () => {
    const { receiver, storage, runId, deliverer } = await setup(
      (request, response) => {
        if (request.path === "/good") {
          response.writeHead(204).end();
          return;
        }
        // A status line, then a header trickled a byte at a time: the headers never end.
        const socket = response.socket!;
        socket.write("HTTP/1.1 200 OK\r\nx-slow: ");
        const timer = setInterval(() => {
          if (socket.destroyed) clearInterval(timer);
          else socket.write("a");
        }, 50);
        socket.on("close", () => clearInterval(timer));
      },
      { timeoutMs: 1500, maxAttempts: 2 },
    );
    const otherRun = await addRun(storage);
    deliverer.start();
    await deliverer.enqueue(
      { run_id: runId },
      `${receiver.origin}/slow`,
      runJson(runId, "success"),
    );
    await receiver.waitForRequests(1);
    await deliverer.enqueue(
      { run_id: otherRun },
      `${receiver.origin}/good`,
      runJson(otherRun, "success"),
    );
    const [good] = await settled(storage, otherRun);
    expect(good).toMatchObject({ state: "delivered", attempts: 1 });
    // Delivered while the slow receiver still holds its own attempt: no worker is stuck.
    expect((await storage.getWebhooksOfRun(runId))[0]!.state).toBe("pending");
    const [slow] = await settled(storage, runId);
    expect(slow).toMatchObject({
      state: "failed",
      attempts: 2,
      last_error: "timed out after 1500 ms",
    });
  });
});
