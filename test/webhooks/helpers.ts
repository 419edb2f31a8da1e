import { randomUUID } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pino } from "pino";
import { createStorage, type Storage } from "../../src/storage/index.js";
import { WebhookDeliverer, type WebhookDelivererOptions } from "../../src/webhooks/deliverer.js";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export type Reply = (request: ReceivedRequest, response: ServerResponse) => void;

export interface Receiver {
  /** `http://127.0.0.1:<port>` */
  origin: string;
  port: number;
  requests: ReceivedRequest[];
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/** A webhook receiver on 127.0.0.1; `reply` answers each request (default: 204). */
export async function startReceiver(reply?: Reply): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const waiters: Array<() => void> = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const request: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      };
      requests.push(request);
      for (const wake of waiters.splice(0)) wake();
      if (reply) reply(request, res);
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    port,
    requests,
    async waitForRequests(count, timeoutMs = 5000) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < count) {
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`expected ${count} requests, got ${requests.length}`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, left);
          waiters.push(() => {
            clearTimeout(timer);
            resolve();
          });
        });
      }
      return requests;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Receivers that accept a request, read it, and never answer (until closed): `urls[i]` is the
 * i-th one's (each on a port of its own, so each is a target of its own), `open()` counts the
 * requests each holds open now.
 */
export async function startHangingReceivers(count: number) {
  const servers = await Promise.all(
    Array.from({ length: count }, async () => {
      const held = new Set<ServerResponse>();
      const server = createServer((req, res) => {
        req.resume();
        held.add(res);
        res.on("close", () => held.delete(res));
      });
      // Node's own bounds would answer 408 after a while: these never answer.
      server.requestTimeout = 0;
      server.headersTimeout = 0;
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      const { port } = server.address() as AddressInfo;
      return { server, held, url: `http://127.0.0.1:${port}/hang` };
    }),
  );
  return {
    urls: servers.map((s) => s.url),
    /** Requests held open now, per receiver. */
    open: () => servers.map((s) => s.held.size),
    async close() {
      await Promise.all(
        servers.map(({ server }) => {
          server.closeAllConnections();
          return new Promise<void>((resolve) => server.close(() => resolve()));
        }),
      );
    },
  };
}

/** The real SQLite storage in memory, with one thread and one run to hang deliveries on. */
export async function openStorage(): Promise<{ storage: Storage; runId: string }> {
  const storage = createStorage(":memory:");
  await storage.open();
  const runId = await addRun(storage);
  return { storage, runId };
}

export async function addRun(storage: Storage): Promise<string> {
  const threadId = randomUUID();
  await storage.createThread({ thread_id: threadId, metadata: {}, if_exists: "raise" });
  const runId = randomUUID();
  await storage.insertRun(
    {
      run_id: runId,
      thread_id: threadId,
      agent_id: randomUUID(),
      kind: "stateful",
      creation: {},
      metadata: {},
      start_after: new Date().toISOString(),
    },
    { reject_if_busy: false },
  );
  return runId;
}

/** A pino logger whose lines are kept, parsed, for assertions. */
export function captureLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: "debug" },
    { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  return { logger, lines };
}

/** A deliverer with fast test timings; override anything. */
export function makeDeliverer(
  storage: Storage,
  overrides: Partial<WebhookDelivererOptions> = {},
): { deliverer: WebhookDeliverer; lines: Array<Record<string, unknown>> } {
  const { logger, lines } = captureLogger();
  const deliverer = new WebhookDeliverer({
    storage,
    logger,
    allowPrivateTargets: true,
    maxAttempts: 5,
    baseDelayMs: 20,
    maxDelayMs: 200,
    timeoutMs: 2000,
    pollIntervalMs: 25,
    ...overrides,
  });
  return { deliverer, lines };
}

/** Polls `check` until it returns a value other than undefined. */
export async function eventually<T>(
  check: () => Promise<T | undefined>,
  timeoutMs = 5000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function runJson(runId: string, status: string): Record<string, unknown> {
  return {
    run_id: runId,
    thread_id: null,
    agent_id: "a",
    status,
    created_at: "2025-01-01T00:00:00.000Z",
    updated_at: new Date().toISOString(),
    metadata: { nested: { keep: [1, "two", null] } },
  };
}
