import { describe, expect, it } from "vitest";
import type { NewCheckpoint } from "../../../src/storage/types.js";
import {
  expectDomainError,
  ISO_UTC_MS,
  id,
  makeThread,
  messages,
  type StorageFactory,
  tick,
  trickyJson,
  useStorage,
} from "./helpers.js";

const checkpoint = (values: unknown, extra: Partial<NewCheckpoint> = {}): NewCheckpoint => ({
  checkpoint_id: id(),
  values,
  messages: null,
  metadata: { source: "run" },
  ...extra,
});

export function describeCheckpoints(factory: StorageFactory): void {
  const context = useStorage(factory);

  describe("addCheckpoint", () => {
    it("appends a checkpoint and makes it the thread's current state", async () => {
      const thread = await makeThread(context.storage);
      await tick();
      const msgs = messages("hello", "hi there");
      const added = await context.storage.addCheckpoint(thread.thread_id, {
        checkpoint_id: "cp-1",
        values: { count: 1 },
        messages: msgs,
        metadata: { run_id: "r1", step: "agent", source: "step" },
      });
      expect(added).toEqual({
        checkpoint_id: "cp-1",
        thread_id: thread.thread_id,
        parent_checkpoint_id: null,
        created_at: expect.stringMatching(ISO_UTC_MS),
        values: { count: 1 },
        messages: msgs,
        metadata: { run_id: "r1", step: "agent", source: "step" },
      });
      const updated = await context.storage.getThread(thread.thread_id);
      expect(updated?.values).toEqual({ count: 1 });
      expect(updated?.messages).toEqual(msgs);
      expect(updated?.checkpoint_id).toBe("cp-1");
      expect(updated && updated.updated_at > thread.updated_at).toBe(true);
    });

    it("links each checkpoint to the previous current one by default", async () => {
      const thread = await makeThread(context.storage);
      const a = await context.storage.addCheckpoint(thread.thread_id, checkpoint(1));
      const b = await context.storage.addCheckpoint(thread.thread_id, checkpoint(2));
      expect(b.parent_checkpoint_id).toBe(a.checkpoint_id);
    });

    it("takes an explicit parent (branch) or an explicit null parent", async () => {
      const thread = await makeThread(context.storage);
      const a = await context.storage.addCheckpoint(thread.thread_id, checkpoint(1));
      await context.storage.addCheckpoint(thread.thread_id, checkpoint(2));
      const branch = await context.storage.addCheckpoint(
        thread.thread_id,
        checkpoint(3, { parent_checkpoint_id: a.checkpoint_id }),
      );
      expect(branch.parent_checkpoint_id).toBe(a.checkpoint_id);
      const root = await context.storage.addCheckpoint(
        thread.thread_id,
        checkpoint(4, { parent_checkpoint_id: null }),
      );
      expect(root.parent_checkpoint_id).toBeNull();
    });

    it("round-trips any JSON values: objects, scalars, arrays, null", async () => {
      const thread = await makeThread(context.storage);
      for (const values of [trickyJson(), "text", 42, false, [1, [2, { x: null }]], null, {}]) {
        const added = await context.storage.addCheckpoint(thread.thread_id, checkpoint(values));
        const read = await context.storage.getCheckpoint(thread.thread_id, added.checkpoint_id);
        expect(read?.values).toEqual(values);
        expect(JSON.stringify(read?.values)).toBe(JSON.stringify(values));
        expect((await context.storage.getThread(thread.thread_id))?.values).toEqual(values);
      }
    });

    it("keeps messages with open fields and empty message lists", async () => {
      const thread = await makeThread(context.storage);
      const msgs = [
        { role: "assistant", content: "", id: "a1", toolCalls: [{ id: "c1", type: "function" }] },
        { role: "tool", content: [{ type: "text", text: "ok" }], toolCallId: "c1" },
      ];
      const added = await context.storage.addCheckpoint(
        thread.thread_id,
        checkpoint(null, { messages: msgs }),
      );
      expect(added.messages).toEqual(msgs);
      const empty = await context.storage.addCheckpoint(
        thread.thread_id,
        checkpoint(null, { messages: [] }),
      );
      expect(empty.messages).toEqual([]);
    });

    it("fails with not_found for an unknown thread or parent", async () => {
      const thread = await makeThread(context.storage);
      await expectDomainError(context.storage.addCheckpoint(id(), checkpoint(1)), "not_found");
      await expectDomainError(
        context.storage.addCheckpoint(
          thread.thread_id,
          checkpoint(1, { parent_checkpoint_id: id() }),
        ),
        "not_found",
      );
    });

    it("does not accept a parent from another thread", async () => {
      const a = await makeThread(context.storage);
      const b = await makeThread(context.storage);
      const foreign = await context.storage.addCheckpoint(a.thread_id, checkpoint(1));
      await expectDomainError(
        context.storage.addCheckpoint(
          b.thread_id,
          checkpoint(1, { parent_checkpoint_id: foreign.checkpoint_id }),
        ),
        "not_found",
      );
    });

    it("raises a conflict for a duplicate checkpoint id and leaves the thread as it was", async () => {
      const thread = await makeThread(context.storage);
      const first = await context.storage.addCheckpoint(thread.thread_id, checkpoint({ v: 1 }));
      await expectDomainError(
        context.storage.addCheckpoint(
          thread.thread_id,
          checkpoint({ v: 2 }, { checkpoint_id: first.checkpoint_id }),
        ),
        "conflict",
      );
      const read = await context.storage.getThread(thread.thread_id);
      expect(read?.values).toEqual({ v: 1 });
    });
  });

  describe("getCheckpoint", () => {
    it("returns null for an unknown id or a checkpoint of another thread", async () => {
      const a = await makeThread(context.storage);
      const b = await makeThread(context.storage);
      const cp = await context.storage.addCheckpoint(a.thread_id, checkpoint(1));
      expect(await context.storage.getCheckpoint(a.thread_id, cp.checkpoint_id)).toEqual(cp);
      expect(await context.storage.getCheckpoint(b.thread_id, cp.checkpoint_id)).toBeNull();
      expect(await context.storage.getCheckpoint(a.thread_id, id())).toBeNull();
    });
  });

  describe("listCheckpoints", () => {
    it("lists newest first, even within one millisecond, and honours limit and before", async () => {
      const thread = await makeThread(context.storage);
      const added = [];
      for (let i = 0; i < 6; i++) {
        added.push(await context.storage.addCheckpoint(thread.thread_id, checkpoint(i)));
      }
      const newestFirst = added.map((c) => c.checkpoint_id).reverse();
      const ids = async (options: { limit: number; before?: string }) =>
        (await context.storage.listCheckpoints(thread.thread_id, options)).map(
          (c) => c.checkpoint_id,
        );
      expect(await ids({ limit: 10 })).toEqual(newestFirst);
      expect(await ids({ limit: 2 })).toEqual(newestFirst.slice(0, 2));
      expect(await ids({ limit: 2, before: newestFirst[1] })).toEqual(newestFirst.slice(2, 4));
      expect(await ids({ limit: 10, before: newestFirst[5] })).toEqual([]);
    });

    it("lists only the thread's own checkpoints", async () => {
      const a = await makeThread(context.storage);
      const b = await makeThread(context.storage);
      await context.storage.addCheckpoint(a.thread_id, checkpoint(1));
      const own = await context.storage.addCheckpoint(b.thread_id, checkpoint(2));
      await context.storage.addCheckpoint(a.thread_id, checkpoint(3));
      const list = await context.storage.listCheckpoints(b.thread_id, { limit: 10 });
      expect(list).toEqual([own]);
    });

    it("returns an empty list for a thread without checkpoints", async () => {
      const thread = await makeThread(context.storage);
      expect(await context.storage.listCheckpoints(thread.thread_id, { limit: 10 })).toEqual([]);
    });

    it("fails with not_found for an unknown thread or before id", async () => {
      const thread = await makeThread(context.storage);
      await expectDomainError(context.storage.listCheckpoints(id(), { limit: 10 }), "not_found");
      await expectDomainError(
        context.storage.listCheckpoints(thread.thread_id, { limit: 10, before: id() }),
        "not_found",
      );
    });
  });

  describe("restoreCheckpoint", () => {
    it("makes an older checkpoint current again and keeps the history", async () => {
      const thread = await makeThread(context.storage);
      const a = await context.storage.addCheckpoint(
        thread.thread_id,
        checkpoint({ v: "a" }, { messages: messages("a") }),
      );
      await context.storage.addCheckpoint(thread.thread_id, checkpoint({ v: "b" }));
      await context.storage.restoreCheckpoint(thread.thread_id, a.checkpoint_id);
      const restored = await context.storage.getThread(thread.thread_id);
      expect(restored?.values).toEqual({ v: "a" });
      expect(restored?.messages).toEqual(messages("a"));
      expect(restored?.checkpoint_id).toBe(a.checkpoint_id);
      expect(await context.storage.listCheckpoints(thread.thread_id, { limit: 10 })).toHaveLength(
        2,
      );
      // The next checkpoint continues from the restored one.
      const next = await context.storage.addCheckpoint(thread.thread_id, checkpoint({ v: "c" }));
      expect(next.parent_checkpoint_id).toBe(a.checkpoint_id);
    });

    it("deletes the checkpoints a discarded run wrote, and only those", async () => {
      const thread = await makeThread(context.storage);
      const a = await context.storage.addCheckpoint(thread.thread_id, checkpoint({ v: "a" }));
      await context.storage.addCheckpoint(thread.thread_id, {
        ...checkpoint({ v: "b" }),
        metadata: { run_id: "run-1", source: "step" },
      });
      await context.storage.addCheckpoint(thread.thread_id, {
        ...checkpoint({ v: "c" }),
        metadata: { run_id: "run-1", source: "run" },
      });
      await context.storage.restoreCheckpoint(thread.thread_id, a.checkpoint_id, {
        discardRunId: "run-1",
      });
      const history = await context.storage.listCheckpoints(thread.thread_id, { limit: 10 });
      expect(history.map((c) => c.values)).toEqual([{ v: "a" }]);
      expect((await context.storage.getThread(thread.thread_id))?.values).toEqual({ v: "a" });
    });

    it("restores to no checkpoint at all with null", async () => {
      const thread = await makeThread(context.storage);
      await context.storage.addCheckpoint(thread.thread_id, checkpoint({ v: 1 }, { messages: [] }));
      await context.storage.restoreCheckpoint(thread.thread_id, null);
      const read = await context.storage.getThread(thread.thread_id);
      expect(read?.values).toBeNull();
      expect(read?.messages).toBeNull();
      expect(read?.checkpoint_id).toBeNull();
    });

    it("fails with not_found for an unknown thread or checkpoint", async () => {
      const a = await makeThread(context.storage);
      const b = await makeThread(context.storage);
      const foreign = await context.storage.addCheckpoint(b.thread_id, checkpoint(1));
      await expectDomainError(context.storage.restoreCheckpoint(id(), null), "not_found");
      await expectDomainError(context.storage.restoreCheckpoint(a.thread_id, id()), "not_found");
      await expectDomainError(
        context.storage.restoreCheckpoint(a.thread_id, foreign.checkpoint_id),
        "not_found",
      );
    });
  });
}
