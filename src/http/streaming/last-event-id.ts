import type { FastifyRequest } from "fastify";

/** The `Last-Event-ID` header as a sequence number, or undefined when absent or not a number. */
export function lastEventId(request: FastifyRequest): number | undefined {
  const header = request.headers["last-event-id"];
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === "") return undefined;
  const seq = Number(value);
  return Number.isSafeInteger(seq) && seq >= 0 ? seq : undefined;
}
