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
    write: (value, event) =>
      writer.send(`${event ? `event: ${event}\n` : ""}data: ${JSON.stringify(value)}\n\n`),
    end: () => writer.end(),
  };
}
