import fp from "fastify-plugin";
import { sendError } from "../errors.js";
import { PLUGIN } from "./names.js";
import type { LongRequests } from "./streams.js";

declare module "fastify" {
  interface FastifyInstance {
    /** Whether the shutdown began: a binding not served over HTTP (A2A's gRPC) refuses calls. */
    isShuttingDown(): boolean;
  }
}

export interface ShutdownOptions {
  /** Stops the run engine, giving running runs `graceMs` to finish. */
  stopEngine(graceMs: number): Promise<void>;
  /** Stops what must outlive the requests (webhook delivery), once they all ended. */
  stopBackground(): Promise<void>;
  /** The streams and waits to end once the engine stopped. */
  longRequests: LongRequests;
  /** Grace period for running runs. */
  graceMs: number;
}

/** How long open streams get, once the engine stopped, to deliver their final frames. */
const STREAM_DRAIN_MS = 1000;

/**
 * The longest the shutdown sequence may take once close starts: the grace period, the streams'
 * drain, and a margin for storage to take the runs' ends. Fastify bounds every close hook by its
 * `pluginTimeout` (10 s by default), and a hook cut short fails the whole close: the runs still
 * going would never be stored as ended. The app sets its timeout from this.
 */
export function shutdownTimeoutMs(graceMs: number): number {
  return Math.max(10_000, graceMs + STREAM_DRAIN_MS + 10_000);
}

/**
 * The app's shutdown, in order: requests still arriving on an open connection are refused
 * (503, registered first so nothing else runs for them), no new connections are taken, the
 * engine stops (running runs get the grace period), open streams get a moment to deliver the
 * final frames of the runs just ended, and once Fastify closed every connection the background
 * work stops.
 */
export const shutdown = fp<ShutdownOptions>(
  async (app, options) => {
    let closing = false;
    app.decorate("isShuttingDown", () => closing);
    app.addHook("onRequest", async (_request, reply) => {
      if (!closing) return;
      reply.header("connection", "close");
      return sendError(reply, 503, "the server is shutting down");
    });
    // Before Fastify waits for open connections to end: the streams and waits among them only
    // end once their runs do, so the engine must stop (and end them) first.
    app.addHook("preClose", async () => {
      closing = true;
      // No new connections during the grace period: it is for the runs in flight.
      if (app.server.listening) app.server.close();
      await options.stopEngine(options.graceMs);
      await options.longRequests.drain(STREAM_DRAIN_MS);
    });
    app.addHook("onClose", async () => {
      await options.stopBackground();
    });
  },
  { name: PLUGIN.shutdown, fastify: "5.x", dependencies: [PLUGIN.httpConventions] },
);
