/**
 * Hostile JSON-RPC inside an MCP session: malformed messages, batches, unknown methods and
 * tools, arguments that are not the tool's, task ids of nobody, ids of every type, answers to
 * elicitations that were never asked. Each is
 * answered with a JSON-RPC result or error (never an internal error, which client input cannot
 * cause) and never a 5xx; the session still lists its tools after every batch.
 */
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { listen } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";

const RUNS = Number(process.env.FUZZ_RUNS) || 200;
const HEADERS = {
  "content-type": "application/json",
  accept: "application/json, text/event-stream",
};
const METHODS = [
  "tools/call",
  "tools/list",
  "tasks/get",
  "tasks/result",
  "tasks/list",
  "tasks/cancel",
  "initialize",
  "ping",
  "resources/list",
  "prompts/get",
  "logging/setLevel",
  "notifications/cancelled",
  "notifications/initialized",
  "elicitation/create",
];

/** The JSON-RPC messages of an answer, JSON or SSE. */
function messagesOf(type: string, text: string): unknown[] {
  if (type.startsWith("application/json")) {
    const body = JSON.parse(text) as unknown;
    return Array.isArray(body) ? body : [body];
  }
  return text
    .split("\n")
    .filter((line) => line.startsWith("data: ") && line.length > 6)
    .map((line) => JSON.parse(line.slice(6)) as unknown);
}

describe("hostile JSON-RPC in an MCP session", () => {
  let t: TestApp;
  let base: string;
  let session: Record<string, string>;
  let taskId: string;

  const post = (body: string, headers = session) =>
    fetch(`${base}/mcp`, { method: "POST", headers, body });

  beforeAll(async () => {
    t = await buildServing(
      { agents: [echoAgent("alpha"), echoAgent("beta")] },
      { unchecked: true },
    );
    base = await listen(t);
    const opened = await post(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: "2025-11-25",
          capabilities: {},
          clientInfo: { name: "fuzz", version: "1" },
        },
      }),
      HEADERS,
    );
    await opened.text();
    session = {
      ...HEADERS,
      "mcp-session-id": opened.headers.get("mcp-session-id")!,
      "mcp-protocol-version": "2025-11-25",
    };
    await post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }));
    const created = await post(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: { name: "alpha", arguments: { message: "hi" }, task: {} },
      }),
    );
    const [answer] = messagesOf(created.headers.get("content-type") ?? "", await created.text());
    taskId = (answer as { result: { task: { taskId: string } } }).result.task.taskId;
  });
  afterAll(async () => {
    await t?.close();
  });

  const params = () =>
    fc.oneof(
      fc.anything(),
      fc.record(
        {
          name: fc.oneof(fc.constantFrom("alpha", "beta", "gamma", ""), fc.anything()),
          arguments: fc.oneof(
            fc.record(
              { message: fc.oneof(fc.string(), fc.anything()), context: fc.anything() },
              { requiredKeys: [] },
            ),
            fc.anything(),
          ),
          task: fc.oneof(fc.constant({}), fc.anything()),
          taskId: fc.oneof(fc.constant(taskId), fc.uuid(), fc.anything()),
          cursor: fc.oneof(fc.string(), fc.anything()),
          _meta: fc.anything(),
        },
        { requiredKeys: [] },
      ),
    );
  const message = () =>
    fc.record(
      {
        jsonrpc: fc.oneof(
          { weight: 8, arbitrary: fc.constant("2.0") },
          { weight: 1, arbitrary: fc.anything() },
        ),
        id: fc.oneof(fc.integer(), fc.string({ maxLength: 20 }), fc.constant(null), fc.anything()),
        method: fc.oneof(
          { weight: 6, arbitrary: fc.constantFrom(...METHODS) },
          { weight: 1, arbitrary: fc.string() },
        ),
        params: params(),
      },
      { requiredKeys: ["method"] },
    );
  // Answers to requests the server never sent (an elicitation nobody asked for).
  const answer = () =>
    fc.record({
      jsonrpc: fc.constant("2.0"),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 20 })),
      result: fc.oneof(
        fc.record({
          action: fc.constantFrom("accept", "decline", "cancel"),
          content: fc.anything(),
        }),
        fc.anything(),
      ),
    });
  const bodies = fc.oneof(
    { weight: 6, arbitrary: message().map((m) => JSON.stringify(m)) },
    { weight: 1, arbitrary: answer().map((m) => JSON.stringify(m)) },
    { weight: 1, arbitrary: fc.array(message(), { maxLength: 3 }).map((m) => JSON.stringify(m)) },
    { weight: 1, arbitrary: fc.string() },
    { weight: 1, arbitrary: fc.json() },
  );

  it("answers every message with a JSON-RPC result or error, never a 5xx", async () => {
    const seen = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(bodies, async (body) => {
        const response = await post(body);
        const text = await response.text();
        seen.set(response.status, (seen.get(response.status) ?? 0) + 1);
        const where = `${response.status} ${text.slice(0, 300)} ← ${body.slice(0, 300)}`;
        expect(response.status, where).toBeLessThan(500);
        const type = response.headers.get("content-type") ?? "";
        if (text === "") return;
        for (const answer of messagesOf(type, text) as Array<Record<string, unknown>>) {
          expect(answer.jsonrpc, where).toBe("2.0");
          expect("result" in answer || "error" in answer || "method" in answer, where).toBe(true);
          expect((answer.error as { code?: number } | undefined)?.code, where).not.toBe(-32603);
        }
      }),
      { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED) || undefined, endOnFailure: true },
    );
    console.log(`hostile MCP messages by status: ${JSON.stringify([...seen.entries()])}`);
    const listed = await post(
      JSON.stringify({ jsonrpc: "2.0", id: "after", method: "tools/list" }),
    );
    const [answer] = messagesOf(listed.headers.get("content-type") ?? "", await listed.text());
    expect((answer as { result: { tools: unknown[] } }).result.tools).toHaveLength(2);
  }, 120_000);

  // Resuming a stream: forged, malformed and borrowed Last-Event-ID and session headers.
  it("answers every Last-Event-ID with a stream or a 4xx JSON-RPC error, never a 5xx", async () => {
    const key = fc.stringMatching(/^[0-9a-f]{32}$/);
    const lastEventIds = fc.oneof(
      fc.string({ maxLength: 200 }).filter((id) => /^[\x21-\x7e]+$/.test(id)),
      fc
        .tuple(key, fc.nat(), fc.option(fc.nat()))
        .map(([k, seq, n]) => (n === null ? `${k}.${seq}` : `${k}.${seq}.${n}`)),
      fc.tuple(key, fc.string({ maxLength: 20 })).map(([k, rest]) => `${k}.${rest}`),
    );
    const sessionIds = fc.oneof(
      fc.constant(session["mcp-session-id"]!),
      fc.uuid(),
      fc.string({ maxLength: 60 }).filter((id) => /^[\x21-\x7e]+$/.test(id)),
    );
    await fc.assert(
      fc.asyncProperty(lastEventIds, sessionIds, async (lastEventId, sessionId) => {
        const response = await fetch(`${base}/mcp`, {
          method: "GET",
          headers: {
            ...session,
            accept: "text/event-stream",
            "mcp-session-id": sessionId,
            "last-event-id": lastEventId,
          },
        });
        const text = await response.text();
        const where = `${response.status} ${text.slice(0, 300)} ← ${sessionId} ${lastEventId}`;
        expect(response.status, where).toBeLessThan(500);
        if (response.status >= 400) {
          expect(JSON.parse(text), where).toMatchObject({ jsonrpc: "2.0", error: {} });
        }
      }),
      { numRuns: RUNS, seed: Number(process.env.FUZZ_SEED) || undefined, endOnFailure: true },
    );
  }, 120_000);
});
