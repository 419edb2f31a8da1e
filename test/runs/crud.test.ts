import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import {
  agentId,
  buildWith,
  finished,
  type Json,
  newThread,
  post,
  settledRun,
  snapshot,
  started,
  userSays,
} from "./helpers.js";

type Run = Json & { run_id: string; status: string; thread_id?: string; agent_id: string };
type Wait = { run: Run; output?: Json };

const agents = [
  { name: "quick", script: [started, snapshot({ done: 1 }), finished()] },
  {
    name: "asks",
    script: [
      started,
      finished({ outcome: { type: "interrupt", interrupts: [{ id: "q", reason: "approval" }] } }),
    ],
  },
  {
    name: "typed",
    script: [started, finished()],
    specs: {
      input: {
        type: "object",
        required: ["topic"],
        properties: { topic: { type: "string" }, depth: { type: "integer", minimum: 1 } },
      },
    },
  },
];

const unknownId = "1d2c3b4a-5f6e-4d7c-8b9a-0f1e2d3c4b5a";

describe("run operations", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await buildWith(agents);
  });
  afterAll(() => t.close());

  it("POST /threads/{id}/runs/wait › answers {run, output} valid against RunWaitResponseStateful", async () => {
    const threadId = await newThread(t);
    const res = await t.call("POST", `/threads/${threadId}/runs/wait`, {
      agent_id: agentId("quick"),
      input: userSays("hi"),
      metadata: { purpose: "wait" },
    });
    expect(res.status).toBe(200);
    const body = res.body as Wait;
    expect(body.run).toMatchObject({
      thread_id: threadId,
      agent_id: agentId("quick"),
      status: "success",
    });
    expect(body.output).toMatchObject({ type: "result", values: { done: 1 } });
    const again = await t.call("GET", `/threads/${threadId}/runs/${body.run.run_id}/wait`);
    expect(again.body).toEqual(body);
  });

  it("POST /runs/wait › answers {run, output} valid against RunWaitResponseStateless; GET …/wait likewise", async () => {
    const res = await t.call("POST", "/runs/wait", { agent_id: agentId("asks") });
    expect(res.status).toBe(200);
    const body = res.body as Wait;
    expect(body.run.status).toBe("interrupted");
    expect(body.output).toEqual({
      type: "interrupt",
      interrupt: { approval: { id: "q", reason: "approval" } },
    });
    const again = await t.call("GET", `/runs/${body.run.run_id}/wait`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(body);
  });

  it("GET /runs/{run_id}/wait › blocks until a pending run ends", async () => {
    const run = (await post(t, "/runs", { agent_id: agentId("quick"), after_seconds: 1 })) as Run;
    const res = await t.call("GET", `/runs/${run.run_id}/wait`);
    expect((res.body as Wait).run.status).toBe("success");
    expect((res.body as Wait).output).toMatchObject({ type: "result" });
  });

  it("GET /runs/{run_id} and /threads/{id}/runs/{run_id} › 404 for an unknown run or the wrong kind", async () => {
    const threadId = await newThread(t);
    for (const url of [`/runs/${unknownId}`, `/threads/${threadId}/runs/${unknownId}`]) {
      const res = await t.call("GET", url);
      expect(res.status).toBe(404);
      expect(res.body).toBe(`run ${unknownId} not found`);
    }
    const stateful = (await post(t, `/threads/${threadId}/runs/wait`, {
      agent_id: agentId("quick"),
    })) as unknown as Wait;
    // A thread run is not a stateless run, nor a run of another thread.
    expect((await t.call("GET", `/runs/${stateful.run.run_id}`)).status).toBe(404);
    const other = await newThread(t);
    expect((await t.call("GET", `/threads/${other}/runs/${stateful.run.run_id}`)).status).toBe(404);
    expect((await t.call("GET", `/threads/${threadId}/runs/${stateful.run.run_id}`)).status).toBe(
      200,
    );
  });

  it("DELETE /runs/{run_id} › 409 while pending, 204 once finished, then 404", async () => {
    const run = (await post(t, "/runs", { agent_id: agentId("quick"), after_seconds: 60 })) as Run;
    const busy = await t.call("DELETE", `/runs/${run.run_id}`);
    expect(busy.status).toBe(409);
    expect(busy.body).toBe(`run ${run.run_id} is pending: cancel it before deleting it`);
    await t.call("POST", `/runs/${run.run_id}/cancel?wait=true`);
    const gone = await t.call("DELETE", `/runs/${run.run_id}`);
    expect(gone.status).toBe(204);
    expect((await t.call("GET", `/runs/${run.run_id}`)).status).toBe(404);
    expect((await t.call("DELETE", `/runs/${run.run_id}`)).status).toBe(404);
  });

  it("DELETE /threads/{id}/runs/{run_id} › 409 while pending, 204 once finished", async () => {
    const threadId = await newThread(t);
    const run = (await post(t, `/threads/${threadId}/runs`, {
      agent_id: agentId("quick"),
      after_seconds: 60,
    })) as Run;
    expect((await t.call("DELETE", `/threads/${threadId}/runs/${run.run_id}`)).status).toBe(409);
    await t.call("POST", `/threads/${threadId}/runs/${run.run_id}/cancel?wait=true`);
    expect((await t.call("DELETE", `/threads/${threadId}/runs/${run.run_id}`)).status).toBe(204);
    expect((await t.call("GET", `/threads/${threadId}/runs/${run.run_id}`)).status).toBe(404);
  });

  it("GET /threads/{id}/runs › lists the thread's runs newest first, paged; 404 for an unknown thread", async () => {
    const threadId = await newThread(t);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const wait = (await post(t, `/threads/${threadId}/runs/wait`, {
        agent_id: agentId("quick"),
      })) as unknown as Wait;
      ids.push(wait.run.run_id);
    }
    const list = (await t.call("GET", `/threads/${threadId}/runs`)).body as Run[];
    expect(list.map((r) => r.run_id)).toEqual([...ids].reverse());
    expect(list.every((r) => r.thread_id === threadId && r.status === "success")).toBe(true);
    const page = (await t.call("GET", `/threads/${threadId}/runs?limit=1&offset=1`)).body as Run[];
    expect(page.map((r) => r.run_id)).toEqual([ids[1]]);
    const missing = await t.call("GET", `/threads/${unknownId}/runs`);
    expect(missing.status).toBe(404);
    expect(missing.body).toBe(`thread ${unknownId} not found`);
  });

  it("POST /runs/search › filters stateless runs by agent_id, status and metadata", async () => {
    const tag = `search-${Date.now()}`;
    const a = (await post(t, "/runs/wait", {
      agent_id: agentId("quick"),
      metadata: { tag, n: 1 },
    })) as unknown as Wait;
    const b = (await post(t, "/runs/wait", {
      agent_id: agentId("asks"),
      metadata: { tag, n: 2 },
    })) as unknown as Wait;
    // A thread run with the same tag is not a stateless run.
    const threadId = await newThread(t);
    await post(t, `/threads/${threadId}/runs/wait`, {
      agent_id: agentId("quick"),
      metadata: { tag },
    });

    const search = async (body: Json) =>
      ((await t.call("POST", "/runs/search", { metadata: { tag }, ...body })).body as Run[]).map(
        (r) => r.run_id,
      );
    expect(await search({})).toEqual([b.run.run_id, a.run.run_id]);
    expect(await search({ agent_id: agentId("quick") })).toEqual([a.run.run_id]);
    expect(await search({ status: "interrupted" })).toEqual([b.run.run_id]);
    expect(await search({ status: "pending" })).toEqual([]);
    expect(await search({ metadata: { tag, n: 2 } })).toEqual([b.run.run_id]);
    expect(await search({ limit: 1, offset: 1 })).toEqual([a.run.run_id]);
  });

  it("POST /runs › on_completion delete (default): the run stays readable, its hidden thread is gone", async () => {
    const wait = (await post(t, "/runs/wait", { agent_id: agentId("quick") })) as unknown as Wait;
    const run = await t.storage.getRun(wait.run.run_id);
    expect(run?.thread_id).toBeNull();
    const res = await t.call("GET", `/runs/${wait.run.run_id}`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ run_id: wait.run.run_id, status: "success" });
    expect(res.body).not.toHaveProperty("thread_id");
    expect(wait.run).not.toHaveProperty("thread_id");
  });

  it("POST /runs › on_completion keep: the hidden thread stays, hidden from thread search", async () => {
    const wait = (await post(t, "/runs/wait", {
      agent_id: agentId("quick"),
      on_completion: "keep",
    })) as unknown as Wait;
    const threadId = wait.run.thread_id!;
    const thread = await t.storage.getThread(threadId);
    expect(thread).toMatchObject({ hidden: true, status: "idle", values: { done: 1 } });
    expect((await t.call("GET", `/runs/${wait.run.run_id}`)).body).toMatchObject({
      thread_id: threadId,
    });
    expect((await t.call("GET", `/threads/${threadId}`)).status).toBe(404);
  });

  it("POST /threads/{id}/runs › if_not_exists create makes the thread; reject and the default answer 404", async () => {
    const fresh = crypto.randomUUID();
    for (const body of [{}, { if_not_exists: "reject" }]) {
      const res = await t.call("POST", `/threads/${fresh}/runs`, {
        agent_id: agentId("quick"),
        ...body,
      });
      expect(res.status).toBe(404);
      expect(res.body).toBe(`thread ${fresh} not found`);
    }
    expect(await t.storage.getThread(fresh)).toBeNull();
    const created = (await post(t, `/threads/${fresh}/runs`, {
      agent_id: agentId("quick"),
      if_not_exists: "create",
    })) as Run;
    expect(created.thread_id).toBe(fresh);
    expect((await settledRun(t, created.run_id)).status).toBe("success");
    const thread = (await t.call("GET", `/threads/${fresh}`)).body as Json;
    expect(thread).toMatchObject({ thread_id: fresh, status: "idle", values: { done: 1 } });
  });

  it("POST /runs › without agent_id, 422 when several agents are configured", async () => {
    const res = await t.call("POST", "/runs", { input: userSays("hi") });
    expect(res.status).toBe(422);
    expect(res.body).toBe("agent_id is required: this server has more than one agent");
  });

  it("POST /runs › 404 for an unknown agent_id (the spec does not make it a uuid)", async () => {
    for (const id of [unknownId, "quick"]) {
      const res = await t.call("POST", "/runs", { agent_id: id });
      expect(res.status).toBe(404);
      expect(res.body).toBe(`agent ${id} not found`);
    }
    const onThread = await t.call("POST", `/threads/${await newThread(t)}/runs/stream`, {
      agent_id: unknownId,
    });
    expect(onThread.status).toBe(404);
  });

  const typed = agentId("typed");
  const quick = agentId("quick");
  const someThread = "5e4d3c2b-1a09-4876-a543-210fedcba987";
  describe.each([
    ["POST", "/runs", { agent_id: quick, stream_mode: "tokens" }, "body/stream_mode"],
    ["POST", "/runs/stream", { agent_id: quick, stream_mode: ["values", "x"] }, "body/stream_mode"],
    [
      "POST",
      `/threads/${someThread}/runs`,
      { agent_id: quick, multitask_strategy: "queue" },
      "body/multitask_strategy must be equal to one of the allowed values",
    ],
    [
      "POST",
      "/runs",
      { agent_id: quick, on_completion: "archive" },
      "body/on_completion must be equal to one of the allowed values",
    ],
    [
      "POST",
      `/threads/${someThread}/runs/wait`,
      { agent_id: quick, if_not_exists: "maybe" },
      "body/if_not_exists must be equal to one of the allowed values",
    ],
    ["POST", "/runs", { agent_id: quick, after_seconds: "soon" }, "body/after_seconds"],
    ["POST", "/runs/search", { status: "running" }, "body/status"],
    [
      "POST",
      "/runs",
      { agent_id: quick, after_seconds: 10_000_000_000_000 },
      "after_seconds 10000000000000 is too large",
    ],
    [
      "POST",
      `/threads/${someThread}/runs`,
      { agent_id: quick, after_seconds: 1_000_000_000_000 },
      "after_seconds 1000000000000 is too large",
    ],
    ["GET", "/runs/123", undefined, 'params/run_id must match format "uuid"'],
    ["DELETE", "/runs/123", undefined, 'params/run_id must match format "uuid"'],
    ["POST", "/runs/123", { approval: {} }, 'params/run_id must match format "uuid"'],
    ["GET", "/runs/123/wait", undefined, 'params/run_id must match format "uuid"'],
    ["GET", "/runs/123/stream", undefined, 'params/run_id must match format "uuid"'],
    ["POST", "/runs/123/cancel", undefined, 'params/run_id must match format "uuid"'],
    ["GET", "/threads/abc/runs", undefined, 'params/thread_id must match format "uuid"'],
    ["POST", "/threads/abc/runs", { agent_id: quick }, 'params/thread_id must match format "uuid"'],
    [
      "POST",
      "/threads/abc/runs/stream",
      { agent_id: quick },
      'params/thread_id must match format "uuid"',
    ],
    ["GET", `/threads/${someThread}/runs/xyz`, undefined, 'params/run_id must match format "uuid"'],
    [
      "POST",
      `/threads/${someThread}/runs/xyz/cancel`,
      undefined,
      'params/run_id must match format "uuid"',
    ],
    ["POST", "/runs", { agent_id: typed, input: { depth: 2 } }, "input/topic is required"],
    ["POST", "/runs", { agent_id: typed, input: { topic: 7 } }, "input/topic must be string"],
    [
      "POST",
      "/runs/wait",
      { agent_id: typed, input: { topic: "x", depth: 0 } },
      "input/depth must be >= 1",
    ],
    [
      "POST",
      "/runs",
      { agent_id: quick, input: { messages: "hi" } },
      "input/messages must be array",
    ],
    [
      "POST",
      "/runs",
      { agent_id: quick, input: { messages: [{ role: "wizard", content: "abracadabra" }] } },
      "role 'wizard' is not an AG-UI message role",
    ],
    [
      "POST",
      "/runs/stream",
      {
        agent_id: quick,
        input: { messages: [{ role: "user", content: [{ type: "widget", data: "..." }] }] },
      },
      "input/messages/0/content/0: content block type 'widget' has no AG-UI equivalent",
    ],
  ])("%s %s › 422", (method, url, payload, message) => {
    it(`names the problem: ${message}`, async () => {
      const count = async () => (await t.storage.searchRuns({ limit: 1000, offset: 0 })).length;
      const before = await count();
      const res = await t.call(method, url, payload);
      expect(res.status).toBe(422);
      expect(res.body).toContain(message);
      expect(await count()).toBe(before);
    });
  });
});
