import { ownerFilter, ownerOf, type Principal, reaches } from "../auth/principal.js";
import type {
  AcpMessage,
  Storage,
  ThreadRecord,
  ThreadSearch,
  ThreadStatus,
} from "../storage/types.js";
import { conflict, notFound } from "../util/errors.js";
import { newId } from "../util/ids.js";

export interface ThreadPatchInput {
  metadata?: Record<string, unknown>;
  values?: Record<string, unknown>;
  messages?: AcpMessage[];
  checkpoint?: { checkpoint_id: string };
}

/**
 * Thread operations that are more than one storage call: patching state writes a checkpoint,
 * patching with a checkpoint branches from it. HTTP-free; throws coded domain errors.
 * Every operation acts as a principal: a thread it may not reach is `not_found`, and searches
 * return its own threads only.
 */
export class ThreadService {
  constructor(private readonly storage: Storage) {}

  async create(
    who: Principal,
    input: {
      thread_id?: string;
      metadata?: Record<string, unknown>;
      if_exists?: "raise" | "do_nothing";
    },
  ): Promise<ThreadRecord> {
    const threadId = input.thread_id ?? newId();
    const { thread, created } = await this.storage.createThread({
      thread_id: threadId,
      metadata: input.metadata ?? {},
      if_exists: input.if_exists ?? "raise",
      principal: ownerOf(who),
    });
    // Someone else's thread under that id: ids are global, so this is a conflict, and the
    // answer says nothing of the thread itself.
    if (!created && !reaches(who, thread.principal)) {
      throw conflict(`thread ${threadId} already exists`);
    }
    return thread;
  }

  async get(who: Principal, threadId: string): Promise<ThreadRecord> {
    const thread = await this.storage.getThread(threadId);
    if (!thread || thread.hidden || !reaches(who, thread.principal)) {
      throw notFound("thread", threadId);
    }
    return thread;
  }

  search(who: Principal, search: Partial<ThreadSearch>): Promise<ThreadRecord[]> {
    const query: ThreadSearch = {
      limit: search.limit ?? 10,
      offset: search.offset ?? 0,
      principal: ownerFilter(who),
    };
    if (search.metadata) query.metadata = search.metadata;
    if (search.values) query.values = search.values;
    if (search.status) query.status = search.status as ThreadStatus;
    return this.storage.searchThreads(query);
  }

  async patch(who: Principal, threadId: string, patch: ThreadPatchInput): Promise<ThreadRecord> {
    let thread = await this.get(who, threadId);
    if (patch.metadata) thread = await this.storage.mergeThreadMetadata(threadId, patch.metadata);

    const changesState =
      patch.values !== undefined || patch.messages !== undefined || patch.checkpoint !== undefined;
    if (!changesState) return thread;

    if ((await this.storage.pendingRunsOfThread(threadId)).length > 0) {
      throw conflict(`thread ${threadId} is busy: a run is pending`);
    }
    let base = { values: thread.values, messages: thread.messages, id: thread.checkpoint_id };
    if (patch.checkpoint) {
      const from = await this.storage.getCheckpoint(threadId, patch.checkpoint.checkpoint_id);
      if (!from) throw notFound("checkpoint", patch.checkpoint.checkpoint_id);
      base = { values: from.values, messages: from.messages, id: from.checkpoint_id };
    }
    await this.storage.addCheckpoint(threadId, {
      checkpoint_id: newId(),
      values: patch.values ?? base.values,
      messages: patch.messages ?? base.messages,
      parent_checkpoint_id: base.id,
      metadata: {
        source: patch.values !== undefined || patch.messages !== undefined ? "patch" : "branch",
        ...(patch.checkpoint ? { branched_from: patch.checkpoint.checkpoint_id } : {}),
      },
    });
    return this.get(who, threadId);
  }

  async delete(who: Principal, threadId: string): Promise<void> {
    await this.get(who, threadId);
    await this.storage.deleteThread(threadId);
  }

  /** The copy belongs to the caller, whoever owned the original (an admin's copy is its own). */
  async copy(who: Principal, threadId: string): Promise<ThreadRecord> {
    await this.get(who, threadId);
    return this.storage.copyThread(threadId, newId(), ownerOf(who));
  }

  async history(who: Principal, threadId: string, options: { limit: number; before?: string }) {
    await this.get(who, threadId);
    if (options.before !== undefined) {
      const anchor = await this.storage.getCheckpoint(threadId, options.before);
      if (!anchor) throw notFound("checkpoint", options.before);
    }
    return this.storage.listCheckpoints(threadId, options);
  }

  /** One checkpoint of a thread the caller may reach; `not_found` for either missing. */
  async checkpoint(who: Principal, threadId: string, checkpointId: string) {
    await this.get(who, threadId);
    const checkpoint = await this.storage.getCheckpoint(threadId, checkpointId);
    if (!checkpoint) throw notFound("checkpoint", checkpointId);
    return checkpoint;
  }

  // For the faces that map their own thread ids onto ACP threads (AG-UI, CopilotKit).

  /** The thread when `who` may reach it, hidden or not; undefined for another's or none. */
  async findReachable(who: Principal, threadId: string): Promise<ThreadRecord | undefined> {
    const thread = await this.storage.getThread(threadId);
    return thread && reaches(who, thread.principal) ? thread : undefined;
  }

  /**
   * Whether a thread of that id exists that `who` may not use as its own: another caller's, or
   * a stateless run's hidden thread. (The faces then name a thread of the caller's own instead.)
   */
  async heldByAnother(who: Principal, threadId: string): Promise<boolean> {
    const thread = await this.storage.getThread(threadId);
    return thread !== null && (thread.hidden || !reaches(who, thread.principal));
  }

  /** Merges metadata into a thread read through this service (so one its caller may reach). */
  mergeMetadata(thread: ThreadRecord, metadata: Record<string, unknown>): Promise<ThreadRecord> {
    return this.storage.mergeThreadMetadata(thread.thread_id, metadata);
  }

  /** Deletes a thread read through this service unless a run is in progress on it. */
  async deleteIfIdle(thread: ThreadRecord): Promise<boolean> {
    if ((await this.storage.pendingRunsOfThread(thread.thread_id)).length > 0) return false;
    await this.storage.deleteThread(thread.thread_id);
    return true;
  }
}
