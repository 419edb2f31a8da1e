import { type Principal, reaches } from "../auth/principal.js";
import type { RunService } from "../engine/run-service.js";
import { acpToAguiMessage } from "../pipeline/acp-messages.js";
import type { AcpMessage, RunRecord, ThreadRecord } from "../storage/types.js";
import { runEvents, type ServerEnding } from "./run-events.js";

type Event = Record<string, unknown>;

export interface ReplayOptions {
  /** The thread as the client names it (the AG-UI threadId; events carry it back). */
  clientThreadId: string;
  /** The ACP thread behind it. */
  threadId: string;
  /** Who asks: another principal's thread replays as nothing, as an unknown one does. */
  who: Principal;
  signal: AbortSignal;
  ending: ServerEnding;
}

/** What the thread looked like before the runs still in progress began. */
interface Base {
  messages: AcpMessage[];
  state: unknown;
  /** The latest run that is over, if any: it names the replayed history and may be interrupted. */
  last: RunRecord | undefined;
}

/**
 * A thread's history as AG-UI events, for a client that (re)connects: the runs that are over,
 * compacted into one run (RUN_STARTED, MESSAGES_SNAPSHOT, STATE_SNAPSHOT, RUN_FINISHED carrying
 * the open interrupts, if the thread waits for an answer), then every run in progress from its
 * RUN_STARTED, followed live until it ends. Nothing is sent twice: the history is the thread as
 * it was before the first run in progress started (the checkpoint that run began from), and each
 * run in progress brings its own new input messages in its RUN_STARTED, as CopilotKit's own
 * runtime does. An unknown thread replays as nothing.
 */
export async function* replayThread(
  runs: RunService,
  options: ReplayOptions,
): AsyncGenerator<Event> {
  const { storage } = runs;
  const thread = await storage.getThread(options.threadId);
  if (!thread || thread.hidden || !reaches(options.who, thread.principal)) return;
  // Captured once: runs started after this connect are not part of it.
  const pending = await storage.pendingRunsOfThread(options.threadId);
  const base = await baseOf(runs, thread, pending[0]);

  const history = historyEvents(options.clientThreadId, thread.thread_id, base);
  for (const event of history) yield event;

  for (const run of pending) {
    if (options.signal.aborted) return;
    const clientRunId = (runId: unknown) =>
      runId === run.segments[0]?.agui_run_id ? (aguiIdsOf(run)?.runId ?? runId) : runId;
    let first = true;
    for await (const event of runEvents(runs, run, {
      afterSeq: 0,
      signal: options.signal,
      ending: options.ending,
      quietWhenUnstarted: true,
    })) {
      if (event.type === "RUN_STARTED" || event.type === "RUN_FINISHED") {
        event.threadId = options.clientThreadId;
        event.runId = clientRunId(event.runId);
      }
      if (event.type === "RUN_STARTED" && first) {
        // The run's own new messages (the user's turn) are not in the history above.
        event.input = runInput(run, event, options.clientThreadId);
        first = false;
      }
      yield event;
    }
  }
}

/** The run's ids as the AG-UI client that made it gave them (runs made through an AG-UI face). */
function aguiIdsOf(run: RunRecord): { threadId: string; runId: string } | undefined {
  const agui = run.creation.agui as { threadId?: unknown; runId?: unknown } | undefined;
  return typeof agui?.threadId === "string" && typeof agui.runId === "string"
    ? { threadId: agui.threadId, runId: agui.runId }
    : undefined;
}

async function baseOf(
  runs: RunService,
  thread: ThreadRecord,
  current: RunRecord | undefined,
): Promise<Base> {
  const { storage } = runs;
  const recent = await storage.searchRuns({
    thread_id: thread.thread_id,
    kind: "stateful",
    limit: 20,
    offset: 0,
  });
  const last = recent.find((run) => run.status !== "pending");
  if (!current) return { messages: thread.messages ?? [], state: thread.values, last };
  // Read after the thread: a run that had not started then changed nothing in what was read.
  const fresh = (await storage.getRun(current.run_id)) ?? current;
  if (fresh.segments.length === 0) {
    return { messages: thread.messages ?? [], state: thread.values, last };
  }
  const before = fresh.checkpoint_before
    ? await storage.getCheckpoint(thread.thread_id, fresh.checkpoint_before)
    : null;
  const messages = fresh.checkpoint_before ? (before?.messages ?? thread.messages ?? []) : [];
  const input = (fresh.creation.input ?? {}) as { state?: unknown };
  // A run made by an AG-UI client started from the state that client sent.
  const state =
    fresh.creation.agui !== undefined && input.state !== undefined
      ? input.state
      : fresh.checkpoint_before
        ? (before?.values ?? null)
        : null;
  return { messages, state, last };
}

function historyEvents(clientThreadId: string, threadId: string, base: Base): Event[] {
  const messages = toAgui(base.messages);
  const state = aguiState(base.state);
  const interrupted = base.last?.status === "interrupted" ? base.last.interrupts : [];
  if (messages.length === 0 && state === undefined && interrupted.length === 0) return [];
  const runId = (base.last && (aguiIdsOf(base.last)?.runId ?? base.last.run_id)) ?? threadId;
  const ids = { threadId: clientThreadId, runId };
  const events: Event[] = [{ type: "RUN_STARTED", ...ids }];
  if (messages.length > 0) events.push({ type: "MESSAGES_SNAPSHOT", messages });
  if (state !== undefined) events.push({ type: "STATE_SNAPSHOT", snapshot: state });
  events.push(
    interrupted.length > 0
      ? { type: "RUN_FINISHED", ...ids, outcome: { type: "interrupt", interrupts: interrupted } }
      : { type: "RUN_FINISHED", ...ids },
  );
  return events;
}

/** The run's RunAgentInput as its RUN_STARTED carries it: the messages it added to the thread. */
function runInput(run: RunRecord, started: Event, clientThreadId: string): Event {
  const input = (run.creation.input ?? {}) as Record<string, unknown>;
  return {
    threadId: clientThreadId,
    runId: started.runId,
    messages: Array.isArray(input.messages) ? toAgui(input.messages as AcpMessage[]) : [],
    tools: Array.isArray(input.tools) ? input.tools : [],
    context: Array.isArray(input.context) ? input.context : [],
    ...(input.state !== undefined && input.state !== null ? { state: input.state } : {}),
    forwardedProps: isObject(input.forwardedProps) ? input.forwardedProps : {},
  };
}

function toAgui(messages: readonly AcpMessage[]): Event[] {
  const out: Event[] = [];
  for (const message of messages) {
    try {
      out.push(acpToAguiMessage(message) as unknown as Event);
    } catch {
      // Written through ACP in a shape AG-UI has no form for: the client cannot show it.
    }
  }
  return out;
}

/** Thread values as AG-UI state: `undefined` when there is nothing to restore. */
function aguiState(values: unknown): unknown {
  if (values === null || values === undefined) return undefined;
  if (isObject(values)) {
    const keys = Object.keys(values);
    if (keys.length === 0) return undefined;
    // Non-object AG-UI state is stored wrapped (see acp-mapping.ts).
    if (keys.length === 1 && keys[0] === "$state") return values.$state ?? undefined;
  }
  return values;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
