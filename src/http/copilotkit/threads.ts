import { ownerOf, type Principal } from "../../auth/principal.js";
import type { ThreadService } from "../../engine/thread-service.js";
import type { ThreadRecord } from "../../storage/types.js";
import { conflict, notFound } from "../../util/errors.js";
import { aclThreadId } from "../agui-runs/agui-runs.js";

/**
 * CopilotKit's thread views (the threads drawer, `useThreads`) on ACP threads. A thread a
 * CopilotKit client runs on is tagged in its ACP metadata, where ACP clients see it too:
 *
 * | key                   | value                                                        |
 * | --------------------- | ------------------------------------------------------------ |
 * | `copilotkit`          | `{agent, user}`: the agent name, and the principal that made it (null without authentication) |
 * | `copilotkit_thread`   | `{id, name}`: the client's threadId, the name a user gave it  |
 * | `copilotkit_archived` | `true` once archived                                          |
 *
 * The tag is one key so that listing a user's threads of one agent is one metadata search. Who
 * may reach a thread is the thread's owner in storage (`principal`), as for every face: another
 * principal's thread does not exist for a caller (404), and lists hold the caller's own only.
 */
export const OWNER_KEY = "copilotkit";
export const THREAD_KEY = "copilotkit_thread";
export const ARCHIVED_KEY = "copilotkit_archived";

export interface Owner {
  agent: string;
  /** The principal's id (`key:<name>`, `user:<id>`); null when the server has no authentication. */
  user: string | null;
}

/** The tag a caller's threads of `agent` carry. */
export const ownerTag = (who: Principal, agent: string): Owner => ({ agent, user: ownerOf(who) });

/** The thread as CopilotKit's client knows it (`ThreadRecord` of @copilotkit/core). */
export interface CopilotThread {
  id: string;
  organizationId: string;
  agentId: string;
  createdById: string;
  name: string | null;
  archived: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface ListQuery {
  includeArchived: boolean;
  limit: number;
  offset: number;
}

/** A CopilotKit run's thread as `tagThread` left it, for the run (see AguiRuns.serve). */
export interface TaggedThread {
  /** The thread the caller may reach, tagged; null when none is (missing, or another's). */
  thread: ThreadRecord | null;
  /** The metadata of the thread the run creates when there is none: the tags. */
  newThreadMetadata: Record<string, unknown>;
}

/**
 * Tags the ACP thread behind a CopilotKit threadId before its first run through CopilotKit. A
 * thread made by ACP keeps its metadata; the tags are added. A missing thread is created by the
 * run itself, with the tags, in the run's own write. A thread tagged for another owner is left as
 * it is (it still runs, it is just not listed).
 */
export async function tagThread(
  threads: ThreadService,
  who: Principal,
  clientThreadId: string,
  agent: string,
): Promise<TaggedThread> {
  const owner = ownerTag(who, agent);
  const threadId = aclThreadId(clientThreadId, who.id);
  const tags = {
    [OWNER_KEY]: owner,
    [THREAD_KEY]: { id: clientThreadId, name: null },
    [ARCHIVED_KEY]: false,
  };
  const thread = (await threads.findReachable(who, threadId)) ?? null;
  // Someone else's thread is not tagged: the run on it is refused (404) as on the AG-UI face.
  if (!thread || thread.hidden || thread.metadata[OWNER_KEY] !== undefined) {
    return { thread, newThreadMetadata: tags };
  }
  return { thread: await threads.mergeMetadata(thread, tags), newThreadMetadata: tags };
}

export async function listThreads(
  threads: ThreadService,
  who: Principal,
  agent: string,
  query: ListQuery,
): Promise<{ threads: CopilotThread[]; nextCursor: string | null }> {
  const metadata: Record<string, unknown> = { [OWNER_KEY]: ownerTag(who, agent) };
  if (!query.includeArchived) metadata[ARCHIVED_KEY] = false;
  // One more than asked: whether there is a next page.
  const found = await threads.search(who, {
    metadata,
    limit: query.limit + 1,
    offset: query.offset,
  });
  const page = found.slice(0, query.limit);
  return {
    threads: page.map(toCopilotThread),
    nextCursor: found.length > query.limit ? String(query.offset + query.limit) : null,
  };
}

/** A caller's thread of `agent` by the client's threadId; 404 for any other (not theirs, or none). */
export async function ownedThread(
  threads: ThreadService,
  who: Principal,
  clientThreadId: string,
  agent: string,
): Promise<ThreadRecord> {
  const thread = await threads.findReachable(who, aclThreadId(clientThreadId, who.id));
  const tag = thread?.metadata[OWNER_KEY] as Partial<Owner> | undefined;
  if (!thread || thread.hidden || tag?.agent !== agent) {
    throw notFound("thread", clientThreadId);
  }
  return thread;
}

export async function renameThread(
  threads: ThreadService,
  thread: ThreadRecord,
  name: string,
): Promise<ThreadRecord> {
  const current = (thread.metadata[THREAD_KEY] ?? {}) as Record<string, unknown>;
  return threads.mergeMetadata(thread, { [THREAD_KEY]: { ...current, name } });
}

export function setArchived(
  threads: ThreadService,
  thread: ThreadRecord,
  archived: boolean,
): Promise<ThreadRecord> {
  return threads.mergeMetadata(thread, { [ARCHIVED_KEY]: archived });
}

export async function deleteThread(threads: ThreadService, thread: ThreadRecord): Promise<void> {
  if (!(await threads.deleteIfIdle(thread))) {
    throw conflict(`thread ${clientIdOf(thread)} is busy: stop its run before deleting it`);
  }
}

export function toCopilotThread(thread: ThreadRecord): CopilotThread {
  const owner = (thread.metadata[OWNER_KEY] ?? {}) as Partial<Owner>;
  const view = (thread.metadata[THREAD_KEY] ?? {}) as { name?: unknown };
  return {
    id: clientIdOf(thread),
    organizationId: "",
    agentId: typeof owner.agent === "string" ? owner.agent : "",
    createdById: typeof owner.user === "string" ? owner.user : "",
    name: typeof view.name === "string" ? view.name : null,
    archived: thread.metadata[ARCHIVED_KEY] === true,
    createdAt: thread.created_at,
    updatedAt: thread.updated_at,
  };
}

function clientIdOf(thread: ThreadRecord): string {
  const id = (thread.metadata[THREAD_KEY] as { id?: unknown } | undefined)?.id;
  return typeof id === "string" ? id : thread.thread_id;
}
