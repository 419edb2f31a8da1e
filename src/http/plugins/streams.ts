import type { ServerResponse } from "node:http";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { DomainError } from "../../util/errors.js";
import { PLUGIN } from "./names.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * A long-lived route, as its face declares it: `stream` answers with a stream (counted
     * against `maxOpenStreams`), `wait` holds the request open until a run stops.
     */
    longRequest?: "stream" | "wait";
  }
}

/**
 * The long-lived requests: streams (bounded by `maxOpenStreams`, beyond which a new one is
 * refused with 429 and `retry-after`) and waits. Counted from the request to the close of its
 * response, whatever writes it (the SSE writer, the AG-UI face). At shutdown, `drain` gives
 * them a moment to deliver the final frames of the runs the engine just ended, then closes
 * the rest.
 */
export class LongRequests {
  private readonly streams = new Set<ServerResponse>();
  private readonly waits = new Set<ServerResponse>();
  private readonly idle = new Set<() => void>();

  constructor(private readonly maxOpenStreams: number) {}

  get openStreams(): number {
    return this.streams.size;
  }

  get openWaits(): number {
    return this.waits.size;
  }

  register(app: FastifyInstance): void {
    app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
      const kind = request.routeOptions.config?.longRequest;
      if (kind === "stream") {
        if (this.streams.size >= this.maxOpenStreams) {
          throw new DomainError(
            "overloaded",
            `too many open streams (${this.maxOpenStreams}, server.limits.maxOpenStreams); try again later`,
          );
        }
        this.track(this.streams, reply.raw);
      } else if (kind === "wait") {
        this.track(this.waits, reply.raw);
      }
    });
  }

  /**
   * Waits up to `timeoutMs` for open streams and waits to end on their own, then ends the
   * streams still open (clients may reconnect with Last-Event-ID) and drops the waits.
   */
  async drain(timeoutMs: number): Promise<void> {
    if (this.streams.size + this.waits.size > 0) {
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.idle.delete(done);
          resolve();
        };
        const timer = setTimeout(done, timeoutMs);
        this.idle.add(done);
      });
    }
    for (const response of this.streams) response.end();
    for (const response of this.waits) response.destroy();
  }

  private track(set: Set<ServerResponse>, response: ServerResponse): void {
    set.add(response);
    response.once("close", () => {
      set.delete(response);
      if (this.streams.size + this.waits.size === 0) {
        for (const done of [...this.idle]) done();
      }
    });
  }
}

/**
 * Counts long requests from the first hook on. After the key check and the rate limit: a
 * request they refuse never holds a stream slot.
 */
export const longRequestsPlugin = fp<{ tracker: LongRequests }>(
  async (app, { tracker }) => tracker.register(app),
  {
    name: PLUGIN.longRequests,
    fastify: "5.x",
    dependencies: [PLUGIN.httpConventions, PLUGIN.auth, PLUGIN.rateLimit],
  },
);
