/**
 * Hostile requests of MCP 2026-07-28 (stateless, no session): `_meta` envelopes missing, of
 * the wrong type or of unknown versions, `MCP-Protocol-Version` / `Mcp-Method` / `Mcp-Name`
 * headers that do not match the body (or are absent, or Base64 sentinels of anything),
 * unknown methods and tools, arguments that are not the tool's, `inputResponses` and
 * `requestState` of every shape (forged states, states of runs that do not ask), task ids of
 * nobody. Each is answered with a JSON-RPC result or error, never -32603 and never a 5xx.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";

const RUNS = Number(process.env.FUZZ_RUNS) || 200;
const V = "2026-07-28";
const METHODS = [
  "server/discover",
  "tools/list",
  "tools/call",
  "tasks/get",
  "tasks/update",
  "tasks/cancel",
  "tasks/result",
  "tasks/list",
  "subscriptions/listen",
  "initialize",
  "ping",
];
const TASKS = { extensions: { "io.modelcontextprotocol/tasks": {} } };

describe("hostile MCP 2026-07-28 requests", () => {
  let t: TestApp;
  let base: string;
  let taskId: string;

  beforeAll(async () => {
    t = await buildServing(
      { agents: [echoAgent("alpha"), echoAgent("beta")] },
      { unchecked: true },
    );
    base = await listen(t);
    const created = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": V,
        "mcp-method": "tools/call",
        "mcp-name": "alpha",
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "alpha",
          arguments: { message: "hi" },
          _meta: {
            "io.modelcontextprotocol/protocolVersion": V,
            "io.modelcontextprotocol/clientCapabilities": TASKS,
          },
        },
      }),
    });
    taskId = ((await created.json()) as { result: { taskId: string } }).result.taskId;
  });
  afterAll(async () => {
    await t?.close();
  });

  const base64 = (value: string) => `=?base64?${Buffer.from(value).toString("base64")}?=`;
  const meta = () =>
    fc.oneof(
      {
        weight: 20,
        arbitrary: fc.record(
          {
            "io.modelcontextprotocol/protocolVersion": fc.oneof(
              { weight: 6, arbitrary: fc.constant(V) },
              { weight: 1, arbitrary: fc.constantFrom("2025-11-25", "2027-01-01", "") },
              { weight: 1, arbitrary: fc.anything() },
            ),
            "io.modelcontextprotocol/clientCapabilities": fc.oneof(
              {
                weight: 6,
                arbitrary: fc.constantFrom(
                  {},
                  TASKS,
                  { elicitation: {} },
                  { elicitation: { url: {} } },
                ),
              },
              { weight: 1, arbitrary: fc.anything() },
            ),
            "io.modelcontextprotocol/clientInfo": fc.anything(),
            traceparent: fc.oneof(fc.string(), fc.anything()),
            progressToken: fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.anything()),
          },
          {
            requiredKeys: [
              "io.modelcontextprotocol/protocolVersion",
              "io.modelcontextprotocol/clientCapabilities",
            ],
          },
        ),
      },
      { weight: 1, arbitrary: fc.anything() },
    );
  const params = () =>
    fc.oneof(
      {
        weight: 20,
        arbitrary: fc.record(
          {
            name: fc.oneof(fc.constantFrom("alpha", "beta", "gamma", ""), fc.anything()),
            arguments: fc.oneof(
              fc.record(
                { message: fc.oneof(fc.string(), fc.anything()), context: fc.anything() },
                { requiredKeys: [] },
              ),
              fc.anything(),
            ),
            taskId: fc.oneof(fc.constant(taskId), fc.uuid(), fc.anything()),
            notifications: fc.oneof(
              fc.record({
                taskIds: fc.oneof(fc.constant([taskId]), fc.array(fc.uuid()), fc.anything()),
              }),
              fc.anything(),
            ),
            inputResponses: fc.oneof(
              fc.dictionary(
                fc.string({ maxLength: 20 }),
                fc.oneof(
                  fc.record({
                    action: fc.constantFrom("accept", "decline", "cancel", "other"),
                    content: fc.anything(),
                  }),
                  fc.anything(),
                ),
              ),
              fc.anything(),
            ),
            requestState: fc.oneof(
              fc.string(),
              fc.base64String(),
              fc
                .record({
                  v: fc.constant(1),
                  r: fc.oneof(fc.constant(taskId), fc.uuid()),
                  t: fc.constantFrom("alpha", "beta"),
                  i: fc.array(fc.string()),
                })
                .map((state) => Buffer.from(JSON.stringify(state)).toString("base64url")),
              fc.anything(),
            ),
            _meta: meta(),
          },
          { requiredKeys: ["_meta"] },
        ),
      },
      // Last: fast-check's oneof leans to its first choice as depth grows.
      { weight: 1, arbitrary: fc.anything() },
    );
  const request = () =>
    fc.record(
      {
        jsonrpc: fc.oneof(
          { weight: 8, arbitrary: fc.constant("2.0") },
          { weight: 1, arbitrary: fc.anything() },
        ),
        id: fc.oneof(
          { weight: 6, arbitrary: fc.oneof(fc.integer(), fc.string({ maxLength: 20 })) },
          { weight: 1, arbitrary: fc.oneof(fc.constant(null), fc.anything()) },
        ),
        method: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...METHODS) },
          { weight: 1, arbitrary: fc.string() },
        ),
        params: params(),
      },
      { requiredKeys: ["jsonrpc", "id", "method"] },
    );
  /** The body, and headers that mirror it (mostly) or lie about it. */
  const posts = request().chain((body) => {
    const params = body.params as { name?: unknown } | undefined;
    const name = typeof params === "object" && params !== null ? params.name : undefined;
    const method = typeof body.method === "string" ? body.method : "tools/call";
    return fc
      .record(
        {
          "mcp-protocol-version": fc.oneof(
            { weight: 6, arbitrary: fc.constant(V) },
            { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
          ),
          "mcp-method": fc.oneof(
            { weight: 6, arbitrary: fc.constant(method) },
            { weight: 1, arbitrary: fc.constantFrom(...METHODS) },
          ),
          "mcp-name": fc.oneof(
            { weight: 4, arbitrary: fc.constant(typeof name === "string" ? name : "alpha") },
            { weight: 1, arbitrary: fc.string({ maxLength: 30 }).map(base64) },
            { weight: 1, arbitrary: fc.constantFrom("=?base64?!!!?=", "beta") },
          ),
        },
        { requiredKeys: ["mcp-protocol-version", "mcp-method", "mcp-name"] },
      )
      .map((headers) => ({ body: JSON.stringify(body), headers }));
  });

  /** Posts one request; its answer must be JSON-RPC, never -32603, never a 5xx. */
  const check = async (
    seen: Map<number, number>,
    { body, headers }: { body: string; headers: Record<string, string> },
  ) => {
    const response = await fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        ...Object.fromEntries(
          Object.entries(headers).filter(([, value]) => /^[\x20-\x7e]*$/.test(value)),
        ),
      },
      body,
    });
    const text = await response.text();
    seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
    const where = `${response.status} ${text.slice(0, 300)} ← ${JSON.stringify(headers)} ${body.slice(0, 300)}`;
    expect(response.status, where).toBeLessThan(500);
    if (text === "") return;
    // One JSON answer, or a subscription's SSE stream of messages.
    const answers = (response.headers.get("content-type") ?? "").startsWith("text/event-stream")
      ? text
          .split("\n")
          .filter((line) => line.startsWith("data: "))
          .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>)
      : [JSON.parse(text) as Record<string, unknown>];
    for (const answer of answers) {
      expect(answer.jsonrpc, where).toBe("2.0");
      expect("result" in answer || "error" in answer || "method" in answer, where).toBe(true);
      expect((answer.error as { code?: number } | undefined)?.code, where).not.toBe(-32603);
    }
  };

  it("answers every request with a JSON-RPC result or error, never -32603 or a 5xx", async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(posts, (post) => check(seen, post)),
      { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED) || undefined, endOnFailure: true },
    );
    console.log(`hostile MCP 2026 requests by status: ${JSON.stringify([...seen.entries()])}`);
  });

  it("answers well-framed requests with hostile params the same way", async () => {
    const seen = new Map<number, number>();
    const framed = fc
      .tuple(
        fc.constantFrom(
          "tools/call",
          "tasks/get",
          "tasks/update",
          "tasks/cancel",
          "tools/list",
          "subscriptions/listen",
        ),
        params(),
        fc.constantFrom({}, TASKS, { elicitation: {} }),
        fc.option(fc.oneof(fc.integer(), fc.string({ maxLength: 10 }))),
      )
      .map(([method, given, capabilities, progressToken]) => {
        const own =
          typeof given === "object" && given !== null && !Array.isArray(given) ? given : {};
        const name =
          typeof (own as { name?: unknown }).name === "string"
            ? (own as { name: string }).name
            : "alpha";
        const body = {
          jsonrpc: "2.0",
          id: 7,
          method,
          params: {
            ...own,
            name,
            _meta: {
              "io.modelcontextprotocol/protocolVersion": V,
              "io.modelcontextprotocol/clientCapabilities": capabilities,
              ...(progressToken === null ? {} : { progressToken }),
            },
          },
        };
        return {
          body: JSON.stringify(body),
          headers: { "mcp-protocol-version": V, "mcp-method": method, "mcp-name": base64(name) },
        };
      });
    await fc.assert(
      fc.asyncProperty(framed, (post) => check(seen, post)),
      { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED) || undefined, endOnFailure: true },
    );
    console.log(`well-framed MCP 2026 requests by status: ${JSON.stringify([...seen.entries()])}`);
  });
});
