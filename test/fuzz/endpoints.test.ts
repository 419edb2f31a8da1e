import fc from "fast-check";
import type { LightMyRequestResponse } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import { DEFAULT_LIMITS } from "../../src/config/settings.js";
import { acpOperations } from "../../src/validation/index.js";
import type { TestApp } from "../helpers/app.js";
import { assertSpecResponse, findOperation } from "../helpers/spec.js";
import { buildServing, echoAgent } from "../security/helpers.js";
import {
  body,
  contentType,
  encodeAny,
  type HostileRequest,
  headers,
  POLLUTION_KEY,
  pathParam,
  queryString,
} from "./arbitraries.js";

/**
 * Property-based tests: hostile requests (malformed bodies, query strings, path ids, headers,
 * content types) for every ACP operation of the spec and every route of the AG-UI face. The
 * server must never answer 5xx nor crash, must answer errors as ACP string errors, must never
 * let a body reach Object.prototype, and must answer a good request after each batch.
 */

const RUNS_PER_ENDPOINT = Number(process.env.FUZZ_RUNS) || 200;
const GOOD_KEY = "fuzz-good-key-0123456789abcdef";
const RESTRICTED_KEY = "fuzz-restricted-key-0123456789";
const ALPHA = agentIdFor("alpha", "1.0.0");
const BETA = agentIdFor("beta", "1.0.0");
const limits = { ...DEFAULT_LIMITS, maxBodyBytes: 256 * 1024, maxStringLength: 64 * 1024 };

const userSays = { messages: [{ role: "user", content: "hi" }] };
const RUN_KEYS = [
  "agent_id",
  "input",
  "metadata",
  "config",
  "stream_mode",
  "on_disconnect",
  "multitask_strategy",
  "on_completion",
  "if_not_exists",
  "stream_subgraphs",
  "webhook",
];
/** A valid body per request schema, and the keys worth mutating. `after_seconds` is left out: a valid one would make `wait` wait. */
const TEMPLATES: Record<string, { template: Record<string, unknown>; keys: string[] }> = {
  AgentSearchRequest: {
    template: { name: "alpha", version: "1.0.0", limit: 10, offset: 0 },
    keys: ["name", "version", "limit", "offset"],
  },
  ThreadCreate: {
    template: { metadata: { user: "ana" }, if_exists: "do_nothing" },
    keys: ["thread_id", "metadata", "if_exists"],
  },
  ThreadSearchRequest: {
    template: { metadata: { user: "ana" }, values: {}, status: "idle", limit: 10, offset: 0 },
    keys: ["metadata", "values", "status", "limit", "offset"],
  },
  ThreadPatch: {
    template: { metadata: { topic: "fuzz" }, values: { a: 1 } },
    keys: ["metadata", "values", "messages", "checkpoint"],
  },
  RunCreateStateful: {
    template: { agent_id: ALPHA, input: userSays, metadata: {}, multitask_strategy: "enqueue" },
    keys: RUN_KEYS,
  },
  RunCreateStateless: {
    template: { agent_id: ALPHA, input: userSays, metadata: {}, on_completion: "keep" },
    keys: RUN_KEYS,
  },
  RunSearchRequest: {
    template: { agent_id: ALPHA, status: "success", metadata: {}, limit: 10, offset: 0 },
    keys: ["agent_id", "status", "metadata", "limit", "offset"],
  },
  ResumePayloadSchema: {
    template: { approval: { approved: true } },
    keys: ["approval", "resume", "interrupt"],
  },
  RunAgentInput: {
    template: {
      threadId: "fuzz-thread",
      runId: "fuzz-run",
      messages: [{ id: "m1", role: "user", content: "hi" }],
      tools: [],
      context: [],
      state: {},
      forwardedProps: {},
    },
    keys: [
      "threadId",
      "runId",
      "messages",
      "tools",
      "context",
      "state",
      "forwardedProps",
      "resume",
      "parentRunId",
      "protocolVersion",
    ],
  },
};
TEMPLATES.CopilotKitStop = { template: { runId: "fuzz-run" }, keys: ["runId"] };
TEMPLATES.CopilotKitThreadChange = {
  template: { agentId: "alpha", name: "renamed", archived: false },
  keys: ["agentId", "name", "archived"],
};
const A2A_MESSAGE = { messageId: "fuzz-message", role: "ROLE_USER", parts: [{ text: "hi" }] };
TEMPLATES.A2aJsonRpc = {
  template: { jsonrpc: "2.0", id: 1, method: "SendMessage", params: { message: A2A_MESSAGE } },
  keys: ["jsonrpc", "id", "method", "params"],
};
TEMPLATES.A2aSend = {
  template: { message: A2A_MESSAGE, configuration: { returnImmediately: true } },
  keys: ["message", "configuration", "metadata"],
};
TEMPLATES.A2aPushConfig = {
  template: { url: "https://hooks.example.com/a2a", token: "t", id: "cfg" },
  keys: ["url", "token", "id", "authentication", "taskId"],
};
const LG_RUN_KEYS = [
  "assistant_id",
  "input",
  "command",
  "config",
  "context",
  "metadata",
  "stream_mode",
  "stream_resumable",
  "on_disconnect",
  "multitask_strategy",
  "if_not_exists",
  "on_completion",
  "interrupt_before",
  "checkpoint",
];
TEMPLATES.LgRun = {
  template: {
    assistant_id: "alpha",
    input: { messages: [{ type: "human", content: "hi" }] },
    stream_mode: ["values", "messages-tuple"],
  },
  keys: LG_RUN_KEYS,
};
TEMPLATES.LgResume = {
  template: { assistant_id: "alpha", command: { resume: { approval: { approved: true } } } },
  keys: LG_RUN_KEYS,
};
TEMPLATES.LgSearch = {
  template: { metadata: { user: "ana" }, status: "idle", limit: 10, offset: 0 },
  keys: ["metadata", "values", "status", "limit", "offset", "ids", "graph_id", "name"],
};
TEMPLATES.LgThreadCreate = {
  template: { metadata: { user: "ana" }, if_exists: "do_nothing" },
  keys: ["thread_id", "metadata", "if_exists", "supersteps"],
};
TEMPLATES.LgHistory = {
  template: { limit: 5, before: { configurable: { checkpoint_id: "x" } } },
  keys: ["limit", "before", "metadata", "checkpoint"],
};
TEMPLATES.LgStateUpdate = {
  template: { values: { messages: [{ type: "ai", content: "x", id: "m" }], topic: 1 } },
  keys: ["values", "as_node", "checkpoint_id", "checkpoint"],
};
TEMPLATES.McpInitialize = {
  template: {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: {
      protocolVersion: "2025-11-25",
      capabilities: { elicitation: {} },
      clientInfo: { name: "fuzz", version: "1" },
    },
  },
  keys: ["jsonrpc", "id", "method", "params"],
};
// MCP 2026-07-28: a stateless request (no session; its version and capabilities in `_meta`).
TEMPLATES.McpDiscover = {
  template: {
    jsonrpc: "2.0",
    id: 1,
    method: "server/discover",
    params: {
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": { elicitation: {} },
        "io.modelcontextprotocol/clientInfo": { name: "fuzz", version: "1" },
      },
    },
  },
  keys: ["jsonrpc", "id", "method", "params"],
};
TEMPLATES.LgCommand = {
  template: {
    id: 1,
    method: "run.start",
    params: { assistant_id: "alpha", input: { messages: [{ type: "human", content: "hi" }] } },
  },
  keys: ["id", "method", "params"],
};
TEMPLATES.LgInputRespond = {
  template: {
    id: 2,
    method: "input.respond",
    params: { namespace: [], interrupt_id: "approval", response: { approved: true } },
  },
  keys: ["id", "method", "params"],
};
TEMPLATES.LgEventStream = {
  template: { channels: ["values", "messages", "lifecycle"], since: 0 },
  keys: ["channels", "since", "namespaces", "depth"],
};
const EMPTY = { template: {}, keys: ["metadata", "input"] };

interface Endpoint {
  id: string;
  method: string;
  path: string;
  body?: string;
  queryKeys: string[];
  /** ACP operations get their 2xx bodies checked against the spec. */
  acp: boolean;
  /** The A2A face: refusals are its own error objects (JSON-RPC, google.rpc.Status). */
  a2a?: boolean;
  /** The LangGraph face: refusals are `{"detail": "…"}`. */
  langgraph?: boolean;
  /** The MCP face: refusals are JSON-RPC error objects. */
  mcp?: boolean;
}

const QUERY_KEYS: Record<string, string[]> = {
  get_thread_history: ["limit", "before"],
  list_thread_runs: ["limit", "offset"],
  cancel_thread_run: ["wait", "action"],
  cancel_stateless_run: ["wait", "action"],
};

const endpoints: Endpoint[] = [
  ...Object.entries(acpOperations).map(([id, op]) => ({
    id,
    method: op.method,
    path: op.path,
    body: (op as { body?: string }).body,
    queryKeys: QUERY_KEYS[id] ?? ["limit"],
    acp: true,
  })),
  {
    id: "agui_run_by_id",
    method: "POST",
    path: "/agents/{agent_id}/ag-ui",
    body: "RunAgentInput",
    queryKeys: [],
    acp: false,
  },
  {
    id: "agui_run_by_name",
    method: "POST",
    path: "/ag-ui/{agent_name}",
    body: "RunAgentInput",
    queryKeys: [],
    acp: false,
  },
  {
    id: "agui_capabilities_by_id",
    method: "GET",
    path: "/agents/{agent_id}/ag-ui/capabilities",
    queryKeys: [],
    acp: false,
  },
  {
    id: "agui_capabilities_by_name",
    method: "GET",
    path: "/ag-ui/{agent_name}/capabilities",
    queryKeys: [],
    acp: false,
  },
  // The inspector's own read-only API.
  { id: "inspector_overview", method: "GET", path: "/ui/api/overview", queryKeys: [], acp: false },
  {
    id: "inspector_runs",
    method: "GET",
    path: "/ui/api/runs",
    queryKeys: ["agent_id", "status", "limit", "offset"],
    acp: false,
  },
  {
    id: "inspector_run_frames",
    method: "GET",
    path: "/ui/api/runs/{run_id}/frames",
    queryKeys: ["after_seq", "limit"],
    acp: false,
  },
  ...(
    [
      ["agui_connect_by_id", "POST", "/agents/{agent_id}/ag-ui/connect", "RunAgentInput"],
      ["agui_connect_by_name", "POST", "/ag-ui/{agent_name}/connect", "RunAgentInput"],
      ["agui_stop_by_id", "POST", "/agents/{agent_id}/ag-ui/stop/{thread}", "CopilotKitStop"],
      ["agui_stop_by_name", "POST", "/ag-ui/{agent_name}/stop/{thread}", "CopilotKitStop"],
      // CopilotKit's runtime protocol.
      ["copilotkit_info", "GET", "/copilotkit/info"],
      ["copilotkit_run", "POST", "/copilotkit/agent/{agent}/run", "RunAgentInput"],
      ["copilotkit_connect", "POST", "/copilotkit/agent/{agent}/connect", "RunAgentInput"],
      ["copilotkit_stop", "POST", "/copilotkit/agent/{agent}/stop/{thread}", "CopilotKitStop"],
      ["copilotkit_threads", "GET", "/copilotkit/threads"],
      ["copilotkit_thread_messages", "GET", "/copilotkit/threads/{thread}/messages"],
      ["copilotkit_thread_state", "GET", "/copilotkit/threads/{thread}/state"],
      ["copilotkit_thread_events", "GET", "/copilotkit/threads/{thread}/events"],
      [
        "copilotkit_thread_patch",
        "PATCH",
        "/copilotkit/threads/{thread}",
        "CopilotKitThreadChange",
      ],
      [
        "copilotkit_thread_archive",
        "POST",
        "/copilotkit/threads/{thread}/archive",
        "CopilotKitThreadChange",
      ],
      [
        "copilotkit_thread_delete",
        "DELETE",
        "/copilotkit/threads/{thread}",
        "CopilotKitThreadChange",
      ],
    ] as const
  ).map(([id, method, path, body]) => ({
    id,
    method,
    path,
    body,
    queryKeys: id === "copilotkit_threads" ? ["agentId", "includeArchived", "limit", "cursor"] : [],
    acp: false,
  })), // The A2A face: JSON-RPC at the agent's base, HTTP+JSON beneath it.
  ...(
    [
      ["a2a_jsonrpc", "POST", "/a2a/{agent}", "A2aJsonRpc", []],
      ["a2a_card", "GET", "/a2a/{agent}/.well-known/agent-card.json", undefined, []],
      ["a2a_send", "POST", "/a2a/{agent}/message:send", "A2aSend", []],
      ["a2a_stream", "POST", "/a2a/{agent}/message:stream", "A2aSend", []],
      [
        "a2a_list",
        "GET",
        "/a2a/{agent}/tasks",
        undefined,
        ["contextId", "status", "pageSize", "pageToken", "historyLength", "includeArtifacts"],
      ],
      ["a2a_get", "GET", "/a2a/{agent}/tasks/{task}", undefined, ["historyLength"]],
      ["a2a_cancel", "POST", "/a2a/{agent}/tasks/{task}:cancel", undefined, []],
      ["a2a_subscribe", "GET", "/a2a/{agent}/tasks/{task}:subscribe", undefined, []],
      ["a2a_push", "GET", "/a2a/{agent}/tasks/{task}/pushNotificationConfigs", undefined, []],
      [
        "a2a_push_create",
        "POST",
        "/a2a/{agent}/tasks/{task}/pushNotificationConfigs",
        "A2aPushConfig",
        [],
      ],
    ] as const
  ).map(([id, method, path, body, queryKeys]) => ({
    id,
    method,
    path,
    body,
    queryKeys: [...queryKeys],
    acp: false,
    a2a: true,
  })),
  // The LangGraph face: LangGraph's API under /langgraph.
  ...(
    [
      ["lg_assistants_search", "POST", "/langgraph/assistants/search", "LgSearch", []],
      ["lg_assistant", "GET", "/langgraph/assistants/{agent}/schemas", undefined, []],
      ["lg_threads_create", "POST", "/langgraph/threads", "LgThreadCreate", []],
      ["lg_threads_search", "POST", "/langgraph/threads/search", "LgSearch", []],
      ["lg_thread", "PATCH", "/langgraph/threads/{thread_id}", "LgSearch", []],
      ["lg_thread_state", "GET", "/langgraph/threads/{thread_id}/state", undefined, []],
      ["lg_state_update", "POST", "/langgraph/threads/{thread_id}/state", "LgStateUpdate", []],
      ["lg_thread_history", "POST", "/langgraph/threads/{thread_id}/history", "LgHistory", []],
      ["lg_runs_wait", "POST", "/langgraph/runs/wait", "LgRun", []],
      ["lg_runs_stream", "POST", "/langgraph/runs/stream", "LgRun", []],
      [
        "lg_thread_runs",
        "GET",
        "/langgraph/threads/{thread_id}/runs",
        undefined,
        ["limit", "offset", "status"],
      ],
      ["lg_thread_runs_wait", "POST", "/langgraph/threads/{thread_id}/runs/wait", "LgResume", []],
      ["lg_thread_runs_stream", "POST", "/langgraph/threads/{thread_id}/runs/stream", "LgRun", []],
      ["lg_commands", "POST", "/langgraph/threads/{thread_id}/commands", "LgCommand", []],
      ["lg_input_respond", "POST", "/langgraph/threads/{thread_id}/commands", "LgInputRespond", []],
      // A thread that does not exist: a body the server takes opens a stream that stays open
      // until the client leaves, which a fuzzer's request never does; the body is read first.
      [
        "lg_stream_events",
        "POST",
        "/langgraph/threads/00000000-0000-4000-8000-00000000f022/stream/events",
        "LgEventStream",
        [],
      ],
      [
        "lg_join_stream",
        "GET",
        "/langgraph/threads/{thread_id}/runs/{run_id}/stream",
        undefined,
        ["cancel_on_disconnect", "stream_mode"],
      ],
      [
        "lg_cancel",
        "POST",
        "/langgraph/threads/{thread_id}/runs/{run_id}/cancel",
        undefined,
        ["wait", "action"],
      ],
    ] as const
  ).map(([id, method, path, body, queryKeys]) => ({
    id,
    method,
    path,
    body,
    queryKeys: [...queryKeys],
    acp: false,
    langgraph: true,
  })),
];

// The MCP face (Streamable HTTP): an initialize without a session, and a 2026-07-28 stateless
// request; test/fuzz/mcp.test.ts fuzzes the JSON-RPC inside a session, mcp-modern.test.ts the
// 2026 requests with their headers.
endpoints.push(
  ...(
    [
      ["mcp", "/mcp", "McpInitialize"],
      ["mcp_agent", "/mcp/{agent}", "McpInitialize"],
      ["mcp_2026", "/mcp", "McpDiscover"],
      ["mcp_2026_agent", "/mcp/{agent}", "McpDiscover"],
    ] as const
  ).map(([id, path, body]) => ({
    id,
    method: "POST",
    path,
    body,
    queryKeys: [],
    acp: false,
    mcp: true,
  })),
);

interface Fixtures {
  thread_id: string[];
  stateful_run_id: string[];
  stateless_run_id: string[];
}

const counts = new Map<string, number>();
/** Per endpoint, how many answers of each status (shows the fuzzer got past the front door). */
const statuses = new Map<string, Map<number, number>>();
function tally(endpoint: string, status: number): void {
  const byStatus = statuses.get(endpoint) ?? new Map<number, number>();
  byStatus.set(status, (byStatus.get(status) ?? 0) + 1);
  statuses.set(endpoint, byStatus);
}
let t: TestApp;
const auth = { authorization: `Bearer ${GOOD_KEY}` };

async function ok(method: string, url: string, payload?: unknown) {
  const res = await t.app.inject({
    method: method as "GET",
    url,
    payload: payload as object,
    headers: auth,
  });
  expect(res.statusCode, `${method} ${url}: ${res.body}`).toBeLessThan(300);
  return res.body === "" ? undefined : (JSON.parse(res.body) as Record<string, unknown>);
}

/** A thread with a finished and an interrupted run; a finished and an interrupted stateless run. */
async function freshFixtures(): Promise<Fixtures> {
  const thread = (await ok("POST", "/threads", { metadata: { user: "ana" } }))!.thread_id as string;
  const done = (await ok("POST", `/threads/${thread}/runs/wait`, {
    agent_id: ALPHA,
    input: userSays,
  }))!;
  const asks = (await ok("POST", `/threads/${thread}/runs/wait`, {
    agent_id: ALPHA,
    input: { messages: [{ role: "user", content: "/approve fuzz" }] },
  }))!;
  const stateless = (await ok("POST", "/runs/wait", {
    agent_id: BETA,
    input: userSays,
    on_completion: "keep",
  }))!;
  const statelessAsks = (await ok("POST", "/runs/wait", {
    agent_id: ALPHA,
    input: { messages: [{ role: "user", content: "/approve fuzz" }] },
  }))!;
  const id = (r: Record<string, unknown>) => (r.run as { run_id: string }).run_id;
  expect((asks.run as { status: string }).status).toBe("interrupted");
  return {
    thread_id: [thread],
    stateful_run_id: [id(done), id(asks)],
    stateless_run_id: [id(stateless), id(statelessAsks)],
  };
}

function requestArbitrary(endpoint: Endpoint, fixtures: Fixtures): fc.Arbitrary<HostileRequest> {
  const names = [...endpoint.path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
  const pools: Record<string, string[]> = {
    thread_id: fixtures.thread_id,
    run_id: endpoint.path.includes("/threads/")
      ? fixtures.stateful_run_id
      : fixtures.stateless_run_id,
    agent_id: [ALPHA, BETA],
    agent_name: ["alpha", "beta"],
    // CopilotKit names agents by name or name@version, and threads by the client's threadId.
    agent: ["alpha", "beta", "alpha@1.0.0"],
    thread: [...fixtures.thread_id, "fuzz-thread"],
    // A2A tasks are the agent's stateful runs.
    task: fixtures.stateful_run_id,
  };
  const params = fc.record(Object.fromEntries(names.map((n) => [n, pathParam(pools[n] ?? [])])));
  const shape = TEMPLATES[endpoint.body ?? ""] ?? EMPTY;
  const bodies = body({
    ...shape,
    maxBodyBytes: limits.maxBodyBytes,
    maxStringLength: limits.maxStringLength,
  });
  return fc
    .record({
      params,
      encode: fc.oneof(
        { weight: 5, arbitrary: fc.constant(true) },
        { weight: 1, arbitrary: fc.constant(false) },
      ),
      query: queryString(endpoint.queryKeys),
      body:
        endpoint.method === "GET"
          ? fc.oneof(
              { weight: 5, arbitrary: fc.constant(undefined) },
              { weight: 1, arbitrary: bodies },
            )
          : bodies,
      contentType,
      headers: headers(GOOD_KEY, RESTRICTED_KEY),
    })
    .map((r) => {
      const hdrs: Record<string, string> = { ...r.headers };
      if (r.body !== undefined) hdrs["content-type"] = r.contentType;
      const preview =
        r.body === undefined ? "(none)" : Buffer.from(r.body).subarray(0, 200).toString("latin1");
      return {
        params: r.params as Record<string, string>,
        encode: r.encode,
        query: r.query,
        body: r.body,
        headers: hdrs,
        label: `params=${JSON.stringify(r.params).slice(0, 200)} query=${r.query.slice(0, 100)} headers=${JSON.stringify(hdrs).slice(0, 300)} body=${preview}`,
      };
    });
}

function urlOf(endpoint: Endpoint, request: HostileRequest): string {
  const path = endpoint.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
    const value = request.params[name] ?? "";
    return request.encode ? encodeAny(value) : value;
  });
  return path + request.query;
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise,
    new Promise<T>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} did not answer within ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

function checkResponse(
  endpoint: Endpoint,
  method: string,
  url: string,
  res: LightMyRequestResponse,
  label: string,
) {
  const where = `${method} ${url.slice(0, 200)} → ${res.statusCode} ${res.body.slice(0, 300)}\n${label}`;
  expect(res.statusCode, where).toBeLessThan(500);
  expect(res.statusCode, where).toBeGreaterThanOrEqual(200);
  const type = String(res.headers["content-type"] ?? "");
  if (res.statusCode >= 400) {
    // Every refusal is the spec's ErrorResponse: a JSON string (the A2A face: its error object).
    expect(type, where).toContain("application/json");
    const refusal = JSON.parse(res.body) as unknown;
    // A path that left the prefix (`/a2a/../threads`) is another face's.
    if ((endpoint.a2a && url.startsWith("/a2a/")) || (endpoint.mcp && url.startsWith("/mcp"))) {
      expectA2aRefusal(refusal, where);
    } else if (endpoint.langgraph && url.startsWith("/langgraph/")) {
      expect(typeof (refusal as { detail?: unknown }).detail, where).toBe("string");
    } else {
      expect(typeof refusal, where).toBe("string");
    }
  } else if (endpoint.id === "a2a_jsonrpc" && type.includes("application/json")) {
    // A JSON-RPC answer is a response object: a result or an error, never anything else.
    // A JSON-RPC answer is a response object (a batch: an array of them): a result or an error,
    // never anything else, and never an internal error (client input cannot cause one).
    const parsed = JSON.parse(res.body) as unknown;
    for (const answer of (Array.isArray(parsed) ? parsed : [parsed]) as Record<string, unknown>[]) {
      expect(answer.jsonrpc, where).toBe("2.0");
      expect("result" in answer || "error" in answer, where).toBe(true);
      expect((answer.error as { code?: number } | undefined)?.code, where).not.toBe(-32603);
    }
  } else if (endpoint.acp && findOperation(method, url)) {
    assertSpecResponse(method, url, res.statusCode, type, res.body);
  }
  expect(({} as Record<string, unknown>)[POLLUTION_KEY], where).toBeUndefined();
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain(POLLUTION_KEY);
}

/**
 * A refusal under the A2A or MCP prefix: a google.rpc.Status or a JSON-RPC error, never a bare
 * string.
 */
function expectA2aRefusal(refusal: unknown, where: string): void {
  const error = (refusal as { error?: { message?: unknown; code?: unknown } }).error;
  expect(typeof error?.message, where).toBe("string");
  expect(typeof error?.code, where).toBe("number");
}

async function stillServes(): Promise<void> {
  expect((await t.app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
  const created = await t.app.inject({
    method: "POST",
    url: "/threads",
    payload: {},
    headers: auth,
  });
  expect(created.statusCode, created.body).toBe(200);
  const answer = await t.app.inject({
    method: "POST",
    url: "/runs/wait",
    payload: { agent_id: BETA, input: userSays },
    headers: auth,
  });
  expect(answer.statusCode, answer.body).toBe(200);
  expect(JSON.parse(answer.body).run.status).toBe("success");
}

describe("hostile requests", () => {
  beforeAll(async () => {
    t = await buildServing(
      {
        server: {
          auth: {
            keys: [
              { key: GOOD_KEY, name: "fuzz" },
              { key: RESTRICTED_KEY, name: "alpha-only", agents: ["alpha"] },
            ],
          },
          cors: { origins: ["https://app.example.com"] },
          limits,
        },
        // Two agents: no default agent, so a run needs a valid agent_id (kept rare by the fuzzer).
        agents: [echoAgent("alpha"), echoAgent("beta")],
      },
      { unchecked: true },
    );
  });
  afterAll(async () => {
    await t.close();
    const rows = [...counts.entries()].map(([id, n]) => {
      const byStatus = [...(statuses.get(id) ?? new Map<number, number>()).entries()]
        .sort(([a], [b]) => a - b)
        .map(([status, count]) => `${status}×${count}`)
        .join(" ");
      return `  ${id.padEnd(72)} ${String(n).padStart(4)}  ${byStatus}`;
    });
    const total = [...counts.values()].reduce((a, b) => a + b, 0);
    console.log(`hostile requests per endpoint (${total} in all):\n${rows.join("\n")}`);
  });

  for (const endpoint of endpoints) {
    it(`${endpoint.method} ${endpoint.path} › never answers 5xx to hostile input, and the server still serves after`, async () => {
      const fixtures = await freshFixtures();
      let tried = 0;
      await fc.assert(
        fc.asyncProperty(requestArbitrary(endpoint, fixtures), async (request) => {
          tried++;
          const url = urlOf(endpoint, request);
          const res = await withTimeout(
            t.app.inject({
              method: endpoint.method as "GET",
              url,
              headers: request.headers,
              ...(request.body === undefined ? {} : { payload: request.body }),
            }),
            10_000,
            `${endpoint.method} ${url} (${request.label})`,
          );
          // Check against the URL the server got: clients resolve dot segments ("/threads/..").
          const received = (res.raw.req as { url?: string }).url ?? url;
          checkResponse(endpoint, endpoint.method, received, res, request.label);
          tally(`${endpoint.id} (${endpoint.method} ${endpoint.path})`, res.statusCode);
        }),
        // No shrinking: a hang would be retried for every shrink step; the failing input is printed.
        {
          numRuns: RUNS_PER_ENDPOINT,
          seed: Number(process.env.FUZZ_SEED) || undefined,
          endOnFailure: true,
        },
      );
      counts.set(`${endpoint.id} (${endpoint.method} ${endpoint.path})`, tried);
      await stillServes();
    }, 60_000);
  }

  it("unknown routes and methods › answer 404 (never 5xx), as ACP string errors", async () => {
    const methods = fc.constantFrom("GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD");
    const segment = fc.oneof(
      fc.constantFrom(
        "threads",
        "runs",
        "agents",
        "ag-ui",
        "a2a",
        "alpha",
        "message:send",
        "tasks",
        ".well-known",
        "ui",
        "api",
        "search",
        "stream",
        "wait",
        "..",
        "%2e%2e",
        "",
      ),
      fc.string({ maxLength: 8 }).map(encodeAny),
    );
    const path = fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => `/${s.join("/")}`);
    let tried = 0;
    await fc.assert(
      fc.asyncProperty(
        methods,
        path,
        headers(GOOD_KEY, RESTRICTED_KEY),
        async (method, url, hdrs) => {
          tried++;
          const res = await withTimeout(
            t.app.inject({ method: method as "GET", url, headers: hdrs }),
            10_000,
            url,
          );
          expect(res.statusCode, `${method} ${url} → ${res.body}`).toBeLessThan(500);
          // Under the A2A prefix, every refusal is in the binding's shape (OPTIONS is CORS's:
          // a preflight is the browser's business, answered as the CORS plugin does everywhere).
          const received = (res.raw.req as { url?: string }).url ?? url;
          const a2aRefusal = received.startsWith("/a2a/") && res.statusCode >= 400;
          if (a2aRefusal && method !== "HEAD" && method !== "OPTIONS") {
            expectA2aRefusal(JSON.parse(res.body), `${method} ${url} → ${res.body}`);
          }
          tally("(unknown routes and methods)", res.statusCode);
          expect(({} as Record<string, unknown>)[POLLUTION_KEY]).toBeUndefined();
        },
      ),
      { numRuns: RUNS_PER_ENDPOINT * 2, seed: Number(process.env.FUZZ_SEED) || undefined },
    );
    counts.set("(unknown routes and methods)", tried);
    await stillServes();
  });
});
