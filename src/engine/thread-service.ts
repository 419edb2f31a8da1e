import { conflict, notFound } from "../errors.js";
import { newId } from "../ids.js";
import type {
  AcpMessage,
  Storage,
  ThreadRecord,
  ThreadSearch,
  ThreadStatus,
} from "../storage/types.js";

export interface ThreadPatchInput {
  metadata?: Record<string, unknown>;
  values?: Record<string, unknown>;
  messages?: AcpMessage[];
  checkpoint?: { checkpoint_id: string };
}

/**
 * Thread operations that are more than one storage call: patching state writes a checkpoint,
 * patching with a checkpoint branches from it. HTTP-free; throws coded domain errors.
 */
export class ThreadService {
  constructor(private readonly storage: Storage) {}

  async create(input: {
    thread_id?: string;
    metadata?: Record<string, unknown>;
    if_exists?: "raise" | "do_nothing";
  }): Promise<ThreadRecord> {
    const { thread } = await this.storage.createThread({
      thread_id: input.thread_id ?? newId(),
      metadata: input.metadata ?? {},
      if_exists: input.if_exists ?? "raise",
    });
    return thread;
  }

  async get(threadId: string): Promise<ThreadRecord> {
    const thread = await this.storage.getThread(threadId);
    if (!thread || thread.hidden) throw notFound("thread", threadId);
    return thread;
  }

  search(search: Partial<ThreadSearch>): Promise<ThreadRecord[]> {
    const query: ThreadSearch = { limit: search.limit ?? 10, offset: search.offset ?? 0 };
    if (search.metadata) query.metadata = search.metadata;
    if (search.values) query.values = search.values;
    if (search.status) query.status = search.status as ThreadStatus;
    return this.storage.searchThreads(query);
  }

  async patch(threadId: string, patch: ThreadPatchInput): Promise<ThreadRecord> {
    let thread = await this.get(threadId);
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
    return this.get(threadId);
  }

  async delete(threadId: string): Promise<void> {
    await this.get(threadId);
    await this.storage.deleteThread(threadId);
  }

  async copy(threadId: string): Promise<ThreadRecord> {
    await this.get(threadId);
    return this.storage.copyThread(threadId, newId());
  }

  async history(threadId: string, options: { limit: number; before?: string }) {
    await this.get(threadId);
    if (options.before !== undefined) {
      const anchor = await this.storage.getCheckpoint(threadId, options.before);
      if (!anchor) throw notFound("checkpoint", options.before);
    }
    return this.storage.listCheckpoints(threadId, options);
  }
}
