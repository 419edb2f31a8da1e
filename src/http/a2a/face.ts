import type { Principal } from "../../auth/principal.js";
import {
  A2aError,
  FINAL_STATES,
  type ListTasksResponse,
  type StreamResponse,
  type Task,
  type TaskState,
  taskStateOf,
  toTask,
} from "../../bridge/a2a/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunStatus } from "../../storage/types.js";
import { aclThreadId } from "../agui-face.js";
import { listParams, sendParams, taskIdParams } from "./params.js";
import { type A2aPush, checkPushConfig } from "./push.js";
import { A2aTasks, type TaskHandle, taskRunOf } from "./tasks.js";

/** The run status a task state is stored as (the query's filter; the state is checked after). */
const RUN_STATUS_OF: Partial<Record<TaskState, RunStatus>> = {
  TASK_STATE_SUBMITTED: "pending",
  TASK_STATE_WORKING: "pending",
  TASK_STATE_INPUT_REQUIRED: "interrupted",
  TASK_STATE_COMPLETED: "success",
  TASK_STATE_CANCELED: "error",
};

const DEFAULT_PAGE_SIZE = 50;

/**
 * One agent's A2A operations, whatever the binding: each takes the operation's params as the
 * specification names them (ProtoJSON) and answers its result, or a stream of StreamResponse.
 * A stream is prepared first (checks, the run created or resumed), so that a refusal is an
 * error response, not a stream.
 */
export class A2aFace {
  readonly tasks: A2aTasks;

  constructor(
    private readonly runs: RunService,
    readonly agent: RegisteredAgent,
    /** Push notifications (none: the operations answer PushNotificationNotSupported). */
    readonly push?: A2aPush,
  ) {
    this.tasks = new A2aTasks(runs, agent);
  }

  /** SendMessage: the task once it finishes or pauses, or at once with `returnImmediately`. */
  async sendMessage(who: Principal, params: unknown, signal: AbortSignal): Promise<Task> {
    const request = sendParams(params);
    const { handle, afterSeq } = await this.tasks.send(who, request.message);
    await this.notify(handle, afterSeq, request.configuration?.taskPushNotificationConfig);
    const historyLength = request.configuration?.historyLength;
    if (request.configuration?.returnImmediately) return toTask(handle.view, undefined);
    const settled = await this.tasks.settle(who, handle, signal);
    return this.snapshot(settled, historyLength);
  }

  /** SendStreamingMessage: the task, then its events until it finishes or pauses. */
  async streamMessage(
    who: Principal,
    params: unknown,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<StreamResponse>> {
    const request = sendParams(params);
    const { handle, afterSeq } = await this.tasks.send(who, request.message);
    await this.notify(handle, afterSeq, request.configuration?.taskPushNotificationConfig);
    const historyLength = request.configuration?.historyLength;
    const first =
      afterSeq === 0
        ? toTask(handle.view, undefined, { historyLength })
        : await this.snapshot(handle, historyLength);
    return this.stream(first, handle, afterSeq, signal);
  }

  /**
   * SubscribeToTask: the task as it is now (artifacts and history so far), then the events
   * after it, live; not a finished one.
   */
  async subscribe(
    who: Principal,
    params: unknown,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<StreamResponse>> {
    const { id } = taskIdParams(params, "SubscribeToTask");
    const handle = await this.tasks.get(who, id);
    const state = taskStateOf(handle.view);
    if (FINAL_STATES.has(state)) {
      throw new A2aError(
        "UnsupportedOperation",
        `task ${id} is ${state}: a finished task has no more events to subscribe to`,
        { taskId: id },
      );
    }
    // As the specification asks, the first event is the task's current state, so that nothing
    // is lost between a GetTask and the subscription, and nothing is sent twice: a client that
    // lost its stream (the a2a adapter among them) goes on from what it has.
    return this.stream(await this.snapshot(handle), handle, handle.run.last_seq, signal);
  }

  async getTask(who: Principal, params: unknown): Promise<Task> {
    const { id, historyLength } = taskIdParams(params, "GetTask");
    return this.snapshot(await this.tasks.get(who, id), historyLength);
  }

  async cancelTask(who: Principal, params: unknown): Promise<Task> {
    const { id } = taskIdParams(params, "CancelTask");
    return this.snapshot(await this.tasks.cancel(who, id));
  }

  /**
   * ListTasks: the caller's tasks of this agent, newest first, filtered by context and state.
   * The page token is the position in that list.
   */
  async listTasks(who: Principal, params: unknown): Promise<ListTasksResponse> {
    const request = listParams(params);
    const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
    const offset = request.pageToken ? Number(request.pageToken) : 0;
    const runs = await this.runs.search(who, {
      agent_id: this.agent.agentId,
      kind: "stateful",
      ...(request.contextId ? { thread_id: aclThreadId(request.contextId, who.id) } : {}),
      ...(request.status && RUN_STATUS_OF[request.status]
        ? { status: RUN_STATUS_OF[request.status] }
        : {}),
      limit: pageSize + 1,
      offset,
    });
    const more = runs.length > pageSize;
    const after = request.statusTimestampAfter ? Date.parse(request.statusTimestampAfter) : null;
    const tasks: Task[] = [];
    for (const run of runs.slice(0, pageSize)) {
      const view = taskRunOf(run);
      if (request.status && taskStateOf(view) !== request.status) continue;
      if (after !== null && Date.parse(view.updatedAt) < after) continue;
      const handle = { run, view };
      tasks.push(
        request.includeArtifacts
          ? await this.snapshot(handle, request.historyLength)
          : toTask(view, undefined, { historyLength: request.historyLength }),
      );
    }
    return {
      tasks,
      nextPageToken: more ? String(offset + pageSize) : "",
      pageSize,
      totalSize: offset + tasks.length + (more ? 1 : 0),
    };
  }

  /** A config sent with the message is set on the task; a resumed task's configs relay again. */
  private async notify(handle: TaskHandle, afterSeq: number, config: unknown): Promise<void> {
    if (config !== undefined) {
      if (!this.push) throw pushNotSupported();
      await this.push.attach(this.tasks, handle, checkPushConfig(config, handle.view.taskId));
    } else if (afterSeq > 0) {
      await this.push?.resumed(this.tasks, handle);
    }
  }

  /** The task with everything the agent said so far. */
  private async snapshot(handle: TaskHandle, historyLength?: number): Promise<Task> {
    const events = await this.tasks.eventsSoFar(handle);
    return toTask(handle.view, events, { historyLength });
  }

  private async *stream(
    first: Task,
    handle: TaskHandle,
    afterSeq: number,
    signal: AbortSignal,
  ): AsyncGenerator<StreamResponse> {
    yield { task: first };
    yield* this.tasks.follow(handle, afterSeq, signal);
  }
}

export const pushNotSupported = () =>
  new A2aError(
    "PushNotificationNotSupported",
    "this agent does not send push notifications (its card says pushNotifications: false)",
  );
