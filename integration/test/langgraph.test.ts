/**
 * LangGraph: a LangGraph JS graph (`agents/langgraph-graph.ts`) served by the LangGraph API
 * server (`@langchain/langgraph-api`, started here), reached through `@ag-ui/langgraph`'s
 * LangGraphAgent two ways: in-process as a `module` agent, and over `agui-http` through an
 * AG-UI endpoint (`servers/langgraph-agui-endpoint.mjs`). The LangGraph server is the upstream
 * the tests look at: its runs and its copy of each thread.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@langchain/langgraph-sdk";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { LONG_STORY } from "../agents/script.mjs";
import { AcpClient, streamedText, userSays } from "./helpers/acp.js";
import { acpFlows } from "./helpers/acp-flows.js";
import { faceFlows } from "./helpers/face-flows.js";
import {
  eventually,
  integrationRoot,
  type Service,
  startAcpAgui,
  startService,
} from "./helpers/services.js";
import type { Stack } from "./helpers/stack.js";

let langgraph: Service;
let endpoint: Service;
let server: Service;
let acp: AcpClient;
let sdk: Client;
const ids: Record<string, string> = {};

beforeAll(async () => {
  langgraph = await startService(
    "LangGraph API server",
    [
      "--import",
      "tsx",
      join(integrationRoot, "servers/langgraph-server.mjs"),
      mkdtempSync(join(tmpdir(), "langgraph-api-")),
    ],
    {
      // Inferring the graph's schemas compiles it with TypeScript: allow a busy machine more than
      // the server's default 30 s.
      env: { LANGGRAPH_SCHEMA_RESOLVE_TIMEOUT_MS: "150000" },
    },
  );
  sdk = new Client({ apiUrl: langgraph.url });
  // The server infers the graph's schemas with the TypeScript compiler on first use, which
  // LangGraphAgent asks for on every run; pay for it once, here.
  const [assistant] = await sdk.assistants.search({ graphId: "assistant", limit: 1 });
  await sdk.assistants.getSchemas(assistant!.assistant_id);

  endpoint = await startService("LangGraph AG-UI endpoint", [
    join(integrationRoot, "servers/langgraph-agui-endpoint.mjs"),
    langgraph.url,
  ]);
  server = await startAcpAgui(
    [
      {
        name: "langgraph",
        version: "1.0.0",
        description: "A LangGraph graph through @ag-ui/langgraph's LangGraphAgent, in-process",
        adapter: {
          type: "module",
          path: join(integrationRoot, "agents/langgraph-agent.mjs"),
          export: "assistant",
        },
      },
      {
        name: "langgraph-lean",
        version: "1.0.0",
        description: "The in-process LangGraphAgent, its RAW events and rawEvent fields dropped",
        adapter: {
          type: "module",
          path: join(integrationRoot, "agents/langgraph-agent.mjs"),
          export: "assistant",
        },
        events: { dropRaw: true },
      },
      {
        name: "langgraph-timeout",
        version: "1.0.0",
        description: "The in-process LangGraphAgent with a short run time limit",
        adapter: {
          type: "module",
          path: join(integrationRoot, "agents/langgraph-agent.mjs"),
          export: "assistant",
        },
        limits: { runTimeoutSeconds: 2 },
      },
      {
        name: "langgraph-http",
        version: "1.0.0",
        description: "The same graph behind an AG-UI HTTP endpoint",
        adapter: { type: "agui-http", url: endpoint.url },
      },
    ],
    { LANGGRAPH_URL: langgraph.url },
  );
  acp = new AcpClient(server.url);
  ids.langgraph = await acp.agentId("langgraph");
  ids["langgraph-http"] = await acp.agentId("langgraph-http");
  ids["langgraph-lean"] = await acp.agentId("langgraph-lean");
  ids["langgraph-timeout"] = await acp.agentId("langgraph-timeout");
});

afterAll(async () => {
  await server?.stop();
  await endpoint?.stop();
  await langgraph?.stop();
});

/** LangGraph's own record of a thread: its runs, and the messages of its state. */
const upstream: Stack["upstream"] = {
  async stopSeen(threadId) {
    const runs = await eventually(
      "LangGraph's run of the thread to end",
      () => sdk.runs.list(threadId),
      (list) =>
        list.length > 0 && list.every((r) => r.status !== "pending" && r.status !== "running"),
    );
    // A cancelled LangGraph run ends `interrupted` (cancel action "interrupt"), never `success`.
    if (runs[0]!.status !== "interrupted") return `ended its run ${runs[0]!.status}`;
    const state = await sdk.threads.getState<{ messages?: Array<{ content: unknown }> }>(threadId);
    const story = (state.values.messages ?? []).find((m) => m.content === LONG_STORY);
    return story ? "cancelled its run, yet the reply landed in its thread" : "stopped";
  },
  async threadMessages(threadId) {
    const state = await sdk.threads.getState<{
      messages?: Array<{ type: string; content: unknown }>;
    }>(threadId);
    return (state.values.messages ?? []).map((m) => ({
      role: m.type === "human" ? "user" : m.type === "ai" ? "assistant" : m.type,
      text: typeof m.content === "string" ? m.content : JSON.stringify(m.content),
    }));
  },
};

const stack = (name: string, title: string): Stack => ({
  title,
  server: () => ({ acp, agentId: ids[name]!, agentName: name }),
  interruptType: "approval",
  approvalHasSchema: true,
  upstream,
});

for (const s of [
  stack("langgraph", "LangGraph in-process (module adapter, LangGraphAgent)"),
  stack("langgraph-http", "LangGraph over agui-http (AG-UI endpoint serving LangGraphAgent)"),
]) {
  acpFlows(s);
  faceFlows(s);
}

describe("the LangGraph graph through acp-agui's own LangGraph face", () => {
  // LangGraph's client pointed at us: the graph behind an agent, the agent an assistant.
  const face = () => new Client({ apiUrl: `${server.url}/langgraph` });
  const human = (content: string) => ({ messages: [{ type: "human", content }] });
  type Part = { event: string; data: unknown };
  type Values = { messages: Array<{ type: string; content: unknown }>; __interrupt__?: unknown[] };

  it("streams the graph's reply as messages and values; LangGraph's thread has it too", async () => {
    const client = face();
    const thread = await client.threads.create();
    const parts: Part[] = [];
    for await (const part of client.runs.stream(thread.thread_id, "langgraph-http", {
      input: human("hello"),
      streamMode: ["values", "messages-tuple"],
    })) {
      parts.push(part);
    }
    expect(parts[0]!.event).toBe("metadata");
    const text = parts
      .filter((p) => p.event === "messages")
      .map((p) => (p.data as Array<{ content: string }>)[0]!.content)
      .join("");
    expect(text).toBe("You said: hello");
    const last = parts.filter((p) => p.event === "values").at(-1)!.data as Values;
    expect(last.messages.map((m) => [m.type, m.content])).toEqual([
      ["human", "hello"],
      ["ai", "You said: hello"],
    ]);
    expect(await upstream.threadMessages!(thread.thread_id)).toEqual([
      { role: "user", text: "hello" },
      { role: "assistant", text: "You said: hello" },
    ]);
  });

  it("shows the graph's interrupt as __interrupt__ and answers it with command.resume", async () => {
    const client = face();
    const thread = await client.threads.create();
    const asked = (await client.runs.wait(thread.thread_id, "langgraph", {
      input: human("deploy production"),
    })) as Values;
    expect(asked.__interrupt__).toEqual([
      expect.objectContaining({
        id: expect.any(String),
        value: expect.objectContaining({ reason: "approval" }),
      }),
    ]);
    expect((await client.threads.get(thread.thread_id)).status).toBe("interrupted");
    await expect(
      client.runs.wait(thread.thread_id, "langgraph", { command: { resume: { approved: "yes" } } }),
    ).rejects.toThrow(/422.*approved/s);
    const done = (await client.runs.wait(thread.thread_id, "langgraph", {
      command: { resume: { approved: true } },
    })) as Values;
    const replies = done.messages.filter((m) => m.type === "ai" && m.content !== "");
    expect(replies.at(-1)!.content).toBe("Deployment approved.");
    expect((await client.threads.get(thread.thread_id)).status).toBe("idle");
  });
});

describe("LangGraph's RAW events and rawEvent fields", () => {
  /** One "hello" run, streamed with every AG-UI event: its custom frames and their size. */
  async function run(agent: string) {
    const thread = await acp.newThread();
    const frames = await acp.streamRun(thread, {
      agent_id: ids[agent],
      input: { messages: [userSays("hello")] },
      stream_mode: ["custom"],
    });
    const events = frames.filter((f) => f.type === "custom").map((f) => f.update!);
    return {
      text: streamedText(frames),
      events,
      raw: events.filter((e) => e.type === "RAW").length,
      withRawEvent: events.filter((e) => "rawEvent" in e).length,
      bytes: frames.reduce((sum, f) => sum + JSON.stringify(f).length, 0),
    };
  }

  it("are kept by default and dropped with events.dropRaw, the reply unchanged", async () => {
    const kept = await run("langgraph");
    const dropped = await run("langgraph-lean");
    expect(kept.raw).toBeGreaterThan(0);
    expect(kept.withRawEvent).toBeGreaterThan(0);
    expect(dropped.raw).toBe(0);
    expect(dropped.withRawEvent).toBe(0);
    expect(dropped.text).toBe(kept.text);
    expect(dropped.bytes).toBeLessThan(kept.bytes);
    // The figures docs/agents.md quotes.
    console.info(
      `LangGraph "hello" run: ${kept.events.length} events / ${kept.bytes} bytes streamed; ` +
        `with events.dropRaw: ${dropped.events.length} events / ${dropped.bytes} bytes`,
    );
  });
});

describe("LangGraph runs stopped by the server itself", () => {
  it("a run past its time limit ends timeout, and LangGraph's run is cancelled", async () => {
    const thread = await acp.newThread();
    const { run } = await acp.waitRun(thread, {
      agent_id: ids["langgraph-timeout"],
      input: { messages: [userSays("tell me a long story")] },
    });
    expect(run.status).toBe("timeout");
    expect(await upstream.stopSeen(thread)).toBe("stopped");
  });

  it("a server shutting down past its grace period cancels LangGraph's run", async () => {
    const other = await startAcpAgui(
      [
        {
          name: "langgraph",
          version: "1.0.0",
          description: "A LangGraph graph through LangGraphAgent, in-process",
          adapter: {
            type: "module",
            path: join(integrationRoot, "agents/langgraph-agent.mjs"),
            export: "assistant",
          },
        },
      ],
      { LANGGRAPH_URL: langgraph.url, SHUTDOWN_GRACE_SECONDS: "1" },
    );
    try {
      const client = new AcpClient(other.url);
      const thread = await client.newThread();
      await client.ok("POST", `/threads/${thread}/runs`, {
        agent_id: await client.agentId("langgraph"),
        input: { messages: [userSays("tell me a long story")] },
      });
      await eventually(
        "LangGraph to be running the story",
        // 404 until LangGraphAgent has created LangGraph's copy of the thread.
        () => sdk.runs.list(thread).catch(() => []),
        (list) => list.some((r) => r.status === "running"),
      );
      await other.stop();
      expect(await upstream.stopSeen(thread)).toBe("stopped");
    } finally {
      await other.stop();
    }
  });
});
