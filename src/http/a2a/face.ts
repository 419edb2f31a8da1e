import type { Principal } from "../../auth/principal.js";
import {
  A2aError,
  checkParts,
  FINAL_STATES,
  type ListTasksResponse,
  type PartPolicy,
  replyMessage,
  type SendMessageRequest,
  type SendMessageResponse,
  type StreamResponse,
  type Task,
  type TaskPushNotificationConfig,
  type TaskViewOptions,
  taskStateOf,
  taskStatusOf,
  toTask,
} from "../../bridge/a2a/index.js";
import type { AgentA2aOptions } from "../../config/agent-a2a.js";
import type { RegisteredAgent } from "../../config/registry.js";
import { LazyAbortController } from "../../engine/run-engine/lazy-abort.js";
import type { RunService } from "../../engine/run-service.js";
import type { ThreadService } from "../../engine/thread-service.js";
import type { ClientGone } from "./gone.js";
import { listTasks } from "./list-tasks.js";
import { listParams, sendParams, taskIdParams } from "./params.js";
import type { A2aPush } from "./push.js";
import { A2aTasks, type TaskHandle } from "./tasks.js";

/**
 * A stream of task events: followed as the run goes, or known whole at once (a task whose run
 * ended with its insert), which a binding may answer in one write.
 */
export type A2aStream = AsyncGenerator<StreamResponse> | readonly StreamResponse[];

/** A stream known whole (see A2aStream). */
export const isWhole = (events: A2aStream): events is readonly StreamResponse[] =>
  Array.isArray(events);

/**
 * One agent's A2A operations, whatever the binding: each takes the operation's params as the
 * specification names them (ProtoJSON, either field-name form: see bridge/a2a/protojson.ts) and
 * answers its result in ProtoJSON (lowerCamelCase), or a stream of StreamResponse. A stream is
 * prepared first (checks, the run created or resumed), so that a refusal is an error response,
 * not a stream.
 */
export class A2aFace {
  readonly tasks: A2aTasks;
  private readonly parts: PartPolicy;

  constructor(
    private readonly runs: RunService,
    threads: ThreadService,
    readonly agent: RegisteredAgent,
    /** The agent's `a2a` settings: how it replies, what its messages may carry. */
    readonly options: AgentA2aOptions,
    /** Push notifications (none: the operations answer PushNotificationNotSupported). */
    readonly push?: A2aPush,
  ) {
    this.tasks = new A2aTasks(runs, threads, agent);
    this.parts = options;
  }

  /**
   * SendMessage: the task once it finishes or pauses, or at once with `returnImmediately`; or,
   * for an agent that replies with messages (`a2a.reply`), the Message its run answered when
   * the run needs no task.
   */
  async sendMessage(
    who: Principal,
    params: unknown,
    signal: ClientGone,
  ): Promise<SendMessageResponse> {
    const request = this.sendRequest(params);
    const push = await this.pushConfigOf(request.configuration?.taskPushNotificationConfig);
    // Answered only at the task's end, with nothing to attach to it before: sent to be waited for.
    const toWait = push === undefined && request.configuration?.returnImmediately !== true;
    const { handle, afterSeq } = await this.tasks.send(who, request.message, toWait);
    await this.notify(handle, afterSeq, push);
    const historyLength = request.configuration?.historyLength;
    const replies = this.repliesWithMessage(request, afterSeq);
    // A message reply is the run's answer: it is waited for, as the specification says
    // `returnImmediately` does not apply to one.
    if (request.configuration?.returnImmediately && replies !== "message") {
      return { task: toTask(handle.view, undefined) };
    }
    const settled = await this.tasks.settle(who, handle, signal);
    const events = await this.tasks.eventsSoFar(settled);
    const message = replies ? replyMessage(settled.view, events) : undefined;
    if (message) return { message };
    return { task: toTask(settled.view, events, { historyLength }) };
  }

  /**
   * SendStreamingMessage: the task, then its events until it finishes or pauses. An agent
   * that replies with messages (`a2a.reply: message`) streams its one Message once the run
   * ends, when the run needs no task; else the task as it ended and its final status.
   */
  async streamMessage(who: Principal, params: unknown, signal: ClientGone): Promise<A2aStream> {
    const request = this.sendRequest(params);
    const push = await this.pushConfigOf(request.configuration?.taskPushNotificationConfig);
    // Sent to be waited for when nothing is attached to it first: a new task whose run ends
    // with its insert is written once, and streamed whole once that one commit is done.
    const { handle, afterSeq } = await this.tasks.send(who, request.message, push === undefined);
    await this.notify(handle, afterSeq, push);
    const historyLength = request.configuration?.historyLength;
    if (this.repliesWithMessage(request, afterSeq) === "message") {
      return this.messageStream(who, handle, historyLength, signal);
    }
    if (afterSeq > 0) {
      return this.stream(await this.snapshot(handle, { historyLength }), handle, afterSeq, signal);
    }
    const first = toTask(handle.view, undefined, { historyLength });
    const rest = await this.tasks.endedStream(handle);
    if (rest !== undefined) return [{ task: first }, ...rest];
    return this.stream(first, handle, afterSeq, signal);
  }

  /**
   * SubscribeToTask: the task as it is now (artifacts and history so far), then the events
   * after it, live; not a finished one.
   */
  async subscribe(who: Principal, params: unknown, signal: ClientGone): Promise<A2aStream> {
    const { id } = taskIdParams(params, "SubscribeToTask", "SubscribeToTaskRequest");
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
    const { id, historyLength } = taskIdParams(params, "GetTask", "GetTaskRequest");
    return this.snapshot(await this.tasks.get(who, id), { historyLength });
  }

  async cancelTask(who: Principal, params: unknown): Promise<Task> {
    const { id } = taskIdParams(params, "CancelTask", "CancelTaskRequest");
    return this.snapshot(await this.tasks.cancel(who, id));
  }

  /** ListTasks (see list-tasks.ts): history and artifacts as GetTask shows them, when asked. */
  async listTasks(who: Principal, params: unknown): Promise<ListTasksResponse> {
    const request = listParams(params);
    const threadOf = (contextId: string) => this.tasks.threadOf(who, contextId);
    return listTasks(this.runs, this.agent.agentId, who, request, threadOf, (handle) => {
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

  /** The request, its message's parts checked against what the agent takes. */
  private sendRequest(params: unknown): SendMessageRequest {
    const request = sendParams(params);
    checkParts(request.message, this.parts);
    return request;
  }

  /**
   * Whether this send may be answered with a Message, and how (`a2a.reply`): never for a
   * resumed task or one that asked for push notifications (the client follows a task).
   */
  private repliesWithMessage(
    request: SendMessageRequest,
    afterSeq: number,
  ): "message" | "auto" | undefined {
    const { reply } = this.options;
    if (reply === "task" || afterSeq > 0 || request.message.taskId) return undefined;
    if (request.configuration?.taskPushNotificationConfig !== undefined) return undefined;
    return reply;
  }

  /** A config sent with the message, checked before the task is made (push.ts). */
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
    gone: ClientGone,
  ): AsyncGenerator<StreamResponse> {
    yield { task: first };
    // Following the run needs an AbortSignal; a stream known whole never made one.
    const signal = gone instanceof LazyAbortController ? gone.signal : gone;
    yield* this.tasks.follow(handle, afterSeq, signal);
  }

  /** A message agent's stream: its one Message, or the task it needed and its final status. */
  private async *messageStream(
    who: Principal,
    handle: TaskHandle,
    historyLength: number | undefined,
    signal: ClientGone,
  ): AsyncGenerator<StreamResponse> {
    const settled = await this.tasks.settle(who, handle, signal);
    if (signal.aborted) return;
    const events = await this.tasks.eventsSoFar(settled);
    const message = replyMessage(settled.view, events);
    if (message) {
      yield { message };
      return;
    }
    const task = toTask(settled.view, events, { historyLength });
    yield { task };
    const { id: taskId, contextId } = task;
    yield { statusUpdate: { taskId, contextId, status: taskStatusOf(settled.view, events) } };
  }
}

export const pushNotSupported = () =>
  new A2aError(
    "PushNotificationNotSupported",
    "this agent does not send push notifications (its card says pushNotifications: false)",
  );
