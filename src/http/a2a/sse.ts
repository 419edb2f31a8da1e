import type { FastifyReply, FastifyRequest } from "fastify";
import { SSE_KEEP_ALIVE } from "../streaming/sse-keep-alive.js";
import { StreamWriter } from "../streaming/stream-writer.js";

export interface A2aSse {
  /** One `data:` line of JSON; resolves when the client can take more (or is gone). */
  write(value: unknown, event?: string): Promise<void>;
  end(): void;
  /** Aborts when the response closes before the stream ended. */
  closed: AbortSignal;
}

/**
 * Writes a stream of A2A events as SSE through the one stream writer. Closing it, or the client
 * going away, leaves the task running: an A2A task outlives its streams.
 */
export function openA2aSse(
  request: FastifyRequest,
  reply: FastifyReply,
  keepAliveSeconds: number,
): A2aSse {
  const writer = new StreamWriter(request, reply, {
    contentType: "text/event-stream",
    keepAliveSeconds,
    keepAlive: SSE_KEEP_ALIVE,
  });
  writer.open();
  return {
    closed: writer.closed,
    write: (value, event) => writer.send(sseEvent(value, event)),
    end: () => writer.end(),
  };
}

/**
 * A stream known whole before anything is sent (a task whose run ended with its insert), as one
 * answer: the same headers and `data:` lines as a stream, in one write with its length, with
 * none of a live stream's watching (the socket hijacked, its close, keep-alives) to set up.
 */
export function sendWholeSse(reply: FastifyReply, events: readonly string[]): FastifyReply {
  return reply.code(200).headers(WHOLE_HEADERS).send(events.join(""));
}

const WHOLE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache, no-transform",
  // As a live stream's (stream-writer.ts): proxies pass it on as it comes.
  "x-accel-buffering": "no",
};

/** One SSE event of a JSON value. */
export function sseEvent(value: unknown, event?: string): string {
  return `${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(value)}\n\n`;
}
