/**
 * The LangGraph face behind the same doors as every face, met with LangGraph's client: an API
 * key as `x-api-key` (what the client sends for `apiKey`) or as a bearer token, a user's JWT;
 * refusals as `{detail}`; another caller's threads and runs answered as ones that do not exist;
 * a key for other agents sees no other assistant; CORS for a browser app.
 */
import { Client, ProtocolSseTransportAdapter } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "../helpers/app.js";
import { startIssuer, type TestIssuer } from "../helpers/jwt-issuer.js";
import { listen } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";

const KEY = "app-key-0123456789abcdef";
const OTHER_KEY = "other-key-0123456789abcdef";
const ORIGIN = "https://chat.example.com";
const human = (content: string) => ({ messages: [{ type: "human", content }] });

describe("the LangGraph face with API keys and tokens", () => {
  let t: TestApp;
  let issuer: TestIssuer;
  let api: string;
  beforeAll(async () => {
    issuer = await startIssuer();
    t = await buildServing(
      {
        server: {
          auth: {
            keys: [
              { key: KEY, name: "app" },
              { key: OTHER_KEY, name: "other", agents: ["other"] },
            ],
            jwt: { issuer: issuer.issuer, audience: issuer.audience, jwksUrl: issuer.jwksUrl },
          },
          cors: { origins: [ORIGIN] },
        },
        agents: [echoAgent("echo"), echoAgent("other")],
      },
      { unchecked: true },
    );
    api = `${await listen(t)}/langgraph`;
  });
  afterAll(async () => {
    await t?.close();
    await issuer?.close();
  });

  it("serves a client with the key as x-api-key, and one with it as a bearer token", async () => {
    const byKey = new Client({ apiUrl: api, apiKey: KEY });
    const thread = await byKey.threads.create();
    const values = (await byKey.runs.wait(thread.thread_id, "echo", {
      input: human("with a key"),
    })) as { messages: Array<{ content: string }> };
    expect(values.messages.at(-1)!.content).toBe("with a key");
    const byBearer = new Client({
      apiUrl: api,
      apiKey: null,
      defaultHeaders: { authorization: `Bearer ${KEY}` },
    });
    expect((await byBearer.threads.get(thread.thread_id)).thread_id).toBe(thread.thread_id);
  });

  it("refuses a client without a key or with a wrong one, with a 401 and a detail", async () => {
    const anonymous = new Client({ apiUrl: api, apiKey: null });
    await expect(anonymous.assistants.search()).rejects.toThrow(/401.*detail/s);
    const wrong = new Client({ apiUrl: api, apiKey: "not-a-key-at-all-0123456789" });
    await expect(wrong.threads.create()).rejects.toThrow(/401/);
  });

  it("answers another caller's thread and run as ones that do not exist", async () => {
    const alice = new Client({
      apiUrl: api,
      apiKey: null,
      defaultHeaders: { authorization: `Bearer ${await issuer.token("alice")}` },
    });
    const bob = new Client({
      apiUrl: api,
      apiKey: null,
      defaultHeaders: { authorization: `Bearer ${await issuer.token("bob")}` },
    });
    const thread = await alice.threads.create({ metadata: { who: "alice" } });
    const run = await alice.runs.create(thread.thread_id, "echo", { input: human("mine") });
    await alice.runs.join(thread.thread_id, run.run_id);

    await expect(bob.threads.get(thread.thread_id)).rejects.toThrow(/404/);
    await expect(bob.threads.getState(thread.thread_id)).rejects.toThrow(/404/);
    await expect(bob.runs.get(thread.thread_id, run.run_id)).rejects.toThrow(/404/);
    await expect(
      bob.runs.wait(thread.thread_id, "echo", { input: human("not yours") }),
    ).rejects.toThrow(/404/);
    expect(await bob.threads.search({ metadata: { who: "alice" } })).toEqual([]);
    expect((await alice.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("over v2 thread streaming too: the key works, another caller's thread does not exist", async () => {
    const byKey = new Client({ apiUrl: api, apiKey: KEY });
    const mine = await byKey.threads.create();
    const stream = byKey.threads.stream(mine.thread_id, { assistantId: "echo" });
    try {
      await stream.run.start({ input: human("v2 with a key") });
      const output = (await stream.output) as { messages: Array<{ content: string }> };
      expect(output.messages.at(-1)!.content).toBe("v2 with a key");
    } finally {
      await stream.close();
    }

    const aliceHeaders = { authorization: `Bearer ${await issuer.token("alice")}` };
    const bobHeaders = { authorization: `Bearer ${await issuer.token("bob")}` };
    const alice = new Client({ apiUrl: api, apiKey: null, defaultHeaders: aliceHeaders });
    const bob = new Client({ apiUrl: api, apiKey: null, defaultHeaders: bobHeaders });
    const thread = await alice.threads.create();
    await alice.runs.wait(thread.thread_id, "echo", { input: human("mine") });
    const intruder = bob.threads.stream(thread.thread_id, { assistantId: "echo" });
    try {
      await expect(intruder.state.get({ namespace: [] })).rejects.toThrow(/404/);
      await expect(intruder.run.start({ input: human("not yours") })).rejects.toThrow(/404/);
    } finally {
      await intruder.close();
    }
    const transport = new ProtocolSseTransportAdapter({
      apiUrl: api,
      threadId: thread.thread_id,
      defaultHeaders: bobHeaders,
      maxReconnectAttempts: 0,
    });
    const events = transport.openEventStream({ channels: ["values"] });
    await expect(events.ready).rejects.toThrow(/404/);
    await transport.close();
    expect((await alice.threads.get(thread.thread_id)).status).toBe("idle");
  });

  it("shows a key for other agents only those assistants", async () => {
    const other = new Client({ apiUrl: api, apiKey: OTHER_KEY });
    const found = await other.assistants.search();
    expect(found.map((a) => a.assistant_id)).toEqual(["other"]);
    await expect(other.assistants.get("echo")).rejects.toThrow(/404/);
    await expect(other.runs.wait(null, "echo", { input: human("x") })).rejects.toThrow(/404/);
  });

  it("answers a browser app's preflight, and lets it read Content-Location", async () => {
    const preflight = await fetch(`${api}/threads/search`, {
      method: "OPTIONS",
      headers: {
        origin: ORIGIN,
        "access-control-request-method": "POST",
        "access-control-request-headers": "content-type,x-api-key",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    const stream = await fetch(`${api}/runs/stream`, {
      method: "POST",
      headers: { origin: ORIGIN, "content-type": "application/json", "x-api-key": KEY },
      body: JSON.stringify({ assistant_id: "echo", input: human("cors") }),
    });
    expect(stream.headers.get("access-control-allow-origin")).toBe(ORIGIN);
    expect(stream.headers.get("access-control-expose-headers")).toMatch(/content-location/);
    expect(stream.headers.get("content-location")).toMatch(/^\/runs\/[0-9a-f-]{36}$/);
    await stream.text();
  });
});
