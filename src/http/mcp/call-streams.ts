import { randomBytes } from "node:crypto";

/**
 * Where a POST's SSE stream stands, for the event ids of what it sends. A stream has a random
 * key; a tools/call's stream is recorded under its key (the session, the run, the request id
 * and the progress token: storage/mcp-sessions.ts), and `seq` is the run frame up to which its
 * caller has been told the call's progress. An event id names both, so any replica can go on
 * from there with the run's stored frames (resume.ts).
 */
export interface CallStream {
  readonly key: string;
  seq: number;
}

export const newCallStream = (): CallStream => ({ key: randomBytes(16).toString("hex"), seq: 0 });

/**
 * An SSE event id: `{key}.{seq}.{n}` for an event the session's log keeps (the n-th of its
 * stream), `{key}.{seq}` for one sent when resuming from the run. Opaque to clients.
 */
export const eventIdOf = (stream: CallStream, n?: number) =>
  n === undefined ? `${stream.key}.${stream.seq}` : `${stream.key}.${stream.seq}.${n}`;

const EVENT_ID = /^([0-9a-f]{32})\.(\d{1,15})(?:\.\d{1,15})?$/;

/** The stream key and frame an event id names; undefined for one this server did not make. */
export function parseEventId(id: string): { key: string; seq: number } | undefined {
  const match = EVENT_ID.exec(id);
  if (!match) return undefined;
  const seq = Number(match[2]);
  return Number.isSafeInteger(seq) ? { key: match[1]!, seq } : undefined;
}
