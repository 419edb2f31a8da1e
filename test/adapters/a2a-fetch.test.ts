import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { boundedFetch, UpstreamFault } from "../../src/adapters/a2a-fetch.js";
import { StreamBoundError } from "../../src/adapters/stream-bounds.js";
import { agentIdFor } from "../../src/config/registry.js";
import { build, type TestApp } from "../helpers/app.js";

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: string) => void;

/** A hand-made upstream on loopback: each test says how the next requests are answered. */
async function upstream(): Promise<{
  url: string;
  handle(handler: Handler): void;
  bodies: string[];
  close(): Promise<void>;
}> {
  let handler: Handler = (_req, res) => res.end();
  const bodies: string[] = [];
  const server = http.createServer(async (req, res) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    bodies.push(body);
    handler(req, res, body);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    handle: (h) => {
      handler = h;
    },
    bodies,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

const limits = {
  maxEventBytes: 2048,
  maxEventDepth: 16,
  maxStreamBytes: 16_384,
  idleTimeoutMs: 300,
  keys: { maxEventBytes: "limits.maxEventBytes", maxEventDepth: "limits.maxEventDepth" },
};
const fetchWith = (extra = {}) =>
  boundedFetch({ ...limits, headers: { "x-team": "blue" }, connectTimeoutMs: 2000, ...extra });

describe("boundedFetch: every A2A answer's body is bounded", () => {
  let up: Awaited<ReturnType<typeof upstream>>;
  beforeAll(async () => {
    up = await upstream();
  });
  afterAll(() => up.close());

  it("a JSON answer within maxEventBytes › read whole, with the configured headers sent", async () => {
    let seen: http.IncomingHttpHeaders = {};
    up.handle((req, res) => {
      seen = req.headers;
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ ok: "x".repeat(1000) }));
    });
    const response = await fetchWith()(up.url, { headers: { "x-own": "1" } });
    expect(((await response.json()) as { ok: string }).ok).toHaveLength(1000);
    expect(seen["x-team"]).toBe("blue");
    expect(seen["x-own"]).toBe("1");
  });

  it("a JSON answer over maxEventBytes › StreamBoundError naming the config key", async () => {
    up.handle((_req, res) => {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ big: "x".repeat(5000) }));
    });
    const response = await fetchWith()(up.url);
    const error = await response.text().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(StreamBoundError);
    expect((error as Error).message).toBe(
      "sent an answer larger than 2 KiB, the most one event may be (limits.maxEventBytes)",
    );
  });

  it("SSE: many small events pass; one event over maxEventBytes fails", async () => {
    const small = "data: {}\n\n".repeat(500);
    up.handle((_req, res) => {
      res.setHeader("content-type", "text/event-stream");
      res.end(small);
    });
    expect(await (await fetchWith()(up.url)).text()).toBe(small);

    up.handle((_req, res) => {
      res.setHeader("content-type", "text/event-stream");
      res.write("data: {}\r\n\r\n");
      res.end(`data: ${"x".repeat(3000)}\r\n\r\n`);
    });
    const error = await (await fetchWith()(up.url)).text().catch((err: unknown) => err);
    expect((error as Error).message).toBe(
      "sent an SSE event larger than 2 KiB, the most one event may be (limits.maxEventBytes)",
    );
  });

  it("SSE over maxStreamBytes in total › fails naming maxStreamBytes", async () => {
    up.handle((_req, res) => {
      res.setHeader("content-type", "text/event-stream");
      res.end(`data: ${"x".repeat(1000)}\n\n`.repeat(20));
    });
    const error = await (await fetchWith()(up.url)).text().catch((err: unknown) => err);
    expect((error as Error).message).toBe(
      "streamed more than 16 KiB in one answer (maxStreamBytes)",
    );
  });

  it("a body that falls silent › fails naming idleTimeoutMs", async () => {
    up.handle((_req, res) => {
      res.setHeader("content-type", "text/event-stream");
      res.write("data: {}\n\n");
    });
    const error = await (await fetchWith()(up.url)).text().catch((err: unknown) => err);
    expect((error as Error).message).toBe("sent nothing for 300 ms (idleTimeoutMs)");
  });

  it("content types › an HTML page is named, JSON served as text/plain passes", async () => {
    up.handle((_req, res) => {
      res.setHeader("content-type", "text/plain");
      res.end('{"name":"static card"}');
    });
    expect(await (await fetchWith()(up.url)).json()).toEqual({ name: "static card" });

    up.handle((_req, res) => {
      res.setHeader("content-type", "text/html; charset=utf-8");
      res.end("<html><body>Welcome to nginx!</body></html>");
    });
    const page = await fetchWith()(up.url).catch((err: unknown) => err);
    expect(page).toBeInstanceOf(UpstreamFault);
    expect((page as Error).message).toBe(
      'answered with content type "text/html", not application/json',
    );
    const stream = await fetchWith()(up.url, { headers: { accept: "text/event-stream" } }).catch(
      (err: unknown) => err,
    );
    expect((stream as Error).message).toBe(
      'answered with content type "text/html", not text/event-stream',
    );

    up.handle((_req, res) => {
      res.statusCode = 503;
      res.setHeader("content-type", "text/html");
      res.end(`<h1>Service Unavailable</h1>${"x".repeat(20_000)}`);
    });
    const error = await fetchWith()(up.url).catch((err: unknown) => err);
    expect((error as Error).message).toMatch(
      /^answered HTTP 503 \("text\/html"\): "<h1>Service Unavailable<\/h1>x+…"$/,
    );
  });

  it("no status line within connectTimeoutMs › fails naming connectTimeoutMs", async () => {
    up.handle(() => {});
    const error = await fetchWith({ connectTimeoutMs: 200 })(up.url).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(UpstreamFault);
    expect((error as Error).message).toBe("did not answer within 200 ms (connectTimeoutMs)");
  });
});

describe("a2a adapter: a misbehaving A2A agent fails its own run, naming its fault", () => {
  let up: Awaited<ReturnType<typeof upstream>>;
  let t: TestApp;
  const agent = agentIdFor("faulty", "1.0.0");

  beforeAll(async () => {
    up = await upstream();
    t = await build({
      yaml: `
agents:
  - name: faulty
    version: 1.0.0
    description: A hand-made A2A agent that breaks the bounds.
    adapter:
      type: a2a
      url: ${up.url}/card.json
      idleTimeoutMs: 300
      cardRefreshSeconds: 0
    limits:
      maxEventBytes: 4096
`,
    });
  });
  afterAll(async () => {
    await t?.close();
    await up?.close();
  });

  /** Answers the card, then hands JSON-RPC calls to `rpc`. */
  function agentAnswers(rpc: (method: string, res: http.ServerResponse, id: unknown) => void) {
    up.handle((req, res, body) => {
      if (req.method === "GET") {
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            name: "faulty",
            description: "breaks things",
            version: "1",
            supportedInterfaces: [
              { url: `${up.url}/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
            ],
            capabilities: { streaming: true },
            defaultInputModes: ["text/plain"],
            defaultOutputModes: ["text/plain"],
            skills: [],
          }),
        );
        return;
      }
      const call = JSON.parse(body) as { method: string; id: unknown };
      rpc(call.method, res, call.id);
    });
  }
  const sse = (res: http.ServerResponse, id: unknown, result: unknown) => {
    if (!res.headersSent) res.setHeader("content-type", "text/event-stream");
    res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`);
  };
  const task = { task: { id: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } } };

  async function runError(): Promise<string> {
    const res = await t.call("POST", "/runs/wait", {
      agent_id: agent,
      input: { messages: [{ role: "user", content: "hi" }] },
    });
    const run = (res.body as { run: { run_id: string; status: string } }).run;
    expect(run.status).toBe("error");
    const stored = await t.storage.getRun(run.run_id);
    return (stored!.output as { description: string }).description;
  }

  it("an event over maxEventBytes › run error naming the agent and maxEventBytes; the task is canceled", async () => {
    const methods: string[] = [];
    agentAnswers((method, res, id) => {
      methods.push(method);
      if (method === "CancelTask") {
        res.setHeader("content-type", "application/json");
        res.end(JSON.stringify({ jsonrpc: "2.0", id, result: task.task }));
        return;
      }
      // Back to back: the task before the oversized event still reaches the adapter.
      sse(res, id, task);
      sse(res, id, {
        statusUpdate: {
          taskId: "t-1",
          contextId: "c-1",
          status: {
            state: "TASK_STATE_WORKING",
            message: {
              messageId: "m",
              role: "ROLE_AGENT",
              parts: [{ text: "x".repeat(10_000) }],
            },
          },
        },
      });
      res.end();
    });
    expect(await runError()).toBe(
      `agent failed: the A2A agent at ${up.url}/card.json sent an SSE event larger than 4 KiB, the most one event may be (limits.maxEventBytes)`,
    );
    await vi.waitFor(() => expect(methods).toContain("CancelTask"));
  });

  it("silence over idleTimeoutMs › run error naming idleTimeoutMs", async () => {
    agentAnswers((method, res, id) => {
      if (method === "CancelTask") return res.end();
      sse(res, id, task);
    });
    expect(await runError()).toBe(
      `agent failed: the A2A agent at ${up.url}/card.json sent nothing for 300 ms (idleTimeoutMs)`,
    );
  });

  it("a JSON-RPC error for the send › run error quoting the agent's error", async () => {
    agentAnswers((_method, res, id) => {
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id,
          error: { code: -32603, message: "model overloaded" },
        }),
      );
    });
    const description = await runError();
    expect(description).toMatch(
      /^agent failed: the A2A agent at http:\/\/127\.0\.0\.1:\d+\/card\.json failed: /,
    );
    expect(description).toContain("model overloaded");
  });

  it("garbage in the stream › run error naming the agent and the malformed event", async () => {
    agentAnswers((method, res, id) => {
      if (method === "CancelTask") return res.end();
      sse(res, id, task);
      res.end("data: {not json\n\n");
    });
    expect(await runError()).toMatch(
      /^agent failed: the A2A agent at http:\/\/127\.0\.0\.1:\d+\/card\.json sent malformed JSON in an SSE event \(.*\): "\{not json"$/,
    );
  });

  it("a stream that ends before its task, with a task nobody can read › run error, not a loop", async () => {
    const methods: string[] = [];
    agentAnswers((method, res, id) => {
      methods.push(method);
      if (method === "SendStreamingMessage") {
        sse(res, id, task);
        return res.end();
      }
      res.setHeader("content-type", "application/json");
      res.end(
        JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32001, message: "task not found" } }),
      );
    });
    expect(await runError()).toContain("task not found");
    expect(methods.slice(0, 2)).toEqual(["SendStreamingMessage", "GetTask"]);
  });
});
