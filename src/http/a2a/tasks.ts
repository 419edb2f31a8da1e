import type { Interrupt } from "@ag-ui/core";
import { type Principal, SYSTEM } from "../../auth/principal.js";
import {
  A2aError,
  a2aToAcpMessage,
  describeExpected,
  type ExpectedAnswer,
  FINAL_STATES,
  invalidParams,
  type Message,
  resumeBodyOf,
  type StreamResponse,
  TaskEvents,
  type TaskRun,
  taskNotFound,
  taskStateOf,
  taskStatusOf,
} from "../../bridge/a2a/index.js";
import { interruptType } from "../../bridge/acp/interrupts.js";
import { parseRunCommand, withAguiOrigin } from "../../bridge/acp/run-command.js";
import { clientIds } from "../../bridge/agui/run-command.js";
import type { RegisteredAgent } from "../../config/registry.js";
import { readUpdate } from "../../engine/frames/codec.js";
import type { EndFrames } from "../../engine/run-engine/end-waiters.js";
import type { RunService } from "../../engine/run-service.js";
import type { ThreadService } from "../../engine/thread-service.js";
import type { RunFrame, RunRecord } from "../../storage/types.js";
import { isDomainError } from "../../util/errors.js";
import { newId } from "../../util/ids.js";
import { aclThreadId, callerThreadId } from "../agui-runs/agui-runs.js";
import type { ClientGone } from "./gone.js";

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A task as the face works on it: the run behind it and its plain view. */
/** Why `eventsSoFar` stops following a run: it has read what it needed. */
const EVENTS_READ = new Error("the task's events so far are read");

export interface TaskHandle {
  run: RunRecord;
  view: TaskRun;
  /** The run's end as this replica records it, for a task sent to be waited for. */
  ended?: Promise<RunRecord | undefined>;
  /** The run's frames as that end wrote them, when it wrote them all (see `EndFrames`). */
  endFrames?: EndFrames;
}

/** Some of a task's stream events, and the last stored frame of the run they cover. */
export interface FollowStep {
  seq: number;
  events: StreamResponse[];
  /** The status that ends the stream (the task finished, or asks for input). */
  closing: boolean;
}

/** The view of a run the bridge maps to a task. */
export function taskRunOf(run: RunRecord): TaskRun {
  const command = parseRunCommand(run.creation);
  return {
    taskId: run.run_id,
    contextId: clientIds(command)?.threadId ?? run.thread_id ?? run.run_id,
    status: run.status,
    started: run.segments.length > 0,
    turns: run.segments.length,
    output: run.output,
    interrupts: run.interrupts,
    inputMessages: command.input.messages ?? [],
    updatedAt: run.updated_at,
  };
}

/**
 * A2A's task operations on ACP runs, for one agent's face: a task is a stateful run of that
 * agent, its context the run's thread (a client's context id maps to a thread as an AG-UI
 * threadId does, so `main` is the same conversation on both faces). Everything acts as the
 * caller: another caller's task is not found.
 */
export class A2aTasks {
  constructor(
    private readonly runs: RunService,
    private readonly threads: ThreadService,
    private readonly agent: RegisteredAgent,
  ) {}

  /**
   * The thread a client's context id names for the caller (see callerThreadId): another
   * caller's context is answered exactly as one nobody used.
   */
  threadOf(who: Principal, contextId: string): Promise<string> {
    return callerThreadId(this.threads, who, contextId);
  }

  /** The caller's task of this agent, or TaskNotFound. */
  async get(who: Principal, taskId: string): Promise<TaskHandle> {
    const run = await this.runs.findReachable(who, taskId).catch(() => undefined);
    if (
      run?.kind !== "stateful" ||
      run.agent_id !== this.agent.agentId ||
      (who.agentIds && !who.agentIds.has(run.agent_id))
    ) {
      throw taskNotFound(taskId);
    }
    return { run, view: taskRunOf(run) };
  }

  /**
   * A message: a new task on its context (a new context when it names none), or — with the
   * taskId of an `input-required` task — that task's resume. Returns the task and the frame
   * its stream of this message starts after.
   */
  async send(
    who: Principal,
    message: Message,
    /**
     * The caller answers only once the task finishes or pauses (a blocking SendMessage): a task
     * on a new context may then be written once, at its end (`RunService.createToWait`).
     */
    toWait = false,
  ): Promise<{ handle: TaskHandle; afterSeq: number }> {
    if (message.taskId) return this.resume(who, message.taskId, message);
    // A context made here: no thread has its id, and nobody else knows it until the answer.
    const fresh = !message.contextId;
    const contextId = message.contextId || newId();
    const command = withAguiOrigin(
      parseRunCommand(
        {
          agent_id: this.agent.agentId,
          input: { messages: [a2aToAcpMessage(message)] },
          if_not_exists: "create",
          on_disconnect: "continue",
          // A new message on a context while a task runs there waits for it, as a queue.
          multitask_strategy: "enqueue",
          stream_mode: ["custom"],
        },
        "a2a",
      ),
      { threadId: contextId, runId: newId() },
    );
    const threadId = fresh ? aclThreadId(contextId, who.id) : await this.threadOf(who, contextId);
    if (toWait) {
      const { run, ended, endFrames } = await this.acpCall(() =>
        this.runs.createToWait(who, "stateful", command, threadId, { freshThread: fresh }),
      );
      return { handle: { run, view: taskRunOf(run), ended, endFrames }, afterSeq: 0 };
    }
    // A new context's thread is known not to exist: not looked up again.
    const known = fresh ? null : undefined;
    const run = await this.acpCall(() =>
      this.runs.create(who, "stateful", command, threadId, undefined, known),
    );
    return { handle: { run, view: taskRunOf(run) }, afterSeq: 0 };
  }

  private async resume(who: Principal, taskId: string, message: Message) {
    const { run, view } = await this.get(who, taskId);
    if (message.contextId && message.contextId !== view.contextId) {
      throw invalidParams(
        `message.contextId ${JSON.stringify(message.contextId)} is not the context of task ${taskId}`,
      );
    }
    const state = taskStateOf(view);
    if (FINAL_STATES.has(state)) {
      throw new A2aError(
        "UnsupportedOperation",
        `task ${taskId} is ${state}: a finished task takes no more messages`,
        { taskId },
      );
    }
    if (state !== "TASK_STATE_INPUT_REQUIRED") {
      throw new A2aError(
        "UnsupportedOperation",
        `task ${taskId} is ${state}: it takes a message only when it is TASK_STATE_INPUT_REQUIRED`,
        { taskId },
      );
    }
    const interrupts = run.interrupts as unknown as Interrupt[];
    const expected = interrupts.length === 1 ? this.expectedAnswer(interrupts[0]!) : undefined;
    const body = resumeBodyOf(message, interrupts, expected);
    const resumed = await this.acpCall(() =>
      this.runs.resume(who, run.run_id, "stateful", body, run.thread_id ?? undefined),
    ).catch((err: unknown) => {
      // A refused answer says what the task waits for, in A2A's terms.
      if (expected === undefined || !(err instanceof A2aError) || err.kind !== "InvalidParams") {
        throw err;
      }
      throw invalidParams(`task ${taskId} waits for ${describeExpected(expected)}: ${err.message}`);
    });
    return { handle: { run: resumed, view: taskRunOf(resumed) }, afterSeq: run.last_seq };
  }

  /**
   * What an interrupt's answer must be: the interrupt's own `responseSchema`, else the agent's
   * `resume_payload` for its type (or `"*"`); the default open object declares nothing.
   */
  private expectedAnswer(interrupt: Interrupt): ExpectedAnswer {
    const own = interrupt.responseSchema;
    if (isRecord(own)) return { schema: own };
    const entries = this.agent.descriptor.specs.interrupts ?? [];
    const type = interruptType(interrupt);
    const entry =
      entries.find((e) => e.interrupt_type === type) ??
      entries.find((e) => e.interrupt_type === "*");
    const declared = entry?.resume_payload as Record<string, unknown> | undefined;
    const open =
      declared === undefined || (Object.keys(declared).length === 1 && declared.type === "object");
    return open ? "undeclared" : { schema: declared };
  }

  /** Cancels the task as ACP's cancel does (the agent is stopped), then reads it back. */
  async cancel(who: Principal, taskId: string): Promise<TaskHandle> {
    const { run, view } = await this.get(who, taskId);
    if (FINAL_STATES.has(taskStateOf(view))) {
      throw new A2aError(
        "TaskNotCancelable",
        `task ${taskId} is ${taskStateOf(view)}: it cannot be canceled`,
        { taskId },
      );
    }
    await this.runs.cancel(who, run.run_id, "stateful", { action: "interrupt", wait: true });
    return this.get(who, taskId);
  }

  /** Waits until the task finishes or pauses (or the signal aborts), then reads it. */
  async settle(who: Principal, handle: TaskHandle, signal: ClientGone): Promise<TaskHandle> {
    const run = await this.runs.waitFor(handle.run, signal, handle.ended);
    // A run that ended is handed over as recorded (by the engine here, or read after its end):
    // reading it again would cost a lone request a query and a parse for the same record.
    const ended = run !== handle.run && run.status !== "pending";
    if (ended) return { run, view: taskRunOf(run), endFrames: handle.endFrames };
    const fresh = (await this.runs.findReachable(who, run.run_id)) ?? run;
    return { run: fresh, view: taskRunOf(fresh) };
  }

  /** The agent's events of the run so far, folded into artifacts and messages. */
  async eventsSoFar(handle: TaskHandle): Promise<TaskEvents> {
    // Folded for the task only: no stream events are made.
    const events = new TaskEvents(handle.view, false);
    const { run } = handle;
    if (run.last_seq === 0) return events;
    // Ended here, all its frames written with its end: handed over as written, not read back.
    const written = handle.endFrames?.frames;
    if (written !== undefined) {
      for (const frame of written) fold(events, frame);
      return events;
    }
    const controller = new AbortController();
    try {
      for await (const batch of this.runs.followBatches(run.run_id, {
        afterSeq: 0,
        signal: controller.signal,
        read: "events",
      })) {
        for (const frame of batch) {
          // Exactly what was stored when the run was read, so that a stream following on from
          // `last_seq` (SubscribeToTask) neither repeats nor misses an event.
          if (frame.seq > run.last_seq) break;
          fold(events, frame);
        }
        // What was stored when the run was read: a task in progress is read up to there.
        if ((batch.at(-1)?.seq ?? 0) >= run.last_seq) break;
      }
    } finally {
      // With a reason of its own: without one, each abort makes a DOMException and its stack.
      controller.abort(EVENTS_READ);
    }
    return events;
  }

  /**
   * The whole stream of a new task after its first event, when its run ended with its insert
   * (sent `toWait`, see `send`): the events of the frames that end wrote, and the status that
   * closes the stream, known at once without reading anything back. Undefined when the run
   * did not end so: the stream then follows the run as it goes (`follow`).
   */
  async endedStream(handle: TaskHandle): Promise<StreamResponse[] | undefined> {
    // Set, with the end, before the run's creator gets it back when that end was written with
    // the insert; not yet when the insert was written alone (the run takes longer).
    const frames = handle.endFrames?.frames;
    if (frames === undefined || handle.ended === undefined) return undefined;
    const ended = await handle.ended;
    if (ended === undefined) return undefined;
    const events = new TaskEvents(handle.view);
    const stream = streamEvents(events, frames, 0);
    const { taskId, contextId } = handle.view;
    stream.push({
      statusUpdate: { taskId, contextId, status: taskStatusOf(taskRunOf(ended), events) },
    });
    return stream;
  }

  /**
   * The task's events after `afterSeq`, live until the run ends or pauses: artifact updates
   * as the agent makes them, a working status when a segment starts, and the final status.
   * Every earlier event is folded in first (unsent), so what is sent builds on all of it.
   */
  async *follow(
    handle: TaskHandle,
    afterSeq: number,
    signal: AbortSignal,
  ): AsyncGenerator<StreamResponse> {
    for await (const step of this.followSteps(handle, afterSeq, signal)) yield* step.events;
  }

  /**
   * `follow`'s events a batch of stored frames at a time, each with the last frame it covers,
   * so that a relay can record how far it got; the last step (`closing`) is the status that
   * ends the stream. Nothing more once the signal aborts.
   */
  async *followSteps(
    handle: TaskHandle,
    afterSeq: number,
    signal: AbortSignal,
  ): AsyncGenerator<FollowStep> {
    const { run, view } = handle;
    const events = new TaskEvents(view);
    let seq = afterSeq;
    for await (const batch of this.runs.followBatches(run.run_id, {
      afterSeq: 0,
      signal,
      read: "events",
    })) {
      const live = streamEvents(events, batch, afterSeq);
      seq = Math.max(seq, batch.at(-1)?.seq ?? 0);
      if (live.length > 0) yield { seq, events: live, closing: false };
    }
    if (signal.aborted) return;
    // Ended here: the run as its end was recorded (handed over, not read back).
    const endedHere = handle.ended && (await handle.ended);
    const ended = endedHere ?? (await this.runs.findReachable(SYSTEM, run.run_id)) ?? run;
    const status = taskStatusOf(taskRunOf(ended), events);
    const ids = { taskId: view.taskId, contextId: view.contextId };
    // The run's last frame is its final one, read above; a run that ended otherwise still
    // closes at its end, so that a relay is not started again for it.
    if (ended.status !== "pending") seq = Math.max(seq, ended.last_seq);
    yield { seq, events: [{ statusUpdate: { ...ids, status } }], closing: true };
  }

  /**
   * Waits until the run's frames up to `seq` are stored (see RunService.storedSeq), so that
   * what is recorded as done with them (a push relay's cursor) never covers frames a replica
   * that dies takes with it. False if the signal aborts first.
   */
  async stored(runId: string, seq: number, signal: AbortSignal): Promise<boolean> {
    while (this.runs.storedSeq(runId) < seq) {
      if (signal.aborted) return false;
      // The frame writer stores what it published within STORE_DELAY_MS (50 ms).
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return !signal.aborted;
  }

  /** Runs a run-service call, turning its domain errors into A2A ones. */
  private async acpCall<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      throw toA2aError(err);
    }
  }
}

/**
 * Stored frames of the run folded into the task's events; returns the stream events of those
 * after `afterSeq` (the ones before are folded in unsent, so that what is sent builds on them):
 * a working status when a segment starts, artifact updates as the agent made them.
 */
function streamEvents(
  events: TaskEvents,
  frames: readonly RunFrame[],
  afterSeq: number,
): StreamResponse[] {
  const live: StreamResponse[] = [];
  for (const frame of frames) {
    const isLive = frame.seq > afterSeq;
    if (frame.mode === "custom") {
      const event = readUpdate(frame) ?? {};
      const out = events.push(event);
      if (!isLive) continue;
      if (event.type === "RUN_STARTED") {
        const { taskId, contextId } = events.ids;
        live.push({
          statusUpdate: {
            taskId,
            contextId,
            status: { state: "TASK_STATE_WORKING", timestamp: new Date().toISOString() },
          },
        });
      }
      for (const one of out) live.push(one);
    } else if (frame.mode === "final") {
      const out = events.endSegment();
      if (isLive) for (const one of out) live.push(one);
    }
  }
  return live;
}

/** A stored frame of the run into the task's events: the agent's events, a segment's end. */
function fold(events: TaskEvents, frame: RunFrame): void {
  if (frame.mode === "custom") events.push(readUpdate(frame) ?? {});
  else if (frame.mode === "final") events.endSegment();
}

/** A domain error of the run service as the A2A error a client understands. */
export function toA2aError(err: unknown): unknown {
  if (!isDomainError(err)) return err;
  switch (err.code) {
    case "invalid":
      return invalidParams(err.message);
    case "not_found":
      return invalidParams(err.message);
    case "conflict":
      return new A2aError("UnsupportedOperation", err.message);
    default:
      return err;
  }
}
