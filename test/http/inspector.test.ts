import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { parseConfig } from "../../src/config/load.js";
import { DEFAULT_SETTINGS, type ServerSettings } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";
import {
  agentId,
  configOf,
  finished,
  post,
  say,
  settledRun,
  snapshot,
  started,
  until,
} from "../runs/helpers.js";

/** A built inspector as Vite lays it out: the page, hashed assets, a public file. */
function fakeBuild(): string {
  const root = mkdtempSync(join(tmpdir(), "acp-inspector-"));
  mkdirSync(join(root, "assets"));
  writeFileSync(
    join(root, "index.html"),
    '<!doctype html><script type="module" src="./assets/index-abc123.js"></script>',
  );
  writeFileSync(join(root, "assets", "index-abc123.js"), `console.log(${"1+".repeat(2000)}1);`);
  writeFileSync(join(root, "assets", "index-abc123.css"), "body{margin:0}");
  writeFileSync(join(root, "assets", "index-abc123.js.map"), "{}");
  writeFileSync(join(root, "favicon.svg"), "<svg/>");
  return root;
}

const KEY = "inspector-test-key-0123456789";
const ECHO_ONLY_KEY = "inspector-echo-only-key-0123";

const agents = configOf([
  { name: "echo", echo: true },
  {
    name: "scripted",
    script: [started, snapshot({ step: 1 }), ...say("m1", "hello"), finished()],
  },
]);

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function app(
  settings: Partial<ServerSettings> = {},
  root: string = fakeBuild(),
): Promise<TestApp> {
  t = await build({ yaml: agents, settings, inspectorRoot: root, unchecked: true });
  return t;
}

const get = (url: string, headers: Record<string, string> = {}) =>
  t!.app.inject({ method: "GET", url, headers });

describe("the inspector's page", () => {
  it("serves index.html at /ui/ with a content security policy, revalidated on each load", async () => {
    await app();
    const page = await get("/ui/");
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toBe("text/html; charset=utf-8");
    expect(page.body).toContain("./assets/index-abc123.js");
    expect(page.headers["cache-control"]).toBe("no-cache");
    expect(page.headers["content-security-policy"]).toContain("default-src 'self'");
    expect(page.headers["content-security-policy"]).toContain("connect-src 'self'");
    expect(page.headers["x-content-type-options"]).toBe("nosniff");

    const again = await get("/ui/", { "if-none-match": String(page.headers.etag) });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe("");
  });

  it("redirects /ui to /ui/ (the page's files are relative to it), keeping the query", async () => {
    await app();
    const res = await get("/ui?x=1");
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe("/ui/?x=1");
  });

  it("serves hashed assets for a year, gzipped for clients that accept it", async () => {
    await app();
    const plain = await get("/ui/assets/index-abc123.js");
    expect(plain.statusCode).toBe(200);
    expect(plain.headers["content-type"]).toBe("text/javascript; charset=utf-8");
    expect(plain.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(plain.headers["content-encoding"]).toBeUndefined();

    const gzipped = await get("/ui/assets/index-abc123.js", { "accept-encoding": "gzip, br" });
    expect(gzipped.headers["content-encoding"]).toBe("gzip");
    expect(gzipped.headers.vary).toBe("accept-encoding");
    expect(gunzipSync(gzipped.rawPayload).toString()).toBe(plain.body);
    expect(gzipped.rawPayload.length).toBeLessThan(plain.rawPayload.length);

    expect((await get("/ui/assets/index-abc123.css")).headers["content-type"]).toBe(
      "text/css; charset=utf-8",
    );
    expect((await get("/ui/favicon.svg")).headers["cache-control"]).toBe("no-cache");
  });

  it("serves only the built files: no source maps, nothing outside the build, 404 otherwise", async () => {
    await app();
    expect((await get("/ui/assets/index-abc123.js.map")).statusCode).toBe(404);
    expect((await get("/ui/assets/missing.js")).statusCode).toBe(404);
    expect((await get("/ui/index.html")).statusCode).toBe(404);
    const outside = await get("/ui/%2e%2e/package.json");
    expect(outside.statusCode).toBe(404);
    expect(outside.body).not.toContain("acp-agui");
  });

  it("is served at the configured path instead", async () => {
    await app({ inspector: { enabled: true, path: "/tools/inspector" } });
    expect((await get("/tools/inspector/")).statusCode).toBe(200);
    expect((await get("/tools/inspector/assets/index-abc123.js")).statusCode).toBe(200);
    expect((await get("/tools/inspector/api/overview")).statusCode).toBe(200);
    expect((await get("/ui/")).statusCode).toBe(404);
  });

  it("is not served at all when switched off", async () => {
    await app({ inspector: { enabled: false, path: "/ui" } });
    expect((await get("/ui/")).statusCode).toBe(404);
    expect((await get("/ui/assets/index-abc123.js")).statusCode).toBe(404);
    expect((await get("/ui/api/overview")).statusCode).toBe(404);
  });

  it("says how to build it when it was never built", async () => {
    await app({}, mkdtempSync(join(tmpdir(), "acp-inspector-empty-")));
    const res = await get("/ui/");
    expect(res.statusCode).toBe(503);
    expect(JSON.parse(res.body)).toBe("the inspector is not built: run `npm run build`");
  });
});

describe("the inspector behind API keys", () => {
  const keys = {
    auth: {
      keys: [
        { key: KEY, name: "admin" },
        { key: ECHO_ONLY_KEY, name: "echo-only", agents: ["echo"] },
      ],
    },
  };

  it("serves the page and its files without a key, its data only with one", async () => {
    await app(keys);
    expect((await get("/ui")).statusCode).toBe(302);
    expect((await get("/ui/")).statusCode).toBe(200);
    expect((await get("/ui/assets/index-abc123.js")).statusCode).toBe(200);

    const refused = await get("/ui/api/overview");
    expect(refused.statusCode).toBe(401);
    expect(refused.headers["www-authenticate"]).toBe("Bearer");
    expect((await get("/ui/api/runs")).statusCode).toBe(401);
    expect((await get(`/ui/api/runs/${agentId("echo")}/frames`)).statusCode).toBe(401);
    // A file that is not part of the build is no open door either.
    expect((await get("/ui/other")).statusCode).toBe(401);

    const allowed = await get("/ui/api/overview", { authorization: `Bearer ${KEY}` });
    expect(allowed.statusCode).toBe(200);
    expect(allowed.json().server.auth).toEqual({ keys: true, tokens: false });
  });

  it("keeps a restricted key to its agents: no metrics, no frames of other agents' runs", async () => {
    await app(keys);
    const admin = { authorization: `Bearer ${KEY}` };
    const run = await t!.app.inject({
      method: "POST",
      url: "/runs/wait",
      headers: admin,
      payload: { agent_id: agentId("scripted"), input: {} },
    });
    const runId = run.json().run.run_id as string;

    const echoOnly = { "x-api-key": ECHO_ONLY_KEY };
    // Not disclosed either: a run this key may not reach does not exist for it.
    expect((await get(`/ui/api/runs/${runId}/frames`, echoOnly)).statusCode).toBe(404);
    expect((await get(`/ui/api/runs/${runId}/frames`, admin)).statusCode).toBe(200);
    expect((await get("/ui/api/runs", echoOnly)).json()).toEqual([]);
    expect((await get("/ui/api/runs", admin)).json()).toHaveLength(1);
    const overview = (await get("/ui/api/overview", echoOnly)).json();
    expect(overview.metrics.available).toBe(false);
    expect(overview.metrics.reason).toContain("restricted");
  });
});

describe("the inspector with two API keys", () => {
  const OTHER_KEY = "inspector-other-key-0123456789";
  const ADMIN_KEY = "inspector-admin-key-0123456789";
  const keys = {
    auth: {
      keys: [
        { key: KEY, name: "app-a" },
        { key: OTHER_KEY, name: "app-b" },
        { key: ADMIN_KEY, name: "ops", admin: true },
      ],
    },
  };

  it("shows each key its own runs and frames only, and the admin everyone's", async () => {
    await app(keys);
    const runBy = async (key: string) => {
      const run = await t!.app.inject({
        method: "POST",
        url: "/runs/wait",
        headers: { "x-api-key": key },
        payload: { agent_id: agentId("scripted"), input: {} },
      });
      return run.json().run.run_id as string;
    };
    const a = await runBy(KEY);
    const b = await runBy(OTHER_KEY);
    const ids = async (key: string) =>
      ((await get("/ui/api/runs", { "x-api-key": key })).json() as Array<{ run_id: string }>).map(
        (run) => run.run_id,
      );
    expect(await ids(KEY)).toEqual([a]);
    expect(await ids(OTHER_KEY)).toEqual([b]);
    expect((await ids(ADMIN_KEY)).sort()).toEqual([a, b].sort());

    const frames = (runId: string, key: string) =>
      get(`/ui/api/runs/${runId}/frames`, { "x-api-key": key });
    expect((await frames(a, KEY)).statusCode).toBe(200);
    const hidden = await frames(a, OTHER_KEY);
    expect(hidden.statusCode).toBe(404);
    expect(hidden.json()).toBe(`run ${a} not found`);
    expect((await frames(b, KEY)).statusCode).toBe(404);
    expect((await frames(b, ADMIN_KEY)).statusCode).toBe(200);
  });

  it("names the last run of a thread only to a key that reaches it", async () => {
    await app(keys);
    const threadId = randomUUID();
    const created = await t!.app.inject({
      method: "POST",
      url: `/threads/${threadId}/runs/wait`,
      headers: { "x-api-key": KEY },
      payload: { agent_id: agentId("scripted"), input: {}, if_not_exists: "create" },
    });
    expect(created.statusCode).toBe(200);
    const last = async (key: string) =>
      (await get(`/ui/api/threads/last-runs?thread_ids=${threadId}`, { "x-api-key": key })).json();
    expect((await last(KEY))[threadId]).toMatchObject({ agent_id: agentId("scripted") });
    expect((await last(OTHER_KEY))[threadId]).toBeNull();
    expect((await last(ADMIN_KEY))[threadId]).toMatchObject({ face: "acp" });
    expect((await get(`/ui/api/threads/last-runs?thread_ids=${threadId}`)).statusCode).toBe(401);
  });
});

describe("the inspector's API", () => {
  it("summarizes the metrics per agent: queue, running, created, stopped by status, events", async () => {
    await app();
    const { run } = await post(t!, "/runs/wait", { agent_id: agentId("scripted"), input: {} });
    expect((run as { status: string }).status).toBe("success");
    const overview = (await get("/ui/api/overview")).json();
    expect(overview.server).toMatchObject({
      storage: "sqlite",
      ready: true,
      auth: { keys: false, tokens: false },
    });
    expect(overview.metrics.available).toBe(true);
    const scripted = overview.metrics.agents.find((a: { agent: string }) => a.agent === "scripted");
    expect(scripted).toEqual({
      agent: "scripted",
      pending: 0,
      executing: 0,
      created: 1,
      stopped: { success: 1 },
      events: 6,
      events_rejected: 0,
    });
    expect(overview.metrics.agents.map((a: { agent: string }) => a.agent)).toEqual([
      "echo",
      "scripted",
    ]);
  });

  it("says when metrics are off", async () => {
    await app({ metrics: { enabled: false, public: false } });
    const overview = (await get("/ui/api/overview")).json();
    expect(overview.metrics).toEqual({
      enabled: false,
      available: false,
      reason: "metrics are off (server.metrics.enabled)",
    });
  });

  it("returns every stored frame of a run, whatever stream mode it was created with", async () => {
    await app();
    const threadId = (await post(t!, "/threads", {})).thread_id as string;
    const created = await post(t!, `/threads/${threadId}/runs`, {
      agent_id: agentId("scripted"),
      input: {},
      stream_mode: "values",
    });
    const runId = created.run_id as string;
    await settledRun(t!, runId, "success");
    // The outcome is recorded a moment before the final frame is stored.
    await until(
      () => t!.storage.readFrames(runId, 0),
      (stored) => stored.at(-1)?.mode === "final",
      5_000,
      "the final frame to be stored",
    );

    const res = await get(`/ui/api/runs/${runId}/frames`);
    expect(res.statusCode).toBe(200);
    const { run, frames } = res.json();
    expect(run).toMatchObject({ run_id: runId, thread_id: threadId, kind: "stateful" });
    expect(run.segments).toHaveLength(1);
    expect(run.output.type).toBe("result");
    const events = frames
      .filter((f: { mode: string }) => f.mode === "custom")
      .map((f: { data: { update: { type: string } } }) => f.data.update.type);
    expect(events).toEqual([
      "RUN_STARTED",
      "STATE_SNAPSHOT",
      "TEXT_MESSAGE_START",
      "TEXT_MESSAGE_CONTENT",
      "TEXT_MESSAGE_END",
      "RUN_FINISHED",
    ]);
    expect(frames.at(-1).mode).toBe("final");
    expect(frames.map((f: { seq: number }) => f.seq)).toEqual(
      frames.map((_: unknown, i: number) => i + 1),
    );

    const page = (await get(`/ui/api/runs/${runId}/frames?after_seq=2&limit=3`)).json();
    expect(page.frames.map((f: { seq: number }) => f.seq)).toEqual([3, 4, 5]);
  });

  it("refuses bad run ids and paging with a message, and names an unknown run", async () => {
    await app();
    const bad = await get("/ui/api/runs/not-a-uuid/frames");
    expect(bad.statusCode).toBe(422);
    expect(typeof bad.json()).toBe("string");
    expect((await get(`/ui/api/runs/${agentId("x")}/frames?limit=0`)).statusCode).toBe(422);
    const missing = await get(`/ui/api/runs/${agentId("x")}/frames`);
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toContain("not found");
    expect((await get("/ui/api/runs?status=nope")).statusCode).toBe(422);
  });

  it("lists recent runs of both kinds, newest first", async () => {
    await app();
    await post(t!, "/runs/wait", { agent_id: agentId("scripted"), input: {} });
    const threadId = (await post(t!, "/threads", {})).thread_id as string;
    await post(t!, `/threads/${threadId}/runs/wait`, { agent_id: agentId("echo"), input: {} });
    const runs = (await get("/ui/api/runs")).json();
    expect(runs.map((r: { kind: string }) => r.kind)).toEqual(["stateful", "stateless"]);
    expect(runs[0].thread_id).toBe(threadId);
    const echo = (await get(`/ui/api/runs?agent_id=${agentId("echo")}`)).json();
    expect(echo).toHaveLength(1);
  });
});

describe("the inspector's config", () => {
  const parse = (server: unknown) =>
    parseConfig(JSON.stringify({ server, agents: JSON.parse(agents).agents }), {
      filename: "c.json",
      baseDir: process.cwd(),
    });

  it("is on at /ui by default, and takes another path or an off switch", async () => {
    expect(DEFAULT_SETTINGS.inspector).toEqual({ enabled: true, path: "/ui" });
    expect((await parse({})).server.inspector).toEqual({ enabled: true, path: "/ui" });
    expect((await parse({ inspector: { enabled: false } })).server.inspector).toEqual({
      enabled: false,
      path: "/ui",
    });
    expect((await parse({ inspector: { path: "/admin/inspect" } })).server.inspector.path).toBe(
      "/admin/inspect",
    );
  });

  it.each(["/ui/", "ui", "/", "/agents", "/runs/ui", "/ag-ui", "/healthz", "/a b"])(
    "refuses the path %j, naming what a path must be",
    async (path) => {
      await expect(parse({ inspector: { path } })).rejects.toThrow(/server\.inspector\.path/);
    },
  );
});
