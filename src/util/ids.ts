import { randomUUID } from "node:crypto";

/**
 * A new id for a run, thread, checkpoint or AG-UI run: a UUID v7 (RFC 9562), whose first 48 bits
 * are the time in milliseconds.
 *
 * Why not v4: these ids are keys of B-tree indexes (SQLite's and PostgreSQL's). Random keys put
 * every insert on a different leaf page, so each commit writes (and each WAL checkpoint copies)
 * a page per index per row; time-ordered keys append to the same few pages.
 *
 * The random part comes from `randomUUID()`, which draws from a pooled buffer: the `uuid`
 * package's v7 asks the system for 16 random bytes per call, which showed in the profile.
 */
export function newId(): string {
  const random = randomUUID(); // xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx, V = the RFC 9562 variant
  return `${timePrefix(Date.now())}${random.slice(15)}`;
}

// The time part of the ids of one millisecond, formatted once: a run takes several ids.
let prefixMs = -1;
let prefix = "";

/** `tttttttt-tttt-7` for the time `ms`. */
function timePrefix(ms: number): string {
  if (ms !== prefixMs) {
    const time = ms.toString(16).padStart(12, "0");
    prefix = `${time.slice(0, 8)}-${time.slice(8, 12)}-7`;
    prefixMs = ms;
  }
  return prefix;
}
