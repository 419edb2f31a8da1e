import type { Principal } from "../../auth/principal.js";
import { parseRunCommand } from "../../bridge/acp/run-command.js";
import { ownsState } from "../../bridge/acp/run-input.js";
import { stateForClient } from "../../bridge/acp/values.js";
import { clientIds, knownMessages, startedInput } from "../../bridge/agui/run-command.js";
import type { ReplaySource, RunService } from "../../engine/run-service.js";
import type { AcpMessage, RunRecord } from "../../storage/types.js";
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
  const source = await runs.replaySource(options.who, options.threadId);
  if (!source) return;
  const { thread, pending } = source;
  const base = baseOf(source);

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
        event.input = startedInput(parseRunCommand(run.creation), {
          threadId: options.clientThreadId,
          runId: event.runId,
        });
        first = false;
      }
      yield event;
    }
  }
}

/** The run's ids as the AG-UI client that made it gave them (runs made through an AG-UI face). */
function aguiIdsOf(run: RunRecord): { threadId: string; runId: string } | undefined {
  return clientIds(parseRunCommand(run.creation));
}

/** The thread as it was before its oldest run in progress began. */
function baseOf(source: ReplaySource): Base {
  const { thread, recent, current, checkpointBefore: before } = source;
  const last = recent.find((run) => run.status !== "pending");
  if (!current || current.segments.length === 0) {
    return { messages: thread.messages ?? [], state: thread.values, last };
  }
  const messages = current.checkpoint_before ? (before?.messages ?? thread.messages ?? []) : [];
  const command = parseRunCommand(current.creation);
  // A run made by an AG-UI client started from the state that client sent.
  const state = ownsState(command)
    ? command.input.state
    : current.checkpoint_before
      ? (before?.values ?? null)
      : null;
  return { messages, state, last };
}

function historyEvents(clientThreadId: string, threadId: string, base: Base): Event[] {
  const messages = knownMessages(base.messages);
  const state = stateForClient(base.state);
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
