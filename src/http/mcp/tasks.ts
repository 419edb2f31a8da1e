import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CancelTaskRequestSchema,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import type { Principal } from "../../auth/principal.js";
import {
  decodeCursor,
  encodeCursor,
  grantedTtl,
  isTerminalStatus,
  type McpCallToolResult,
  type McpTask,
  RELATED_TASK_META_KEY,
  taskOf,
  taskStatusOf,
  ttlOf,
} from "../../bridge/mcp/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunExpiries } from "../../retention/run-expiries.js";
import type { RunRecord } from "../../storage/types.js";
import { taskChanges } from "./task-changes.js";
import { type CallHooks, mcpCall, RPC, type ToolCalls } from "./tool-calls.js";
import type { ToolScope } from "./tool-scope.js";

/** Tasks one tasks/list page holds. */
const PAGE_SIZE = 50;

/** The server's task capabilities (2025-11-25): tools/call as a task, list and cancel. */
export const TASK_CAPABILITIES = { list: {}, cancel: {}, requests: { tools: { call: {} } } };

/** What the task methods of a session need. */
export interface TaskContext {
  runs: RunService;
  calls: ToolCalls;
  scope: ToolScope;
  who: Principal;
  /** `server.retention.finishedStatelessRuns`: how long a task's stateless run is kept. */
  finishedStatelessRuns: number | null;
  /** The lifetimes granted to tasks whose client asked for a ttl. */
  expiries: RunExpiries;
  /** A call's hooks on the request that asks (tasks/result asks the caller there). */
  hooksFor(extra: { signal: AbortSignal }, agent: RegisteredAgent): Omit<CallHooks, "signal">;
}

/** Another caller's task, or none: the same InvalidParams (2025-11-25, Tasks, Error Handling). */
const taskNotFound = (taskId: string) =>
  new McpError(RPC.invalidParams, `task ${JSON.stringify(taskId.slice(0, 100))} not found`);

/**
 * Tasks as runs (2025-11-25, experimental Tasks): `tools/call` with `params.task` starts the
 * agent's run and answers at once with its task; the task methods read and act on the run in
 * storage, as the caller, so any replica answers them and another caller's task is not found.
 */
export class McpTasks {
  constructor(private readonly context: TaskContext) {}

  /** A run as its task, with the ttl granted to it, else the one retention gives it. */
  private async taskOf(run: RunRecord): Promise<McpTask> {
    return (await this.tasksOf([run]))[0]!;
  }

  private async tasksOf(runs: readonly RunRecord[]): Promise<McpTask[]> {
    const granted = await this.context.expiries.ttlsOf(runs);
    return runs.map((run) =>
      taskOf(run, granted.get(run.run_id) ?? ttlOf(run, this.context.finishedStatelessRuns)),
    );
  }

  /** The caller's run behind a task of this scope, with its agent. */
  async find(taskId: string): Promise<{ run: RunRecord; agent: RegisteredAgent }> {
    const { runs, scope, who } = this.context;
    const run = await runs.findReachable(who, taskId).catch(() => undefined);
    const agent = run && scope.agentOfRun(who, run.agent_id);
    if (!run || !agent) throw taskNotFound(taskId);
    return { run, agent };
  }

  /** tools/call with `params.task`: the run starts; its task is the answer. */
  async create(
    agent: RegisteredAgent,
    args: Record<string, unknown> | undefined,
    notify: (task: McpTask) => Promise<void>,
    closed: AbortSignal,
    askedTtl?: number,
  ): Promise<{ task: McpTask }> {
    const run = await this.context.calls.start(this.context.who, agent, args);
    // A stateless run lives the ttl granted to its client's ask; a run on a thread (`context`)
    // is the thread's and lives as the thread's runs do.
    const ttl =
      run.kind === "stateless"
        ? grantedTtl(askedTtl, this.context.finishedStatelessRuns)
        : undefined;
    if (ttl !== undefined) await this.context.expiries.expireAfter(run, ttl);
    this.watch(run, notify, closed);
    return { task: ttl === undefined ? await this.taskOf(run) : taskOf(run, ttl) };
  }

  /**
   * notifications/tasks/status each time the task's status changes (working, input_required,
   * working again once answered, then its end), for a client that keeps its session's stream
   * open; polling tasks/get tells the same. Follows the run on whichever replica executes it.
   */
  private watch(run: RunRecord, notify: (task: McpTask) => Promise<void>, closed: AbortSignal) {
    void (async () => {
      for await (const changed of taskChanges(this.context.runs, run, closed)) {
        await notify(await this.taskOf(changed));
      }
    })().catch(() => undefined);
  }

  register(server: Server): void {
    server.setRequestHandler(GetTaskRequestSchema, async (request) => {
      const { run } = await this.find(request.params.taskId);
      return { ...(await this.taskOf(run)) };
    });
    server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
      const { run, agent } = await this.find(request.params.taskId);
      const hooks = { ...this.context.hooksFor(extra, agent), signal: extra.signal };
      const result = await this.context.calls.settle(this.context.who, agent, run, hooks);
      return withRelatedTask(result, run.run_id);
    });
    server.setRequestHandler(ListTasksRequestSchema, async (request) => {
      const cursor = request.params?.cursor;
      const offset = cursor === undefined ? 0 : decodeCursor(cursor);
      if (offset === undefined) {
        throw new McpError(RPC.invalidParams, "cursor must be a nextCursor this server gave");
      }
      const { runs, scope, who } = this.context;
      const page = await runs.search(who, {
        agent_ids: scope.agentIdsFor(who),
        limit: PAGE_SIZE + 1,
        offset,
      });
      const tasks = await this.tasksOf(page.slice(0, PAGE_SIZE));
      return page.length > PAGE_SIZE
        ? { tasks, nextCursor: encodeCursor(offset + PAGE_SIZE) }
        : { tasks };
    });
    server.setRequestHandler(CancelTaskRequestSchema, async (request) => {
      const { run } = await this.find(request.params.taskId);
      const status = taskStatusOf(run);
      if (isTerminalStatus(status)) {
        throw new McpError(
          RPC.invalidParams,
          `task ${run.run_id} is ${status}: a task in a terminal status cannot be cancelled`,
        );
      }
      const { runs, who } = this.context;
      await mcpCall(() =>
        runs.cancel(who, run.run_id, run.kind, { action: "interrupt", wait: true }),
      );
      const { run: cancelled } = await this.find(run.run_id);
      return { ...(await this.taskOf(cancelled)) };
    });
  }
}

/** A task's result carries the task it is of (2025-11-25, Tasks, "Associating Task-Related Messages"). */
function withRelatedTask(result: McpCallToolResult, taskId: string): McpCallToolResult {
  return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
}
