import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStorage } from "../../src/storage/index.js";
import { build, type TestApp } from "../helpers/app.js";

type Thread = {
  thread_id: string;
  metadata: Record<string, unknown>;
  status: string;
  values: Record<string, unknown>;
  messages: unknown[];
};
type ThreadState = {
  checkpoint: { checkpoint_id: string };
  values: Record<string, unknown>;
  metadata: Record<string, unknown>;
};

describe("threads", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await build();
  });
  afterAll(() => t.close());

  const create = async (body: Record<string, unknown> = {}) =>
    (await t.call("POST", "/threads", body)).body as Thread;

  it("POST /threads › creates an idle thread with a generated id", async () => {
    const res = await t.call("POST", "/threads", { metadata: { owner: "ana" } });
    expect(res.status).toBe(200);
    const thread = res.body as Thread;
    expect(thread.thread_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(thread).toMatchObject({
      metadata: { owner: "ana" },
      status: "idle",
      values: {},
      messages: [],
    });
  });

  it("POST /threads › honours a client thread_id and if_exists", async () => {
    const id = "0b6c2f3e-5d7a-4c1b-9e8f-a1b2c3d4e5f6";
    await create({ thread_id: id, metadata: { n: 1 } });
    const again = await t.call("POST", "/threads", { thread_id: id });
    expect(again.status).toBe(409);
    expect(again.body).toBe(`thread ${id} already exists`);
    const existing = await t.call("POST", "/threads", {
      thread_id: id,
      if_exists: "do_nothing",
      metadata: { n: 2 },
    });
    expect(existing.status).toBe(200);
    expect((existing.body as Thread).metadata).toEqual({ n: 1 });
  });

  it("POST /threads/search › matches metadata by containment, values and status", async () => {
    const tag = `search-${Date.now()}`;
    const a = await create({ metadata: { tag, kind: "a", nested: { x: [1, 2] } } });
    const b = await create({ metadata: { tag, kind: "b" } });
    await t.call("PATCH", `/threads/${b.thread_id}`, { values: { plan: "ship" } });

    const all = (await t.call("POST", "/threads/search", { metadata: { tag } })).body as Thread[];
    expect(all.map((x) => x.thread_id).sort()).toEqual([a.thread_id, b.thread_id].sort());
    const nested = (
      await t.call("POST", "/threads/search", { metadata: { tag, nested: { x: [1, 2] } } })
    ).body as Thread[];
    expect(nested.map((x) => x.thread_id)).toEqual([a.thread_id]);
    const byValues = (
      await t.call("POST", "/threads/search", { metadata: { tag }, values: { plan: "ship" } })
    ).body as Thread[];
    expect(byValues.map((x) => x.thread_id)).toEqual([b.thread_id]);
    const idle = (await t.call("POST", "/threads/search", { metadata: { tag }, status: "idle" }))
      .body as Thread[];
    expect(idle.length).toBe(2);
    const busy = (await t.call("POST", "/threads/search", { metadata: { tag }, status: "busy" }))
      .body as Thread[];
    expect(busy).toEqual([]);
    const page = (
      await t.call("POST", "/threads/search", { metadata: { tag }, limit: 1, offset: 1 })
    ).body as Thread[];
    expect(page.length).toBe(1);
  });

  it("GET /threads/{id} › 404 names the missing thread", async () => {
    const id = "7d9e1f20-3a4b-4c5d-8e6f-708192a3b4c5";
    const res = await t.call("GET", `/threads/${id}`);
    expect(res.status).toBe(404);
    expect(res.body).toBe(`thread ${id} not found`);
  });

  it("PATCH /threads/{id} › merges metadata without writing a checkpoint", async () => {
    const thread = await create({ metadata: { a: 1, b: 2 } });
    const res = await t.call("PATCH", `/threads/${thread.thread_id}`, { metadata: { b: 3, c: 4 } });
    expect((res.body as Thread).metadata).toEqual({ a: 1, b: 3, c: 4 });
    const history = (await t.call("GET", `/threads/${thread.thread_id}/history`))
      .body as ThreadState[];
    expect(history).toEqual([]);
  });

  it("PATCH /threads/{id} › values and messages write checkpoints, newest first in history", async () => {
    const thread = await create();
    await t.call("PATCH", `/threads/${thread.thread_id}`, { values: { step: 1 } });
    await t.call("PATCH", `/threads/${thread.thread_id}`, {
      values: { step: 2 },
      messages: [{ role: "user", content: "hi", id: "m1" }],
    });
    const current = (await t.call("GET", `/threads/${thread.thread_id}`)).body as Thread;
    expect(current.values).toEqual({ step: 2 });
    expect(current.messages).toEqual([{ role: "user", content: "hi", id: "m1" }]);
    const history = (await t.call("GET", `/threads/${thread.thread_id}/history`))
      .body as ThreadState[];
    expect(history.map((s) => s.values)).toEqual([{ step: 2 }, { step: 1 }]);

    const limited = (await t.call("GET", `/threads/${thread.thread_id}/history?limit=1`))
      .body as ThreadState[];
    expect(limited.length).toBe(1);
    const older = (
      await t.call(
        "GET",
        `/threads/${thread.thread_id}/history?before=${history[0]!.checkpoint.checkpoint_id}`,
      )
    ).body as ThreadState[];
    expect(older.map((s) => s.values)).toEqual([{ step: 1 }]);
  });

  it("PATCH /threads/{id} › a checkpoint alone branches the thread from it", async () => {
    const thread = await create();
    await t.call("PATCH", `/threads/${thread.thread_id}`, { values: { v: "first" } });
    await t.call("PATCH", `/threads/${thread.thread_id}`, { values: { v: "second" } });
    const history = (await t.call("GET", `/threads/${thread.thread_id}/history`))
      .body as ThreadState[];
    const first = history[1]!.checkpoint;
    const branched = (await t.call("PATCH", `/threads/${thread.thread_id}`, { checkpoint: first }))
      .body as Thread;
    expect(branched.values).toEqual({ v: "first" });
    const after = (await t.call("GET", `/threads/${thread.thread_id}/history`))
      .body as ThreadState[];
    expect(after.length).toBe(3);
    expect(after[0]!.metadata).toMatchObject({ source: "branch" });
  });

  it("PATCH /threads/{id} › 404 for an unknown checkpoint", async () => {
    const thread = await create();
    const checkpoint = "11111111-2222-4333-8444-555555555555";
    const res = await t.call("PATCH", `/threads/${thread.thread_id}`, {
      checkpoint: { checkpoint_id: checkpoint },
    });
    expect(res.status).toBe(404);
    expect(res.body).toBe(`checkpoint ${checkpoint} not found`);
  });

  it("POST /threads/{id}/copy › copies the thread with all its checkpoints", async () => {
    const thread = await create({ metadata: { copy: "me" } });
    await t.call("PATCH", `/threads/${thread.thread_id}`, { values: { n: 1 } });
    await t.call("PATCH", `/threads/${thread.thread_id}`, { values: { n: 2 } });
    const copy = (await t.call("POST", `/threads/${thread.thread_id}/copy`)).body as Thread;
    expect(copy.thread_id).not.toBe(thread.thread_id);
    expect(copy).toMatchObject({ metadata: { copy: "me" }, values: { n: 2 } });
    const history = (await t.call("GET", `/threads/${copy.thread_id}/history`))
      .body as ThreadState[];
    expect(history.map((s) => s.values)).toEqual([{ n: 2 }, { n: 1 }]);
  });

  it("DELETE /threads/{id} › 204, then 404", async () => {
    const thread = await create();
    const res = await t.call("DELETE", `/threads/${thread.thread_id}`);
    expect(res.status).toBe(204);
    expect((await t.call("GET", `/threads/${thread.thread_id}`)).status).toBe(404);
    expect((await t.call("DELETE", `/threads/${thread.thread_id}`)).status).toBe(404);
  });

  it("DELETE /threads/{id} › 409 while a run is pending", async () => {
    const thread = await create();
    const run = await t.call("POST", `/threads/${thread.thread_id}/runs`, {
      input: { messages: [{ role: "user", content: "hello" }] },
      after_seconds: 60,
    });
    expect(run.status).toBe(200);
    const res = await t.call("DELETE", `/threads/${thread.thread_id}`);
    expect(res.status).toBe(409);
    expect(res.body).toMatch(/pending/);
  });

  const someId = "5e4d3c2b-1a09-4876-a543-210fedcba987";
  describe.each([
    ["POST", "/threads", { thread_id: "nope" }, 'body/thread_id must match format "uuid"'],
    [
      "POST",
      "/threads",
      { if_exists: "overwrite" },
      "body/if_exists must be equal to one of the allowed values",
    ],
    ["POST", "/threads", { metadata: "x" }, "body/metadata must be object"],
    [
      "POST",
      "/threads/search",
      { status: "sleeping" },
      "body/status must be equal to one of the allowed values",
    ],
    ["POST", "/threads/search", { limit: 5000 }, "body/limit must be <= 1000"],
    ["POST", "/threads/search", { values: [] }, "body/values must be object"],
    ["PATCH", `/threads/${someId}`, { values: 3 }, "body/values must be object"],
    [
      "PATCH",
      `/threads/${someId}`,
      { messages: [{ content: "x" }] },
      "body/messages/0 must have required property 'role'",
    ],
    [
      "PATCH",
      `/threads/${someId}`,
      { checkpoint: { checkpoint_id: "x" } },
      'body/checkpoint/checkpoint_id must match format "uuid"',
    ],
    ["GET", "/threads/123", undefined, 'params/thread_id must match format "uuid"'],
    ["DELETE", "/threads/123", undefined, 'params/thread_id must match format "uuid"'],
    ["POST", "/threads/123/copy", undefined, 'params/thread_id must match format "uuid"'],
    ["GET", `/threads/${someId}/history?limit=abc`, undefined, "querystring/limit must be integer"],
    [
      "GET",
      `/threads/${someId}/history?before=zzz`,
      undefined,
      'querystring/before must match format "uuid"',
    ],
  ])("%s %s › 422", (method, url, payload, message) => {
    it(`names the problem: ${message}`, async () => {
      const res = await t.call(method, url, payload);
      expect(res.status).toBe(422);
      expect(res.body).toContain(message);
    });
  });

  it("POST /threads › 413 for a body over the size limit", async () => {
    const res = await t.call("POST", "/threads", {
      metadata: { blob: "x".repeat(2 * 1024 * 1024) },
    });
    expect(res.status).toBe(413);
    expect(res.body).toBe("request body is larger than 1 MiB (server.limits.maxBodyBytes)");
  });

  it("POST /threads › 400 for invalid JSON and for a forbidden prototype key", async () => {
    const bad = await t.call("POST", "/threads", '{"metadata": {', {
      "content-type": "application/json",
    });
    expect(bad.status).toBe(400);
    const proto = await t.call("POST", "/threads", '{"metadata": {"__proto__": {"admin": true}}}', {
      "content-type": "application/json",
    });
    expect(proto.status).toBe(400);
    expect(proto.body).toBe('body contains the forbidden key "__proto__"');
  });
});

describe("threads › persistence", () => {
  it("a thread and its history survive a restart of the server on the same SQLite file", async () => {
    const file = join(mkdtempSync(join(tmpdir(), "acp-agui-")), "data.db");
    const first = await build({ storage: createStorage(file) });
    const thread = (await first.call("POST", "/threads", { metadata: { keep: true } }))
      .body as Thread;
    await first.call("PATCH", `/threads/${thread.thread_id}`, { values: { kept: 1 } });
    await first.close();
    await first.storage.close();

    const second = await build({ storage: createStorage(file) });
    const again = (await second.call("GET", `/threads/${thread.thread_id}`)).body as Thread;
    expect(again).toMatchObject({ metadata: { keep: true }, values: { kept: 1 } });
    const history = (await second.call("GET", `/threads/${thread.thread_id}/history`))
      .body as unknown[];
    expect(history.length).toBe(1);
    await second.close();
    await second.storage.close();
  });
});
