import type { Interrupt } from "@ag-ui/core";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../../auth/principal.js";
import {
  callResultOf,
  canElicitForm,
  declaredOutputSchema,
  expectedSchemaOf,
  inputRequestsOf,
  isTerminalStatus,
  type ModernRequest,
  taskOf,
  ttlOf,
} from "../../bridge/mcp/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunExpiries } from "../../retention/run-expiries.js";
import type { RunRecord } from "../../storage/types.js";
import { resumeOfInputResponses } from "./input-responses.js";
import { mcpCall, RPC } from "./tool-calls.js";
import type { ToolScope } from "./tool-scope.js";

/** The tasks extension of 2026-07-28 (its id in capabilities and in `_meta`). */
export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks";

/** What the extension's methods need: the runs, and how long retention keeps one. */
export interface ModernTaskContext {
  runs: RunService;
  /** `server.retention.finishedStatelessRuns` (a task's `ttlMs`). */
  finishedStatelessRuns: number | null;
  /** The lifetimes granted to tasks whose (2025) client asked for a ttl. */
  expiries: RunExpiries;
}

/** The ttl granted to a task whose client asked for one, else undefined (retention's). */
export async function grantedTtlOf(
  context: ModernTaskContext,
  run: RunRecord,
): Promise<number | undefined> {
  return (await context.expiries.ttlsOf([run])).get(run.run_id);
}

/** Whether the request's client declared the tasks extension (then a call is a task). */
export function declaresTasks(capabilities: Record<string, unknown>): boolean {
  const extensions = capabilities.extensions;
  return typeof extensions === "object" && extensions !== null && TASKS_EXTENSION in extensions;
}

/**
 * A run as a task of the extension (ext-tasks `Task`): the 2025 task's status and times with
 * `ttlMs` / `pollIntervalMs`; while interrupted its questions as `inputRequests` (answered with
 * tasks/update); once completed the call's result; once failed the agent's message as the error.
 */
export function modernTaskOf(
  context: ModernTaskContext,
  run: RunRecord,
  agent: RegisteredAgent,
  capabilities: Record<string, unknown>,
  grantedTtl?: number,
): Record<string, unknown> {
  const { ttl, pollInterval, ...task } = taskOf(
    run,
    grantedTtl ?? ttlOf(run, context.finishedStatelessRuns),
  ) as ReturnType<typeof taskOf> & Record<string, unknown>;
  const base: Record<string, unknown> = {
    ...task,
    ttlMs: ttl,
    ...(pollInterval === undefined ? {} : { pollIntervalMs: pollInterval }),
  };
  switch (task.status) {
    case "input_required": {
      // Questions go only to a client that declared it can be asked (MRTR).
      const declared = agent.descriptor.specs.interrupts ?? [];
      const inputRequests = canElicitForm(capabilities)
        ? inputRequestsOf(agent.name, run.interrupts as unknown as Interrupt[], (interrupt) =>
            expectedSchemaOf(interrupt, declared),
          )
        : {};
      return { ...base, inputRequests };
    }
    case "completed": {
      const result = callResultOf(run, declaredOutputSchema(agent.descriptor) !== undefined);
      return { ...base, result: { ...result, resultType: "complete" } };
    }
    case "failed": {
      const message = callResultOf(run, false).content[0]?.text ?? `the run ended ${run.status}`;
      return { ...base, error: { code: RPC.busy, message } };
    }
    default:
      return base;
  }
}

/** The caller's run behind a task of this scope, with its agent; another caller's is not found. */
export async function findTask(
  context: ModernTaskContext,
  params: Record<string, unknown>,
  who: Principal,
  scope: ToolScope,
): Promise<{ run: RunRecord; agent: RegisteredAgent }> {
  const taskId = params.taskId;
  if (typeof taskId !== "string" || taskId === "") {
    throw new McpError(RPC.invalidParams, "params.taskId must be a task id");
  }
  const run = await context.runs.findReachable(who, taskId).catch(() => undefined);
  const agent = run && scope.agentOfRun(who, run.agent_id);
  if (!run || !agent) {
    throw new McpError(RPC.invalidParams, `task ${JSON.stringify(taskId.slice(0, 100))} not found`);
  }
  return { run, agent };
}

/**
 * The extension's methods on a run: tasks/get reads it, tasks/update answers its questions
 * (the run resumes; answers to questions it does not ask are ignored), tasks/cancel cancels it
 * (the agent is stopped; a task already done is left as it is). Read from the run store as the
 * caller, so any replica answers.
 */
export async function answerTaskMethod(
  context: ModernTaskContext,
  modern: ModernRequest,
  who: Principal,
  scope: ToolScope,
): Promise<Record<string, unknown>> {
  const { run, agent } = await findTask(context, modern.params, who, scope);
  switch (modern.method) {
    case "tasks/get":
      return modernTaskOf(
        context,
        run,
        agent,
        modern.clientCapabilities,
        await grantedTtlOf(context, run),
      );
    case "tasks/update": {
      if (run.status !== "interrupted") return {};
      const answers = resumeOfInputResponses(
        agent,
        run.interrupts as unknown as Interrupt[],
        modern.params.inputResponses ?? {},
      );
      if (answers === "missing" || answers === "dismissed") return {};
      await mcpCall(() =>
        context.runs.resume(who, run.run_id, run.kind, answers, run.thread_id ?? undefined),
      );
      return {};
    }
    default: {
      if (isTerminalStatus(taskOf(run).status)) return {};
      await mcpCall(() =>
        context.runs.cancel(who, run.run_id, run.kind, { action: "interrupt", wait: true }),
      );
      return {};
    }
  }
}
