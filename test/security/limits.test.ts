import { describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { formatBytes } from "../../src/http/errors.js";
import type { TestApp } from "../helpers/app.js";
import { slowScript, until } from "../runs/helpers.js";
import { buildServing, echoAgent } from "./helpers.js";

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

const slowAgent = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  version: "1.0.0",
  description: "slow",
  adapter: { type: "scripted", script: slowScript(20), delayMs: 25 },
  ...extra,
});

async function withApp(config: Record<string, unknown>, test: (t: TestApp) => Promise<void>) {
  const t = await buildServing(config);
  try {
    await test(t);
  } finally {
    await t.close();
  }
}

describe("request body limits", () => {
  const config = {
    server: { limits: { maxBodyBytes: 4096, maxJsonDepth: 16, maxStringLength: 1000 } },
    agents: [echoAgent()],
  };

  it("a body over server.limits.maxBodyBytes › 413", () =>
    withApp(config, async (t) => {
      const res = await t.call("POST", "/threads", { metadata: { big: "x".repeat(4096) } });
      expect(res.status).toBe(413);
      expect(res.body).toBe("request body is larger than 4 KiB (server.limits.maxBodyBytes)");
      expect((await t.call("POST", "/threads", { metadata: { ok: "x".repeat(900) } })).status).toBe(
        200,
      );
    }));

  it("the 413 message gives the limit in the unit a person reads", () => {
    expect(formatBytes(1024 * 1024)).toBe("1 MiB");
    expect(formatBytes(4096)).toBe("4 KiB");
    expect(formatBytes(1_500_000)).toBe("1.43 MiB");
    expect(formatBytes(4 * 2 ** 30)).toBe("4 GiB");
    expect(formatBytes(1000)).toBe("1000 bytes");
  });

  it("nesting deeper than server.limits.maxJsonDepth › 422 naming the limit", () =>
    withApp(config, async (t) => {
      const deep = await t.call("POST", "/threads", { metadata: nested(16) });
      expect(deep.status).toBe(422);
      expect(deep.body).toBe("body is nested deeper than 16 levels (server.limits.maxJsonDepth)");
      // 1 (body) + 15 levels: exactly the limit.
      expect((await t.call("POST", "/threads", { metadata: nested(15) })).status).toBe(200);
      // Brackets inside strings are text, not nesting.
      const text = { metadata: { note: "[{".repeat(200) } };
      expect((await t.call("POST", "/threads", text)).status).toBe(200);
      // Deep arrays too, and a flood of brackets never reaches JSON.parse.
      const brackets = await t.call("POST", "/threads", "[".repeat(3000), {
        "content-type": "application/json",
      });
      expect(brackets.status).toBe(422);
    }));

  it("a string longer than server.limits.maxStringLength › 422; escapes count decoded", () =>
    withApp(config, async (t) => {
      const long = await t.call("POST", "/threads", { metadata: { s: "y".repeat(1001) } });
      expect(long.status).toBe(422);
      expect(long.body).toBe(
        "body holds a string longer than 1000 characters (server.limits.maxStringLength)",
      );
      const longKey = await t.call("POST", "/threads", { metadata: { ["k".repeat(1001)]: 1 } });
      expect(longKey.status).toBe(422);
      // 700 newlines: 1400 characters on the wire, 700 in the string.
      const escaped = await t.call("POST", "/threads", { metadata: { s: "\n".repeat(700) } });
      expect(escaped.status).toBe(200);
    }));

  it("invalid UTF-8 › 400; prototype keys, even spelt with escapes › 400", () =>
    withApp(config, async (t) => {
      const bytes = Buffer.concat([
        Buffer.from('{"metadata":{"a":"'),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}}'),
      ]);
      const res = await t.app.inject({
        method: "POST",
        url: "/threads",
        payload: bytes,
        headers: { "content-type": "application/json" },
      });
      expect(res.statusCode).toBe(400);
      expect(JSON.parse(res.body)).toBe("body is not valid UTF-8");

      for (const body of [
        '{"metadata":{"__proto__":{"polluted":1}}}',
        '{"metadata":{"\\u005f_proto__":{"polluted":1}}}',
        '{"metadata":{"constr\\u0075ctor":{"prototype":{"polluted":1}}}}',
      ]) {
        const refused = await t.call("POST", "/threads", body, {
          "content-type": "application/json",
        });
        expect(refused.status, body).toBe(400);
      }
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      // `constructor` and `prototype` as plain keys are data like any other.
      const plain = await t.call("POST", "/threads", {
        metadata: { constructor: "x", prototype: 1 },
      });
      expect(plain.status).toBe(200);
    }));

  it("the limits are read from the config file, with documented defaults", async () => {
    await withApp({ agents: [echoAgent()] }, async (t) => {
      expect(t.app.deps.settings.limits).toEqual({
        maxBodyBytes: 1_048_576,
        maxJsonDepth: 64,
        maxStringLength: 524_288,
        maxOpenStreams: 1000,
        maxEventsPerRun: 100_000,
        maxEventBytes: 16 * 1024 * 1024,
        maxStateBytes: 64 * 1024 * 1024,
        maxEventDepth: 256,
      });
    });
  });
});

describe("paging", () => {
  it("an offset storage cannot address (past 2^53) › 422, in a body or a query", () =>
    withApp({ agents: [echoAgent()] }, async (t) => {
      const search = await t.call("POST", "/runs/search", { offset: 1e308 });
      expect(search.status).toBe(422);
      expect(search.body).toBe("body/offset must be <= 9007199254740991");
      expect((await t.call("POST", "/threads/search", { offset: 2 ** 63 })).status).toBe(422);
      const thread = ((await t.call("POST", "/threads", {})).body as { thread_id: string })
        .thread_id;
      const list = await t.call("GET", `/threads/${thread}/runs?offset=1e300`);
      expect(list.status).toBe(422);
      expect(list.body).toBe("querystring/offset must be <= 9007199254740991");
      expect((await t.call("GET", `/threads/${thread}/runs?offset=3`)).status).toBe(200);
    }));
});

describe("open streams", () => {
  it("a stream longer than the socket buffer (16 KiB) still ends, also under inject", () =>
    withApp({ agents: [echoAgent()] }, async (t) => {
      const thread = ((await t.call("POST", "/threads", {})).body as { thread_id: string })
        .thread_id;
      await t.call("PATCH", `/threads/${thread}`, { values: { big: "v".repeat(40_000) } });
      const res = await t.app.inject({
        method: "POST",
        url: `/threads/${thread}/runs/stream`,
        payload: { input: { messages: [{ role: "user", content: "long ".repeat(3000) }] } },
      });
      expect(res.statusCode).toBe(200);
      expect(res.body.length).toBeGreaterThan(40_000);
      expect(res.body).toContain('"status":"success"');
    }));

  it("beyond server.limits.maxOpenStreams › 429 with retry-after; a slot frees when a stream closes", () =>
    withApp(
      {
        server: { limits: { maxOpenStreams: 2 } },
        agents: [slowAgent("slow", { limits: { maxConcurrentRuns: 8 } })],
      },
      async (t) => {
        const stream = () =>
          t.app.inject({ method: "POST", url: "/runs/stream", payload: { input: {} } });
        const first = stream();
        const second = stream();
        await until(
          async () =>
            (await t.storage.searchRuns({ status: "pending", limit: 10, offset: 0 })).length,
          (n) => n === 2,
        );
        const third = await stream();
        expect(third.statusCode).toBe(429);
        expect(third.headers["retry-after"]).toBe("1");
        expect(JSON.parse(third.body)).toBe(
          "too many open streams (2, server.limits.maxOpenStreams); try again later",
        );
        // Joining a run's stream counts as well.
        const run = (await t.storage.searchRuns({ status: "pending", limit: 1, offset: 0 }))[0]!;
        const join = await t.app.inject({ method: "GET", url: `/runs/${run.run_id}/stream` });
        expect(join.statusCode).toBe(429);

        expect((await first).statusCode).toBe(200);
        await second;
        const again = await stream();
        expect(again.statusCode).toBe(200);
        expect(again.body).toContain('"status":"success"');
      },
    ));
});

describe("run concurrency and the bounded queue", () => {
  it("an agent's queue beyond maxQueuedRuns › 429 with retry-after and the reason", () =>
    withApp(
      { agents: [slowAgent("slow", { limits: { maxConcurrentRuns: 1, maxQueuedRuns: 1 } })] },
      async (t) => {
        const slow = agentIdFor("slow", "1.0.0");
        expect((await t.call("POST", "/runs", { agent_id: slow })).status).toBe(200);
        expect((await t.call("POST", "/runs", { agent_id: slow })).status).toBe(200);
        const refused = await t.call("POST", "/runs", { agent_id: slow });
        expect(refused.status).toBe(429);
        expect(refused.headers["retry-after"]).toBe("1");
        expect(refused.body).toBe(
          `agent ${slow} already has 2 pending runs (its limit); try again later`,
        );
      },
    ));

  it("a place in the queue freed by a run that ended is given again, and only that one", () =>
    withApp(
      { agents: [slowAgent("slow", { limits: { maxConcurrentRuns: 1, maxQueuedRuns: 1 } })] },
      async (t) => {
        const slow = agentIdFor("slow", "1.0.0");
        const create = () => t.call("POST", "/runs", { agent_id: slow, on_completion: "keep" });
        const first = (await create()).body as { run_id: string };
        expect((await create()).status).toBe(200);
        expect((await create()).status).toBe(429);
        await until(
          () => t.storage.getRun(first.run_id),
          (run) => run?.status === "success",
          15_000,
          "the first run's end",
        );
        expect((await create()).status).toBe(200);
        const refused = await create();
        expect(refused.status).toBe(429);
        expect(refused.body).toBe(
          `agent ${slow} already has 2 pending runs (its limit); try again later`,
        );
      },
    ));

  it("server.maxConcurrentRuns bounds runs executing at once across agents; the rest wait", () =>
    withApp(
      {
        server: { maxConcurrentRuns: 2 },
        agents: ["a", "b", "c"].map((name) =>
          slowAgent(name, { limits: { maxConcurrentRuns: 4 } }),
        ),
      },
      async (t) => {
        const ids: string[] = [];
        for (const name of ["a", "b", "c", "a", "b", "c"]) {
          const res = await t.call("POST", "/runs", {
            agent_id: agentIdFor(name, "1.0.0"),
            on_completion: "keep",
          });
          ids.push((res.body as { run_id: string }).run_id);
        }
        let most = 0;
        const deadline = Date.now() + 15_000;
        for (;;) {
          const runs = await Promise.all(ids.map((id) => t.storage.getRun(id)));
          const executing = runs.filter((r) => r?.status === "pending" && r.segments.length > 0);
          most = Math.max(most, executing.length);
          if (runs.every((r) => r?.status === "success") || Date.now() > deadline) break;
          await new Promise((r) => setTimeout(r, 20));
        }
        expect(most).toBe(2);
        const runs = await Promise.all(ids.map((id) => t.storage.getRun(id)));
        expect(runs.map((r) => r?.status)).toEqual(Array(6).fill("success"));
      },
    ));
});

describe("rate limit", () => {
  const KEY_A = "rate-key-a-0123456789ab";
  const KEY_B = "rate-key-b-0123456789ab";

  it("is off by default", () =>
    withApp({ agents: [echoAgent()] }, async (t) => {
      for (let i = 0; i < 50; i++) {
        expect((await t.call("POST", "/agents/search", {})).status).toBe(200);
      }
    }));

  it("beyond server.rateLimit.max per window › 429 with retry-after, counted per API key", () =>
    withApp(
      {
        server: {
          rateLimit: { max: 3, windowSeconds: 60 },
          auth: {
            keys: [
              { key: KEY_A, name: "a" },
              { key: KEY_B, name: "b" },
            ],
          },
        },
        agents: [echoAgent()],
      },
      async (t) => {
        const as = (key: string) => ({ authorization: `Bearer ${key}` });
        for (let i = 0; i < 3; i++) {
          expect((await t.call("POST", "/agents/search", {}, as(KEY_A))).status).toBe(200);
        }
        const limited = await t.call("POST", "/agents/search", {}, as(KEY_A));
        expect(limited.status).toBe(429);
        expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
        expect(limited.body).toMatch(/^rate limit of 3 requests per 60 s exceeded; retry in /);
        // Another key has its own budget; probes are never limited.
        expect((await t.call("POST", "/agents/search", {}, as(KEY_B))).status).toBe(200);
        for (let i = 0; i < 5; i++) {
          expect((await t.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
        }
      },
    ));

  it("without API keys, counts per client address", () =>
    withApp(
      { server: { rateLimit: { max: 2, windowSeconds: 60 } }, agents: [echoAgent()] },
      async (t) => {
        const from = (ip: string) =>
          t.app.inject({ method: "POST", url: "/agents/search", payload: {}, remoteAddress: ip });
        expect((await from("10.0.0.1")).statusCode).toBe(200);
        expect((await from("10.0.0.1")).statusCode).toBe(200);
        expect((await from("10.0.0.1")).statusCode).toBe(429);
        expect((await from("10.0.0.2")).statusCode).toBe(200);
      },
    ));
});
