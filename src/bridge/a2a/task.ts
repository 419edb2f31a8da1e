/**
 * An ACP run as an A2A task. A task is one stateful run (an interrupt and its resume stay one
 * task, as they stay one run); its `contextId` is the run's thread as the client named it.
 *
 * | run status            | TaskState                                                    |
 * | --------------------- | ------------------------------------------------------------ |
 * | pending, not started  | TASK_STATE_SUBMITTED                                         |
 * | pending, started      | TASK_STATE_WORKING                                           |
 * | interrupted           | TASK_STATE_INPUT_REQUIRED, the interrupts in the status message |
 * | success               | TASK_STATE_COMPLETED, the agent's last text as the status message |
 * | error (cancelled)     | TASK_STATE_CANCELED                                          |
 * | error, timeout        | TASK_STATE_FAILED, the error's description as the status message |
 */
import { ERRCODE } from "../acp/outcomes.js";
import { acpToA2aMessage, interruptMessage, type TaskIds } from "./messages.js";
import type { TaskEvents } from "./task-events.js";
import type { Message, Task, TaskState, TaskStatus } from "./types.js";

type Rec = Record<string, unknown>;

/** What of a run a task shows (a plain view, so the bridge needs no storage types). */
export interface TaskRun extends TaskIds {
  status: "pending" | "interrupted" | "success" | "error" | "timeout";
  /** Whether a segment has started (a pending run that has not is only submitted). */
  started: boolean;
  output: Rec | null;
  interrupts: readonly Rec[];
  /** The messages the run was created with (ACP form). */
  inputMessages: readonly unknown[];
  updatedAt: string;
}

export function taskStateOf(run: Pick<TaskRun, "status" | "started" | "output">): TaskState {
  switch (run.status) {
    case "pending":
      return run.started ? "TASK_STATE_WORKING" : "TASK_STATE_SUBMITTED";
    case "interrupted":
      return "TASK_STATE_INPUT_REQUIRED";
    case "success":
      return "TASK_STATE_COMPLETED";
    case "timeout":
      return "TASK_STATE_FAILED";
    case "error":
      return run.output?.errcode === ERRCODE.cancelled
        ? "TASK_STATE_CANCELED"
        : "TASK_STATE_FAILED";
  }
}

/** The task's status: its state, when it got there, and the message that goes with it. */
export function taskStatusOf(run: TaskRun, events?: TaskEvents): TaskStatus {
  const state = taskStateOf(run);
  const status: TaskStatus = { state, timestamp: run.updatedAt };
  const message = statusMessage(run, state, events);
  if (message) status.message = message;
  return status;
}

function statusMessage(run: TaskRun, state: TaskState, events?: TaskEvents): Message | undefined {
  const ids = { taskId: run.taskId, contextId: run.contextId };
  if (state === "TASK_STATE_INPUT_REQUIRED") return interruptMessage(run.interrupts, ids);
  if (state === "TASK_STATE_COMPLETED") return events?.messages().at(-1);
  if (state === "TASK_STATE_FAILED" || state === "TASK_STATE_CANCELED") {
    const description = run.output?.description;
    if (typeof description !== "string") return undefined;
    return {
      messageId: `${run.taskId}-${state === "TASK_STATE_FAILED" ? "failed" : "canceled"}`,
      ...ids,
      role: "ROLE_AGENT",
      parts: [{ text: description }],
    };
  }
  return undefined;
}

export interface TaskViewOptions {
  /** The history's latest messages to include: absent = all, 0 = none. */
  historyLength?: number;
  /** Whether to include artifacts (ListTasks leaves them out unless asked). */
  includeArtifacts?: boolean;
}

/**
 * The task: status, history (the messages the run began with, then the agent's text
 * messages) and artifacts. `events` is the run's AG-UI events folded so far; without it the
 * task shows its status and input only.
 */
export function toTask(run: TaskRun, events?: TaskEvents, options: TaskViewOptions = {}): Task {
  const ids = { taskId: run.taskId, contextId: run.contextId };
  const history: Message[] = [];
  for (const message of run.inputMessages) {
    const a2a = acpToA2aMessage(message, ids);
    if (a2a) history.push(a2a);
  }
  if (events) history.push(...events.messages());
  const task: Task = {
    id: run.taskId,
    contextId: run.contextId,
    status: taskStatusOf(run, events),
  };
  const length = options.historyLength;
  const kept = length === undefined ? history : length <= 0 ? [] : history.slice(-length);
  if (kept.length > 0) task.history = kept;
  const artifacts = events?.artifactList() ?? [];
  if (options.includeArtifacts !== false && artifacts.length > 0) task.artifacts = artifacts;
  return task;
}
