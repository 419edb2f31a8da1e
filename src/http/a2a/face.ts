import type { Principal } from "../../auth/principal.js";
import {
  A2aError,
  FINAL_STATES,
  type ListTasksResponse,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
  type TaskViewOptions,
  taskStateOf,
  toTask,
} from "../../bridge/a2a/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { RunService } from "../../engine/run-service.js";
import { listTasks } from "./list-tasks.js";
import { listParams, sendParams, taskIdParams } from "./params.js";
import type { A2aPush } from "./push.js";
import { A2aTasks, type TaskHandle } from "./tasks.js";

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
    const push = await this.pushConfigOf(request.configuration?.taskPushNotificationConfig);
    const { handle, afterSeq } = await this.tasks.send(who, request.message);
    await this.notify(handle, afterSeq, push);
    const historyLength = request.configuration?.historyLength;
    if (request.configuration?.returnImmediately) return toTask(handle.view, undefined);
    const settled = await this.tasks.settle(who, handle, signal);
    return this.snapshot(settled, { historyLength });
  }

  /** SendStreamingMessage: the task, then its events until it finishes or pauses. */
  async streamMessage(
    who: Principal,
    params: unknown,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<StreamResponse>> {
    const request = sendParams(params);
    const push = await this.pushConfigOf(request.configuration?.taskPushNotificationConfig);
    const { handle, afterSeq } = await this.tasks.send(who, request.message);
    await this.notify(handle, afterSeq, push);
    const historyLength = request.configuration?.historyLength;
    const first =
      afterSeq === 0
        ? toTask(handle.view, undefined, { historyLength })
        : await this.snapshot(handle, { historyLength });
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
    return this.snapshot(await this.tasks.get(who, id), { historyLength });
  }

  async cancelTask(who: Principal, params: unknown): Promise<Task> {
    const { id } = taskIdParams(params, "CancelTask");
    return this.snapshot(await this.tasks.cancel(who, id));
  }

  /** ListTasks (see list-tasks.ts): history and artifacts as GetTask shows them, when asked. */
  async listTasks(who: Principal, params: unknown): Promise<ListTasksResponse> {
    return listTasks(this.runs, this.agent.agentId, who, listParams(params), (handle, request) => {
      const options = {
        historyLength: request.historyLength,
        includeArtifacts: request.includeArtifacts ?? false,
      };
      // The agent's messages (history) and artifacts come from its events: read them only
      // when the answer shows some.
      return options.includeArtifacts || options.historyLength !== 0
        ? this.snapshot(handle, options)
        : Promise.resolve(toTask(handle.view, undefined, options));
    });
  }

  /** A config sent with the message, checked (its URL too) before the message is sent. */
  private async pushConfigOf(config: unknown): Promise<TaskPushNotificationConfig | undefined> {
    if (config === undefined) return undefined;
    if (!this.push) throw pushNotSupported();
    return this.push.check(config);
  }

  /** A config sent with the message is set on the task; a resumed task's configs relay again. */
  private async notify(
    handle: TaskHandle,
    afterSeq: number,
    config: TaskPushNotificationConfig | undefined,
  ): Promise<void> {
    if (config !== undefined && this.push) {
      await this.push.attach(this.tasks, handle, { ...config, taskId: handle.view.taskId });
    } else if (afterSeq > 0) {
      await this.push?.resumed(this.tasks, handle);
    }
  }

  /** The task with everything the agent said so far. */
  private async snapshot(handle: TaskHandle, options: TaskViewOptions = {}): Promise<Task> {
    const events = await this.tasks.eventsSoFar(handle);
    return toTask(handle.view, events, options);
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
