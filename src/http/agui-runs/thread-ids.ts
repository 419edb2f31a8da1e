import { validate as isUuid, v5 as uuidv5 } from "uuid";
import type { Principal } from "../../auth/principal.js";
import type { ThreadService } from "../../engine/thread-service.js";

/**
 * The thread ids clients of the AG-UI face, CopilotKit and A2A name (an AG-UI `threadId`, an A2A
 * `contextId`), as the ACP threads behind them.
 */

/** Client thread ids that are not UUIDs map to UUID v5 under this namespace (stable everywhere). */
export const AGUI_THREAD_NAMESPACE = "6a3e7c1d-52f4-4b8e-9d0a-3c2f1e4b5a69";

/** A lone UTF-16 surrogate: text that has no UTF-8 form (and so no UUID v5 name of its own). */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * The UUID v5 of a name. A name with a lone surrogate (a client may send one in JSON) hashes its
 * UTF-16 code units after a 0xFF byte, which no UTF-8 text holds: it maps to a thread of its own,
 * and every well-formed name keeps the id it always had.
 */
function nameUuid(name: string): string {
  if (!LONE_SURROGATE.test(name)) return uuidv5(name, AGUI_THREAD_NAMESPACE);
  const bytes = Buffer.concat([Buffer.from([0xff]), Buffer.from(name, "utf16le")]);
  return uuidv5(bytes, AGUI_THREAD_NAMESPACE);
}

/**
 * The ACP thread behind a client's thread id. A thread id that is not a UUID ("main", "chat-1")
 * is one every user may pick, so for a principal it maps within that principal's own namespace:
 * two users' "main" are two threads.
 */
export function aclThreadId(clientThreadId: string, principalId: string | null = null): string {
  if (isUuid(clientThreadId)) return clientThreadId.toLowerCase();
  return nameUuid(principalId === null ? clientThreadId : `${principalId}\n${clientThreadId}`);
}

/**
 * The thread a client's thread id names for `who`, such that another caller's thread is
 * answered exactly as one nobody used: a UUID is that thread when the caller may use it or no
 * such thread exists; when it is someone else's (or a stateless run's hidden thread), the UUID
 * maps within the caller's own namespace as any other name does, a thread of the caller's own
 * that the client still knows by the UUID it sent. Nothing then tells the caller the UUID was
 * taken. An admin (and the anonymous caller of a server without keys) reaches every thread:
 * its UUIDs are the threads themselves.
 */
export async function callerThreadId(
  threads: ThreadService,
  who: Principal,
  clientThreadId: string,
): Promise<string> {
  const threadId = aclThreadId(clientThreadId, who.id);
  if (who.admin || who.id === null || !isUuid(clientThreadId)) return threadId;
  if (!(await threads.heldByAnother(who, threadId))) return threadId;
  return nameUuid(`${who.id}\n${threadId}`);
}
