import type { Interrupt } from "@ag-ui/core";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { type Principal, SYSTEM } from "../../auth/principal.js";
import { parseRunCommand, withAguiOrigin } from "../../bridge/acp/run-command.js";
import {
  callResultOf,
  declaredOutputSchema,
  type McpCallToolResult,
  pendingResultOf,
  runInputOf,
  ToolArgumentsError,
} from "../../bridge/mcp/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { RunService } from "../../engine/run-service.js";
import type { ThreadService } from "../../engine/thread-service.js";
import type { RunRecord } from "../../storage/types.js";
import { isDomainError } from "../../util/errors.js";
import { newId } from "../../util/ids.js";
import { callerThreadId } from "../agui-runs/agui-runs.js";

/** JSON-RPC error codes MCP uses (its SDK's ErrorCode, named here for what they mean here). */
export const RPC = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  /** Implementation-defined server error: the server is busy, or the run is in a state that refuses. */
  busy: -32000,
} as const;

/** How a call asks its caller for what an interrupted run waits for (see elicit.ts). */
export type AskCaller = (
  run: RunRecord,
  interrupts: Interrupt[],
) => Promise<{ resume: Array<Record<string, unknown>> } | undefined>;

/** What a call may do besides running the agent: tell progress, ask the caller. */
export interface CallHooks {
  /** Aborted when the caller cancels the request or goes away: the run is cancelled. */
  signal: AbortSignal;
  /** Asks the caller to answer an interrupt (undefined when it cannot be asked). */
  ask?: AskCaller;
  /** Told of each run (the first, then each resume) to follow its progress. */
  following?(run: RunRecord, afterSeq: number): void;
}

/**
 * A tool call as a run of its agent: a stateless run, or with `context` a run on the caller's
 * thread of that name (the same conversation as an AG-UI threadId or an A2A contextId of that
 * name). The call waits for the run; an interrupt is put to the caller when it can be asked,
 * and the same run resumes with its answer.
 */
export class ToolCalls {
  constructor(
    private readonly runs: RunService,
    private readonly threads: ThreadService,
  ) {}

  async call(
    who: Principal,
    agent: RegisteredAgent,
    args: Record<string, unknown> | undefined,
    hooks: CallHooks,
  ): Promise<McpCallToolResult> {
    const run = await this.start(who, agent, args);
    const cancelRun = () => {
      void this.runs
        .cancel(SYSTEM, run.run_id, run.kind, { action: "interrupt", wait: false })
        .catch(() => undefined);
    };
    hooks.signal.addEventListener("abort", cancelRun, { once: true });
    try {
      return await this.settle(who, agent, run, hooks);
    } finally {
      hooks.signal.removeEventListener("abort", cancelRun);
    }
  }

  /** Creates the call's run (the arguments checked as the agent's input). */
  async start(
    who: Principal,
    agent: RegisteredAgent,
    args: Record<string, unknown> | undefined,
  ): Promise<RunRecord> {
    let mapped: ReturnType<typeof runInputOf>;
    try {
      mapped = runInputOf(agent.descriptor, args, newId());
    } catch (err) {
      if (err instanceof ToolArgumentsError) throw new McpError(RPC.invalidParams, err.message);
      throw err;
    }
    const body = {
      agent_id: agent.agentId,
      input: mapped.input,
      on_disconnect: "continue",
      stream_mode: ["custom"],
      ...(mapped.context ? { if_not_exists: "create", multitask_strategy: "enqueue" } : {}),
    };
    return mcpCall(async () => {
      if (!mapped.context) {
        return this.runs.create(who, "stateless", parseRunCommand(body, "mcp"));
      }
      const command = withAguiOrigin(parseRunCommand(body, "mcp"), {
        threadId: mapped.context,
        runId: newId(),
      });
      const threadId = await callerThreadId(this.threads, who, mapped.context);
      return this.runs.create(who, "stateful", command, threadId);
    });
  }

  /**
   * Waits for the run (a call's, or a task's on tasks/result); answers its interrupts by
   * asking the caller, until it ends or the caller cannot be asked.
   */
  async settle(
    who: Principal,
    agent: RegisteredAgent,
    first: RunRecord,
    hooks: CallHooks,
  ): Promise<McpCallToolResult> {
    const withStructured = declaredOutputSchema(agent.descriptor) !== undefined;
    let run = first;
    hooks.following?.(run, 0);
    for (;;) {
      run = await this.runs.waitFor(run, hooks.signal);
      run = (await this.runs.findReachable(who, run.run_id)) ?? run;
      if (hooks.signal.aborted) throw new McpError(RPC.invalidRequest, "the call was cancelled");
      if (run.status !== "interrupted") return callResultOf(run, withStructured);
      const interrupts = run.interrupts as unknown as Interrupt[];
      const answer = hooks.ask ? await hooks.ask(run, interrupts) : undefined;
      if (!answer) return pendingResultOf(run, interrupts);
      const afterSeq = run.last_seq;
      run = await mcpCall(() =>
        this.runs.resume(who, run.run_id, run.kind, answer, run.thread_id ?? undefined),
      );
      hooks.following?.(run, afterSeq);
    }
  }
}

/** Runs a run-service call, its domain errors as MCP protocol errors. */
export async function mcpCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw asMcpError(err);
  }
}

/** A domain error of the run service as the MCP error a client understands. */
export function asMcpError(err: unknown): unknown {
  if (!isDomainError(err)) return err;
  switch (err.code) {
    case "invalid":
    case "not_found":
    case "too_large":
      return new McpError(RPC.invalidParams, err.message);
    case "conflict":
    case "overloaded":
      return new McpError(RPC.busy, err.message);
    case "unauthorized":
    case "forbidden":
      return new McpError(RPC.invalidRequest, err.message);
    default:
      return err;
  }
}
