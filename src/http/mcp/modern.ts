import type { Interrupt } from "@ag-ui/core";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Principal } from "../../auth/principal.js";
import {
  canElicitForm,
  decodeRequestState,
  encodeRequestState,
  expectedSchemaOf,
  inputRequestsOf,
  type McpCallToolResult,
  META,
  MODERN_VERSION,
  type ModernRequest,
  ModernRequestError,
  modernRequestOf,
  toolOf,
} from "../../bridge/mcp/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunRecord } from "../../storage/types.js";
import { withMessageTraceContext } from "../../telemetry/index.js";
import { resumeOfInputResponses } from "./input-responses.js";
import { listenToTasks } from "./modern-listen.js";
import {
  answerTaskMethod,
  declaresTasks,
  type ModernTaskContext,
  modernTaskOf,
  TASKS_EXTENSION,
} from "./modern-tasks.js";
import { followProgress, ProgressOfEvents } from "./progress.js";
import {
  type AskCaller,
  asMcpError,
  type CallHooks,
  mcpCall,
  RPC,
  type ToolCalls,
} from "./tool-calls.js";
import type { ToolScope } from "./tool-scope.js";
import { SERVER_INFO } from "./tool-server.js";

/** What the stateless revision's requests need: the runs and the calls. */
export interface ModernContext extends ModernTaskContext {
  runs: RunService;
  calls: ToolCalls;
}

const INSTRUCTIONS =
  "Each tool is an agent. Pass `message` (and `context` to keep a conversation going); " +
  "the result is the agent's reply.";

/**
 * A listing's cache hint (CacheableResult): stale at once (the agents can change with the
 * configuration) and private (what is listed depends on the caller's key).
 */
const UNCACHED = { ttlMs: 0, cacheScope: "private" } as const;

/** Every result of this revision says what it is and who answers it. */
const complete = (result: Record<string, unknown>) => ({
  ...result,
  resultType: "complete",
  _meta: {
    ...(result._meta as Record<string, unknown> | undefined),
    [META.serverInfo]: SERVER_INFO,
  },
});

/**
 * A request of MCP 2026-07-28 (stateless: no session; everything the server needs is in the
 * request), answered on the same endpoint as the 2025 sessions: `server/discover`,
 * `tools/list` and `tools/call`, whose interrupted run answers an InputRequiredResult the
 * client retries with `inputResponses` and `requestState`.
 */
export async function serveModern(
  context: ModernContext,
  request: FastifyRequest,
  reply: FastifyReply,
  scope: ToolScope,
): Promise<FastifyReply> {
  const body = request.body as { id?: unknown };
  const id = typeof body?.id === "string" || typeof body?.id === "number" ? body.id : null;
  // The caller closing its connection before the answer is its cancellation (Cancellation).
  const gone = new AbortController();
  request.raw.on("close", () => {
    if (!reply.raw.writableFinished) gone.abort();
  });
  try {
    const modern = modernRequestOf(request.body, request.headers);
    if (modern.method === "subscriptions/listen") {
      await listenToTasks(context, modern, request.caller, scope, request, reply);
      return reply;
    }
    const token = (modern.params._meta as Record<string, unknown>).progressToken;
    if (
      modern.method === "tools/call" &&
      (typeof token === "string" || typeof token === "number")
    ) {
      return await callWithProgress(context, modern, token, request, reply, scope, gone.signal);
    }
    const result = await answer(context, modern, request.caller, scope, gone.signal);
    return reply.code(200).type("application/json").send({ jsonrpc: "2.0", id, result });
  } catch (err) {
    // A stream already begun (a subscription) ends; its client sees the stream close.
    if (reply.raw.headersSent) {
      reply.raw.end();
      return reply;
    }
    const error = errorOf(asMcpError(err));
    if (!error) {
      request.log.error({ err }, "MCP request failed");
      return sendError(reply, 500, id, { code: -32603, message: "internal error" });
    }
    return sendError(reply, error.status, id, error.body);
  }
}

/**
 * A tools/call with `_meta.progressToken`: answered as an SSE stream that carries
 * `notifications/progress` as the run goes (read from its stored frames, as in 2025), then the
 * call's result or error, which ends the stream.
 */
async function callWithProgress(
  context: ModernContext,
  modern: ModernRequest,
  progressToken: string | number,
  request: FastifyRequest,
  reply: FastifyReply,
  scope: ToolScope,
  signal: AbortSignal,
): Promise<FastifyReply> {
  reply.hijack();
  reply.raw.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const write = (message: Record<string, unknown>) => {
    if (!reply.raw.writableEnded) {
      reply.raw.write(
        `event: message\ndata: ${JSON.stringify({ jsonrpc: "2.0", ...message })}\n\n`,
      );
    }
  };
  const following = followProgress(
    context.runs,
    new ProgressOfEvents(),
    progressToken,
    async (notification) => write(notification),
    signal,
  );
  try {
    const result = await callTool(context, modern, request.caller, scope, signal, following);
    write({ id: modern.id, result });
  } catch (err) {
    const error = errorOf(asMcpError(err));
    if (!error) request.log.error({ err }, "MCP request failed");
    write({ id: modern.id, error: error?.body ?? { code: -32603, message: "internal error" } });
  }
  reply.raw.end();
  return reply;
}

function sendError(
  reply: FastifyReply,
  status: number,
  id: string | number | null,
  error: { code: number; message: string; data?: unknown },
) {
  return reply.code(status).type("application/json").send({ jsonrpc: "2.0", id, error });
}

/** A client's mistake as its JSON-RPC error and status; undefined for the server's own. */
function errorOf(err: unknown) {
  if (err instanceof ModernRequestError) {
    const body = { code: err.code, message: err.message };
    return { status: err.status, body: err.data ? { ...body, data: err.data } : body };
  }
  if (err instanceof McpError) {
    // The SDK prefixes its messages with "MCP error <code>: "; the client wants the reason.
    const message = err.message.replace(/^MCP error -?\d+: /, "");
    return { status: 200, body: { code: err.code, message } };
  }
  return undefined;
}

async function answer(
  context: ModernContext,
  modern: ModernRequest,
  who: Principal,
  scope: ToolScope,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  switch (modern.method) {
    case "server/discover":
      return complete({
        supportedVersions: [MODERN_VERSION],
        capabilities: { tools: { listChanged: false }, extensions: { [TASKS_EXTENSION]: {} } },
        instructions: INSTRUCTIONS,
        ...UNCACHED,
      });
    case "tools/list":
      return complete({ tools: [...scope.agentsFor(who).values()].map(toolOf), ...UNCACHED });
    case "tools/call":
      return callTool(context, modern, who, scope, signal);
    case "tasks/get":
    case "tasks/update":
    case "tasks/cancel":
      return complete(await answerTaskMethod(context, modern, who, scope));
    default:
      throw new ModernRequestError(
        RPC.methodNotFound,
        `method ${JSON.stringify(modern.method.slice(0, 100))} is not served here`,
        404,
      );
  }
}

async function callTool(
  context: ModernContext,
  modern: ModernRequest,
  who: Principal,
  scope: ToolScope,
  signal: AbortSignal,
  following?: CallHooks["following"],
): Promise<Record<string, unknown>> {
  const { params } = modern;
  const name = params.name as string;
  const agent = scope.agentsFor(who).get(name);
  if (!agent) {
    throw new McpError(
      RPC.invalidParams,
      `unknown tool ${JSON.stringify(name.slice(0, 200))}: tools/list names the tools`,
    );
  }
  const args = params.arguments;
  if (args !== undefined && (typeof args !== "object" || args === null || Array.isArray(args))) {
    throw new McpError(RPC.invalidParams, "params.arguments must be an object");
  }
  // A client of the tasks extension gets the run as a task at once (the server's choice).
  if (declaresTasks(modern.clientCapabilities) && params.requestState === undefined) {
    const run = await withMessageTraceContext(params._meta as never, () =>
      context.calls.start(who, agent, args as Record<string, unknown> | undefined),
    );
    const {
      inputRequests: _i,
      result: _r,
      error: _e,
      ...task
    } = modernTaskOf(context, run, agent, modern.clientCapabilities);
    return { ...task, resultType: "task", _meta: { [META.serverInfo]: SERVER_INFO } };
  }
  // The run stops at an interrupt: the call answers the question instead of waiting.
  let waiting: { run: RunRecord; interrupts: Interrupt[] } | undefined;
  const ask: AskCaller = async (run, interrupts) => {
    waiting = { run, interrupts };
    return undefined;
  };
  const hooks = {
    signal,
    ask: canElicitForm(modern.clientCapabilities) ? ask : undefined,
    following,
  };
  const result = await withMessageTraceContext(params._meta as never, async () => {
    if (params.requestState === undefined) {
      return context.calls.call(who, agent, args as Record<string, unknown> | undefined, hooks);
    }
    const run = await runOfRequestState(context, params.requestState, name, who, scope, agent);
    const interrupts = run.interrupts as unknown as Interrupt[];
    const answers = resumeOfInputResponses(agent, interrupts, params.inputResponses);
    if (answers === "missing") {
      waiting = { run, interrupts };
      return undefined;
    }
    if (answers === "dismissed") return context.calls.settle(who, agent, run, { signal });
    const resumed = await mcpCall(() =>
      context.runs.resume(who, run.run_id, run.kind, answers, run.thread_id ?? undefined),
    );
    return context.calls.settle(who, agent, resumed, hooks);
  });
  if (waiting) return inputRequired(agent, name, waiting.run, waiting.interrupts);
  return complete(result as McpCallToolResult);
}

/** The InputRequiredResult of an interrupted run: its questions, and the state to retry with. */
function inputRequired(
  agent: RegisteredAgent,
  tool: string,
  run: RunRecord,
  interrupts: Interrupt[],
): Record<string, unknown> {
  const declared = agent.descriptor.specs.interrupts ?? [];
  return {
    resultType: "input_required",
    inputRequests: inputRequestsOf(agent.name, interrupts, (interrupt) =>
      expectedSchemaOf(interrupt, declared),
    ),
    requestState: encodeRequestState({
      runId: run.run_id,
      tool,
      interruptIds: interrupts.map((interrupt) => interrupt.id),
    }),
    _meta: { [META.serverInfo]: SERVER_INFO },
  };
}

/**
 * The run a retry's `requestState` names, read as the retry's caller: another caller's run is
 * not found, a run of another tool or one no longer waiting for those questions is refused, so
 * the state resumes only the run it was given for, by the caller it was given to.
 */
async function runOfRequestState(
  context: ModernContext,
  value: unknown,
  tool: string,
  who: Principal,
  scope: ToolScope,
  agent: RegisteredAgent,
): Promise<RunRecord> {
  const state = decodeRequestState(value);
  const refused = (why: string) => new McpError(RPC.invalidParams, `requestState refused: ${why}`);
  if (!state || state.tool !== tool) throw refused("it is not one this server gave for this tool");
  const run = await context.runs.findReachable(who, state.runId).catch(() => undefined);
  if (!run || scope.agentOfRun(who, run.agent_id)?.agentId !== agent.agentId) {
    throw refused("its run is not found");
  }
  const waitingFor = (run.interrupts as unknown as Interrupt[]).map((interrupt) => interrupt.id);
  const same =
    waitingFor.length === state.interruptIds.length &&
    state.interruptIds.every((id) => waitingFor.includes(id));
  if (run.status !== "interrupted" || !same) {
    throw refused(`run ${run.run_id} no longer waits for these answers (it is ${run.status})`);
  }
  return run;
}

/**
 * GET or DELETE without a session from a client that names 2026-07-28 in
 * `MCP-Protocol-Version`: that revision has no standalone stream and no session to end, so
 * the method is not allowed here (2026-07-28, Streamable HTTP, Backward Compatibility): 405
 * with `Allow: POST`. Undefined for anything else (a 2025 client is told to initialize).
 */
export function refuseModernNonPost(
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply | undefined {
  if (request.method === "POST" || request.headers["mcp-protocol-version"] !== MODERN_VERSION) {
    return undefined;
  }
  return reply
    .code(405)
    .header("allow", "POST")
    .type("application/json")
    .send({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: RPC.busy,
        message: `${request.method} is not allowed: MCP ${MODERN_VERSION} has no sessions or standalone stream; send each request as a POST`,
      },
    });
}
