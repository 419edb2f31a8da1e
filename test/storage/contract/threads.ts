import { describe, expect, it } from "vitest";
import type { ThreadSearch } from "../../../src/storage/types.js";
import {
  expectDomainError,
  ISO_UTC_MS,
  id,
  makeRun,
  makeThread,
  messages,
  type StorageFactory,
  tick,
  trickyJson,
  useStorage,
} from "./helpers.js";

const page = (search: Partial<ThreadSearch> = {}): ThreadSearch => ({
  limit: 100,
  offset: 0,
  ...search,
});

export function describeThreads(factory: StorageFactory): void {
  const context = useStorage(factory);

  describe("lifecycle", () => {
    it("answers ping while open and opens idempotently", async () => {
      const { storage } = context;
      expect(typeof storage.kind).toBe("string");
      expect(await storage.ping()).toBe(true);
      await storage.open();
      expect(await storage.ping()).toBe(true);
    });
  });

  describe("createThread", () => {
    it("creates a thread with the status given; an existing thread keeps its own", async () => {
      const threadId = id();
      const { thread } = await context.storage.createThread({
        thread_id: threadId,
        metadata: {},
        hidden: true,
        status: "busy",
        if_exists: "raise",
      });
      expect(thread.status).toBe("busy");
      expect((await context.storage.getThread(threadId))?.status).toBe("busy");
      await context.storage.setThreadStatus(threadId, "idle");
      const again = await context.storage.createThread({
        thread_id: threadId,
        metadata: {},
        status: "busy",
        if_exists: "do_nothing",
      });
      expect(again).toMatchObject({ created: false, thread: { status: "idle" } });
    });

    it("creates an idle thread without values, messages or checkpoint", async () => {
      const threadId = id();
      const { thread, created } = await context.storage.createThread({
        thread_id: threadId,
        metadata: { owner: "ann" },
        if_exists: "raise",
      });
      expect(created).toBe(true);
      expect(thread).toEqual({
        thread_id: threadId,
        created_at: expect.stringMatching(ISO_UTC_MS),
        updated_at: thread.created_at,
        metadata: { owner: "ann" },
        status: "idle",
        values: null,
        messages: null,
        checkpoint_id: null,
        hidden: false,
        principal: null,
      });
      expect(await context.storage.getThread(threadId)).toEqual(thread);
    });

    it("raises a conflict for an existing id with if_exists raise", async () => {
      const thread = await makeThread(context.storage);
      await expectDomainError(
        context.storage.createThread({
          thread_id: thread.thread_id,
          metadata: {},
          if_exists: "raise",
        }),
        "conflict",
      );
    });

    it("returns the existing thread untouched with if_exists do_nothing", async () => {
      const thread = await makeThread(context.storage, { v: 1 });
      const again = await context.storage.createThread({
        thread_id: thread.thread_id,
        metadata: { v: 2 },
        if_exists: "do_nothing",
      });
      expect(again).toEqual({ thread, created: false });
    });

    it("round-trips awkward metadata exactly, key order included", async () => {
      const metadata = trickyJson();
      const thread = await makeThread(context.storage, metadata);
      const read = await context.storage.getThread(thread.thread_id);
      expect(read?.metadata).toEqual(metadata);
      expect(JSON.stringify(read?.metadata)).toBe(JSON.stringify(metadata));
    });

    it("keeps __proto__ and constructor as ordinary metadata keys", async () => {
      const metadata = JSON.parse('{"__proto__": {"polluted": true}, "constructor": "c"}');
      const thread = await makeThread(context.storage, metadata);
      const read = await context.storage.getThread(thread.thread_id);
      expect(Object.keys(read?.metadata ?? {})).toEqual(["__proto__", "constructor"]);
      expect(JSON.stringify(read?.metadata)).toBe(JSON.stringify(metadata));
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it("stores hidden threads and returns null for unknown ids", async () => {
      const hidden = await makeThread(context.storage, {}, true);
      expect(hidden.hidden).toBe(true);
      expect(await context.storage.getThread(id())).toBeNull();
    });
  });

  describe("mergeThreadMetadata", () => {
    it("merges shallowly: nested objects are replaced, other keys kept", async () => {
      const thread = await makeThread(context.storage, { a: 1, nested: { x: 1, y: 2 } });
      await tick();
      const merged = await context.storage.mergeThreadMetadata(thread.thread_id, {
        nested: { x: 9 },
        b: null,
      });
      expect(merged.metadata).toEqual({ a: 1, nested: { x: 9 }, b: null });
      expect(merged.updated_at > thread.updated_at).toBe(true);
      expect(merged.created_at).toBe(thread.created_at);
    });

    it("makes the merged values searchable and the old ones not", async () => {
      const thread = await makeThread(context.storage, { stage: "draft" });
      await context.storage.mergeThreadMetadata(thread.thread_id, { stage: "final", extra: [1] });
      const ids = async (metadata: Record<string, unknown>) =>
        (await context.storage.searchThreads(page({ metadata }))).map((t) => t.thread_id);
      expect(await ids({ stage: "draft" })).toEqual([]);
      expect(await ids({ stage: "final", extra: [1] })).toEqual([thread.thread_id]);
    });

    it("fails with not_found for an unknown thread", async () => {
      await expectDomainError(context.storage.mergeThreadMetadata(id(), { a: 1 }), "not_found");
    });
  });

  describe("setThreadStatus", () => {
    it("sets the status", async () => {
      const thread = await makeThread(context.storage);
      await context.storage.setThreadStatus(thread.thread_id, "interrupted");
      expect((await context.storage.getThread(thread.thread_id))?.status).toBe("interrupted");
    });

    it("fails with not_found for an unknown thread", async () => {
      await expectDomainError(context.storage.setThreadStatus(id(), "busy"), "not_found");
    });
  });

  describe("searchThreads", () => {
    it("lists visible threads newest first, with limit and offset", async () => {
      const created = [];
      for (let i = 0; i < 5; i++) {
        created.push(await makeThread(context.storage, { i }));
        await tick();
      }
      await makeThread(context.storage, { i: 99 }, true);
      const newestFirst = created.map((t) => t.thread_id).reverse();
      const all = await context.storage.searchThreads(page());
      expect(all.map((t) => t.thread_id)).toEqual(newestFirst);
      const second = await context.storage.searchThreads(page({ limit: 2, offset: 2 }));
      expect(second.map((t) => t.thread_id)).toEqual(newestFirst.slice(2, 4));
      expect(await context.storage.searchThreads(page({ offset: 5 }))).toEqual([]);
    });

    it("excludes hidden threads even when their metadata matches", async () => {
      await makeThread(context.storage, { kind: "x" }, true);
      const visible = await makeThread(context.storage, { kind: "x" });
      const found = await context.storage.searchThreads(page({ metadata: { kind: "x" } }));
      expect(found.map((t) => t.thread_id)).toEqual([visible.thread_id]);
    });

    it("filters by status", async () => {
      const a = await makeThread(context.storage);
      const b = await makeThread(context.storage);
      await context.storage.setThreadStatus(b.thread_id, "error");
      const errors = await context.storage.searchThreads(page({ status: "error" }));
      expect(errors.map((t) => t.thread_id)).toEqual([b.thread_id]);
      const idle = await context.storage.searchThreads(page({ status: "idle" }));
      expect(idle.map((t) => t.thread_id)).toEqual([a.thread_id]);
    });

    it("matches metadata by containment with deep-equal values", async () => {
      const match = await makeThread(context.storage, {
        user: "ann",
        config: { model: "m1", params: { t: 0.5, stop: ["a", "b"] } },
        tags: ["x", "y"],
        none: null,
        n: 1,
      });
      await makeThread(context.storage, { user: "bob", config: { model: "m1" }, n: 1.5 });
      const ids = async (metadata: Record<string, unknown>) =>
        (await context.storage.searchThreads(page({ metadata }))).map((t) => t.thread_id);

      expect(await ids({})).toHaveLength(2);
      expect(await ids({ user: "ann" })).toEqual([match.thread_id]);
      expect(await ids({ user: "ann", n: 1 })).toEqual([match.thread_id]);
      expect(await ids({ user: "ann", n: 2 })).toEqual([]);
      expect(await ids({ n: "1" })).toEqual([]);
      // Nested objects compare whole, in any key order; arrays compare in order.
      expect(await ids({ config: { params: { stop: ["a", "b"], t: 0.5 }, model: "m1" } })).toEqual([
        match.thread_id,
      ]);
      expect(await ids({ config: { model: "m1" } })).toHaveLength(1);
      expect(await ids({ tags: ["x", "y"] })).toEqual([match.thread_id]);
      expect(await ids({ tags: ["y", "x"] })).toEqual([]);
      expect(await ids({ tags: "x" })).toEqual([]);
      // null matches a null value, not a missing key.
      expect(await ids({ none: null })).toEqual([match.thread_id]);
      expect(await ids({ missing: null })).toEqual([]);
    });

    it("treats keys with dots, quotes, and prototype names as plain keys", async () => {
      const metadata = JSON.parse(
        '{"a.b": 1, "it\'s": "yes", "\\"q\\"": [1], "__proto__": {"p": 1}, "constructor": "c", "$.x": 2, "a": {"b": 3}}',
      );
      const tricky = await makeThread(context.storage, metadata);
      await makeThread(context.storage, { a: { b: 1 }, plain: true });
      const ids = async (json: string) =>
        (await context.storage.searchThreads(page({ metadata: JSON.parse(json) }))).map(
          (t) => t.thread_id,
        );
      for (const filter of [
        '{"a.b": 1}',
        '{"it\'s": "yes"}',
        '{"\\"q\\"": [1]}',
        '{"__proto__": {"p": 1}}',
        '{"constructor": "c"}',
        '{"$.x": 2}',
        '{"a": {"b": 3}}',
      ]) {
        expect(await ids(filter), filter).toEqual([tricky.thread_id]);
      }
      expect(await ids('{"a.b": 2}')).toEqual([]);
      expect(await ids('{"constructor": {}}')).toEqual([]);
      expect(await ids('{"__proto__": {}}')).toEqual([]);
      expect(await ids('{"x\' OR 1=1 --": 1}')).toEqual([]);
      // A thread without those keys is not matched by a prototype-looking filter.
      expect(await ids('{"plain": true, "constructor": "c"}')).toEqual([]);
    });

    it("matches values by containment on the current values", async () => {
      const thread = await makeThread(context.storage);
      await context.storage.addCheckpoint(thread.thread_id, {
        checkpoint_id: id(),
        values: { topic: "cats", meta: { lang: "en", n: [1, 2] }, "a.b": 1 },
        messages: null,
        metadata: {},
      });
      const other = await makeThread(context.storage);
      await context.storage.addCheckpoint(other.thread_id, {
        checkpoint_id: id(),
        values: ["not", "an", "object"],
        messages: null,
        metadata: {},
      });
      const ids = async (values: Record<string, unknown>, status?: ThreadSearch["status"]) =>
        (await context.storage.searchThreads(page({ values, status }))).map((t) => t.thread_id);
      expect(await ids({ topic: "cats" })).toEqual([thread.thread_id]);
      expect(await ids({ meta: { n: [1, 2], lang: "en" } })).toEqual([thread.thread_id]);
      expect(await ids({ "a.b": 1 })).toEqual([thread.thread_id]);
      expect(await ids({ topic: "dogs" })).toEqual([]);
      expect(await ids({ topic: "cats" }, "busy")).toEqual([]);
      expect(await ids({})).toHaveLength(2);
    });

    it("combines metadata, values and status filters", async () => {
      const a = await makeThread(context.storage, { team: "t1" });
      const b = await makeThread(context.storage, { team: "t1" });
      await makeThread(context.storage, { team: "t2" });
      await context.storage.addCheckpoint(b.thread_id, {
        checkpoint_id: id(),
        values: { done: true },
        messages: null,
        metadata: {},
      });
      await context.storage.setThreadStatus(a.thread_id, "busy");
      const found = await context.storage.searchThreads(
        page({ metadata: { team: "t1" }, values: { done: true }, status: "idle" }),
      );
      expect(found.map((t) => t.thread_id)).toEqual([b.thread_id]);
    });
  });

  describe("deleteThread", () => {
    it("deletes the thread and its checkpoints", async () => {
      const thread = await makeThread(context.storage, { gone: true });
      const checkpointId = id();
      await context.storage.addCheckpoint(thread.thread_id, {
        checkpoint_id: checkpointId,
        values: { a: 1 },
        messages: null,
        metadata: {},
      });
      await context.storage.deleteThread(thread.thread_id);
      expect(await context.storage.getThread(thread.thread_id)).toBeNull();
      expect(await context.storage.getCheckpoint(thread.thread_id, checkpointId)).toBeNull();
      expect(await context.storage.searchThreads(page({ metadata: { gone: true } }))).toEqual([]);
      // The id is free again.
      const again = await context.storage.createThread({
        thread_id: thread.thread_id,
        metadata: {},
        if_exists: "raise",
      });
      expect(again.created).toBe(true);
      expect(again.thread.checkpoint_id).toBeNull();
    });

    it("keeps the runs readable with thread_id null", async () => {
      const thread = await makeThread(context.storage, {}, true);
      const run = await makeRun(context.storage, thread.thread_id, { kind: "stateless" });
      await context.storage.updateRun(run.run_id, { status: "success" });
      await context.storage.deleteThread(thread.thread_id);
      const read = await context.storage.getRun(run.run_id);
      expect(read?.thread_id).toBeNull();
      expect(read?.status).toBe("success");
    });

    it("refuses with a conflict while a run on it is pending", async () => {
      const thread = await makeThread(context.storage);
      await makeRun(context.storage, thread.thread_id);
      await expectDomainError(context.storage.deleteThread(thread.thread_id), "conflict");
      expect(await context.storage.getThread(thread.thread_id)).not.toBeNull();
    });

    it("fails with not_found for an unknown thread", async () => {
      await expectDomainError(context.storage.deleteThread(id()), "not_found");
    });
  });

  describe("copyThread", () => {
    it("copies metadata, values, messages and every checkpoint under new ids", async () => {
      const source = await makeThread(context.storage, { owner: "ann", nested: { k: [1] } });
      const first = await context.storage.addCheckpoint(source.thread_id, {
        checkpoint_id: id(),
        values: { step: 1 },
        messages: messages("hi"),
        metadata: { source: "run", step: "a" },
      });
      const second = await context.storage.addCheckpoint(source.thread_id, {
        checkpoint_id: id(),
        values: { step: 2 },
        messages: messages("hi", "hello"),
        metadata: { source: "step", step: "b" },
      });
      // A branch from the first checkpoint, then back to the main line as current.
      const branch = await context.storage.addCheckpoint(source.thread_id, {
        checkpoint_id: id(),
        values: { step: "branch" },
        messages: null,
        metadata: { source: "branch" },
        parent_checkpoint_id: first.checkpoint_id,
      });
      await context.storage.restoreCheckpoint(source.thread_id, second.checkpoint_id);
      await context.storage.setThreadStatus(source.thread_id, "interrupted");
      const before = await context.storage.getThread(source.thread_id);

      const copyId = id();
      const copy = await context.storage.copyThread(source.thread_id, copyId);
      expect(copy.thread_id).toBe(copyId);
      expect(copy.metadata).toEqual(source.metadata);
      expect(copy.values).toEqual({ step: 2 });
      expect(copy.messages).toEqual(messages("hi", "hello"));
      expect(copy.hidden).toBe(false);
      expect(copy.status).toBe("idle");

      const originals = await context.storage.listCheckpoints(source.thread_id, { limit: 10 });
      const copies = await context.storage.listCheckpoints(copyId, { limit: 10 });
      expect(copies).toHaveLength(3);
      expect(copies.map((c) => c.values)).toEqual(originals.map((c) => c.values));
      expect(copies.map((c) => c.metadata)).toEqual(originals.map((c) => c.metadata));
      expect(copies.map((c) => c.created_at)).toEqual(originals.map((c) => c.created_at));
      const originalIds = new Set(originals.map((c) => c.checkpoint_id));
      for (const c of copies) {
        expect(originalIds.has(c.checkpoint_id)).toBe(false);
        expect(c.thread_id).toBe(copyId);
      }
      // Parent links point inside the copy, mirroring the original tree.
      const [copyBranch, copySecond, copyFirst] = copies;
      expect(copyFirst?.parent_checkpoint_id).toBeNull();
      expect(copySecond?.parent_checkpoint_id).toBe(copyFirst?.checkpoint_id);
      expect(copyBranch?.parent_checkpoint_id).toBe(copyFirst?.checkpoint_id);
      expect(originals[0]?.checkpoint_id).toBe(branch.checkpoint_id);
      // The copy's current checkpoint is the copy of the source's current one.
      expect(copy.checkpoint_id).toBe(copySecond?.checkpoint_id);

      expect(await context.storage.getThread(source.thread_id)).toEqual(before);
      const both = await context.storage.searchThreads(page({ metadata: { owner: "ann" } }));
      expect(both.map((t) => t.thread_id).sort()).toEqual([source.thread_id, copyId].sort());
    });

    it("copies a thread without checkpoints", async () => {
      const source = await makeThread(context.storage, { a: 1 });
      const copy = await context.storage.copyThread(source.thread_id, id());
      expect(copy.checkpoint_id).toBeNull();
      expect(copy.values).toBeNull();
      expect(await context.storage.listCheckpoints(copy.thread_id, { limit: 10 })).toEqual([]);
    });

    it("fails with not_found for an unknown source and conflict for a taken id", async () => {
      const a = await makeThread(context.storage);
      const b = await makeThread(context.storage);
      await expectDomainError(context.storage.copyThread(id(), id()), "not_found");
      await expectDomainError(context.storage.copyThread(a.thread_id, b.thread_id), "conflict");
    });
  });
}
