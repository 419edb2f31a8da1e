/**
 * A tools/call's SSE stream across replicas sharing one PostgreSQL (real CLI processes): the
 * call starts on one replica with a progress token, its stream drops mid-run, and the other
 * replica resumes it with `Last-Event-ID` and the session id, from the run's stored frames and
 * then live: every progress value after the last one seen, once and in order, then the result
 * under the call's request id. The session, recorded in the store, is served by both. A forged
 * event id, another session's and another caller's are refused.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema, type Progress } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import { textOf } from "../mcp/helpers.js";
import {
  callAndDrop,
  eventsOf,
  openSession,
  progressOf,
  resume,
  type SseEvent,
  textOfAnswer,
} from "../mcp/sse-calls.js";
import { MCP_REPLICA_CONFIG } from "./mcp-agents.js";
import { replicasOfSuite, until } from "./replicas.js";

const KEY = "first-key-0123456789abcdef";
const OTHER_KEY = "second-key-0123456789abcdef";
// The replica tests' agents, with two callers.
const CONFIG = MCP_REPLICA_CONFIG.replace(
  "server:\n",
  `server:\n  auth:\n    keys:\n      - { key: ${KEY}, name: first }\n      - { key: ${OTHER_KEY}, name: second }\n`,
);
const first = { authorization: `Bearer ${KEY}` };
const second = { authorization: `Bearer ${OTHER_KEY}` };
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i}`).join(" ");

const progressMessages = (events: SseEvent[]) =>
  events
    .filter((event) => event.message?.method === "notifications/progress")
    .map((event) => (event.message!.params as { message?: string }).message);

describe("MCP call streams resumed on another replica", () => {
  const replicas = replicasOfSuite("acp_mcpres", CONFIG);
  const urlOf = (i: number) => `${replicas[i]!.url}/mcp`;

  it("a stream dropped on one replica mid-run resumes on the other, missing nothing", async () => {
    const text = words(40);
    const session = await openSession(urlOf(0), first);
    const { events, lastEventId } = await callAndDrop(urlOf(0), session, {
      id: 3,
      name: "slow",
      message: text,
      progressEvents: 3,
    });
    const resumed = await resume(urlOf(1), session, lastEventId);
    expect(resumed.status).toBe(200);
    const rest = eventsOf(await resumed.text());
    const seen = progressOf(events);
    const progress = progressOf(rest);
    expect(progress.length).toBeGreaterThan(0);
    for (const [i, value] of progress.entries()) {
      expect(value).toBeGreaterThan(i === 0 ? seen.at(-1)! : progress[i - 1]!);
    }
    // The reply as it was written, to its end: nothing of it was missed.
    expect(progressMessages(rest).at(-1)).toBe(text);
    expect(textOfAnswer(rest, 3)).toBe(text);
    expect(rest.at(-1)!.message).toMatchObject({ jsonrpc: "2.0", id: 3 });

    // The session is the other replica's too: it answers the session's requests.
    const listed = await fetch(urlOf(1), {
      method: "POST",
      headers: session,
      body: JSON.stringify({ jsonrpc: "2.0", id: 4, method: "tools/list" }),
    });
    expect(listed.status).toBe(200);
    const answer = eventsOf(await listed.text()).find((event) => event.message?.id === 4);
    expect((answer!.message!.result as { tools: unknown[] }).tools.length).toBe(2);
  }, 60_000);

  it("refuses a forged event id, another session's and another caller's", async () => {
    const session = await openSession(urlOf(0), first);
    const { lastEventId } = await callAndDrop(urlOf(0), session, {
      id: 5,
      name: "slow",
      message: words(20),
      progressEvents: 1,
    });
    const forged = await resume(urlOf(1), session, "not-an-event-id");
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({ jsonrpc: "2.0", error: {} });
    const unknown = await resume(urlOf(1), session, `${"0".repeat(32)}.1`);
    expect(unknown.status).toBe(404);

    // The same caller's other session, the other caller's session, the other caller with
    // this session's id: not found, and nothing of the stream.
    const otherSession = await openSession(urlOf(1), first);
    const theirs = await openSession(urlOf(1), second);
    for (const headers of [otherSession, theirs, { ...session, ...second }]) {
      const refused = await resume(urlOf(1), headers, lastEventId);
      expect(refused.status).toBe(404);
      expect(await refused.json()).toMatchObject({ jsonrpc: "2.0", error: { code: -32001 } });
    }
    // Its own caller still resumes it there.
    const mine = await resume(urlOf(1), session, lastEventId);
    expect(mine.status).toBe(200);
    expect(textOfAnswer(eventsOf(await mine.text()), 5)).toBe(words(20));
  }, 60_000);

  it("the SDK's client resumes on the other replica with its resumption token", async () => {
    const text = words(40);
    const sdkClient = async (url: string, sessionId?: string) => {
      const transport = new StreamableHTTPClientTransport(new URL(url), {
        sessionId,
        requestInit: { headers: first },
      });
      const client = new Client({ name: "resume-test", version: "1.0.0" });
      await client.connect(transport);
      return { client, transport };
    };
    const call = { method: "tools/call", params: { name: "slow", arguments: { message: text } } };
    // On A: initialize is request 0, the call request 1 (its progress token). Its stream drops
    // (the transport closes) after a few progress notifications; the run goes on.
    const a = await sdkClient(urlOf(0));
    const seen: Progress[] = [];
    let token: string | undefined;
    const dropped = a.client
      .request(call, CallToolResultSchema, {
        onprogress: (progress) => {
          seen.push(progress);
          if (seen.length === 3) void a.transport.close();
        },
        onresumptiontoken: (id) => {
          token = id;
        },
      })
      .catch((err: Error) => err);
    expect(await dropped).toBeInstanceOf(Error);
    await until(async () => token !== undefined, 10_000, "a resumption token");
    // On B, in the same session: request 0 is a listing, so the resumed call is request 1 and
    // the client takes the resumed progress notifications (token 1) as its own.
    const b = await sdkClient(urlOf(1), a.transport.sessionId);
    expect((await b.client.listTools()).tools.map((tool) => tool.name)).toContain("slow");
    const rest: Progress[] = [];
    const result = await b.client.request(call, CallToolResultSchema, {
      resumptionToken: token,
      onprogress: (progress) => rest.push(progress),
    });
    expect(textOf(result)).toBe(text);
    expect(rest.length).toBeGreaterThan(0);
    for (const [i, p] of rest.entries()) {
      expect(p.progress).toBeGreaterThan(i === 0 ? seen.at(-1)!.progress : rest[i - 1]!.progress);
    }
    expect(rest.at(-1)!.message).toBe(text);
    await b.client.close();
  }, 60_000);

  it("a question pending when the stream dropped: the other replica answers what was asked", async () => {
    const session = await openSession(urlOf(0), first, { elicitation: { form: {} } });
    const { events, lastEventId } = await callAndDrop(urlOf(0), session, {
      id: 9,
      name: "approval",
      message: "plan",
      progressEvents: 0,
      until: (seen) => seen.some((event) => event.message?.method === "elicitation/create"),
    });
    expect(events.find((event) => event.message?.method === "elicitation/create")).toBeDefined();
    // B does not ask again (A waits for that answer): the call ends saying what the agent
    // asked and how to answer it.
    const resumed = await resume(urlOf(1), session, lastEventId);
    expect(resumed.status).toBe(200);
    const rest = eventsOf(await resumed.text());
    expect(rest.some((event) => event.message?.method === "elicitation/create")).toBe(false);
    const answer = rest.find((event) => event.message?.id === 9)!.message as {
      result: { isError: boolean; content: Array<{ text: string }> };
    };
    expect(answer.result.isError).toBe(true);
    expect(answer.result.content[0]!.text).toContain("Go ahead?");
  }, 60_000);
});
