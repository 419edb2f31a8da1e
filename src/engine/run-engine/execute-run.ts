import type { Logger } from "pino";
import { ERRCODE, type SegmentEnd } from "../../bridge/acp/outcomes.js";
import { parseRunCommand } from "../../bridge/acp/run-command.js";
import type {
  Fence,
  RunPatch,
  RunRecord,
  SegmentRecord,
  Storage,
  ThreadRecord,
} from "../../storage/types.js";
import { isClaimLost } from "../../util/errors.js";
import { newId } from "../../util/ids.js";
import type { AgentDeviations } from "../agent-deviations.js";
import { type EventRejection, executeSegment, StopReason } from "../executor.js";
import type { FrameBus } from "../frame-bus.js";
import type { LiveTails } from "../frames/live-tails.js";
import type { RunRecorder } from "../run-recorder.js";
import type { EngineAgent } from "./agent.js";
import type { LazyAbortController } from "./lazy-abort.js";
import { lazyChild } from "./lazy-logger.js";

/** What executing a claimed run needs of the engine. */
export interface ExecuteRunContext {
  storage: Storage;
  bus: FrameBus;
  agents: ReadonlyMap<string, EngineAgent>;
  logger: Logger;
  deviations: AgentDeviations;
  tails: LiveTails;
  recorder: RunRecorder;
  /** Events one adapter stream (one segment) may yield; 0 or absent = no limit. */
  maxEventsPerRun?: number;
  onEvent?: (agent: string, rejected?: EventRejection) => void;
}

/**
 * Executes a run this replica claimed: resolves what a dead replica left (an open segment),
 * a cancel that came first, or an agent or thread gone; else opens the segment, runs it
 * through the executor under the run's time limit, and records its end. Every write for the
 * run goes under `fence`, the claim it was launched with. `opened`: the run's insert claimed
 * it and opened its segment.
 */
export async function executeClaimedRun(
  context: ExecuteRunContext,
  claimedRun: RunRecord,
  controller: LazyAbortController,
  fence: Fence,
  opened: boolean,
  /** The run's thread as its held insert creates it (see `Storage.insertRunOnNewThreadHeld`). */
  newThread?: ThreadRecord,
): Promise<void> {
  let claimed = claimedRun;
  const { storage, recorder } = context;
  const agent = context.agents.get(claimed.agent_id);
  // Made when the run logs something: most runs log nothing at the default level.
  const logger = lazyChild(context.logger, {
    run_id: claimed.run_id,
    thread_id: claimed.thread_id,
    agent: agent?.name,
  });
  if (agent) context.deviations.watch(agent.name, logger);
  const thread =
    opened && newThread !== undefined && newThread.thread_id === claimed.thread_id
      ? newThread
      : opened && claimed.kind === "stateless" && claimed.thread_id
        ? hiddenThreadOf(claimed)
        : claimed.thread_id
          ? await storage.getThread(claimed.thread_id)
          : null;

  // A segment still open means the replica executing it died (its lease ran out), unless
  // the run's own insert opened it just now.
  if (!opened && claimed.segments.at(-1)?.ended_at === null) {
    if (!agent?.retryOnRestart) {
      await recorder.finishWithoutSegment(claimed, RESTART_END, fence);
      logger.warn("failed a run whose executor died");
      return;
    }
    // Safe to retry: the dead segment starts over (left in place, it would count as a resume).
    claimed = { ...claimed, segments: claimed.segments.filter((s) => s.ended_at !== null) };
    logger.info("retrying a run whose executor died");
  }
  if (claimed.cancel_requested) {
    await recorder.finishWithoutSegment(claimed, cancelledEnd(claimed.cancel_requested), fence);
    return;
  }
  if (!agent || !thread) {
    const description = !agent
      ? `agent ${claimed.agent_id} is no longer configured on this server`
      : "the run's thread no longer exists";
    await recorder.finishWithoutSegment(
      claimed,
      { kind: "error", errcode: ERRCODE.agentError, description },
      fence,
    );
    return;
  }

  const run = opened ? claimed : await openSegment(storage, claimed, thread, fence);
  logger.debug({ segment: run.segments.length - 1, agent: agent.name }, "segment started");

  const timeout = armTimeout(agent, claimed, controller);
  try {
    const { onEvent } = context;
    const outcome = await executeSegment({
      storage,
      bus: context.bus,
      adapter: agent.adapter,
      run,
      command: parseRunCommand(run.creation),
      thread,
      signal: controller,
      logger,
      fence,
      tails: context.tails,
      maxEvents: context.maxEventsPerRun,
      dropRaw: agent.dropRaw,
      bounds: agent.bounds,
      agentName: agent.name,
      onEvent: onEvent && ((rejected) => onEvent(agent.name, rejected)),
    });
    const reason: unknown = controller.reason;
    // Stopped because another replica took the run over (see LeaseKeeper): nothing to record.
    if (isClaimLost(reason)) throw reason;
    if (agent.retryOnRestart && reason instanceof StopReason && reason.kind === "shutdown") {
      // Safe to retry: back to the queue for the next server to start over, as after a crash.
      await outcome.writer.flush();
      await storage.updateRun(
        run.run_id,
        { owner: null, lease_expires_at: null, segments: claimed.segments },
        fence,
      );
      logger.info("re-queued a run stopped by shutdown");
      return;
    }
    await recorder.finishSegment(
      run,
      outcome.end,
      outcome.values,
      outcome.messages,
      outcome.writer,
    );
  } finally {
    clearTimeout(timeout);
  }
}

/**
 * Writes a claimed run's new segment (its start, or a resume's): the segment, and the
 * checkpoint the run started from. (A run its insert claimed has it already.)
 */
async function openSegment(
  storage: Storage,
  claimed: RunRecord,
  thread: ThreadRecord,
  fence: Fence,
): Promise<RunRecord> {
  const segment: SegmentRecord = {
    agui_run_id: newId(),
    started_at: new Date().toISOString(),
    ended_at: null,
  };
  // A resume's answers stay with the segment they started (the run's `resume` is cleared at
  // the segment's end), in this same write.
  if (claimed.resume && claimed.resume.length > 0) segment.resume = claimed.resume;
  const segments = [...claimed.segments, segment];
  const patch: RunPatch = { segments, resume: claimed.resume };
  if (claimed.segments.length === 0) patch.checkpoint_before = thread.checkpoint_id;
  const run = await storage.updateRun(claimed.run_id, patch, fence);
  // Creating or resuming the run made its thread busy already (the usual case): no write then.
  if (thread.status !== "busy") await storage.setThreadStatus(thread.thread_id, "busy");
  return run;
}

/**
 * The time limit covers the whole run: each resumed segment gets what the earlier segments
 * left of it. `runTimeoutSeconds: 0` means no limit.
 */
function armTimeout(agent: EngineAgent, run: RunRecord, controller: LazyAbortController) {
  if (agent.runTimeoutSeconds <= 0) return undefined;
  const used = run.segments.reduce(
    (sum, segment) =>
      segment.ended_at
        ? sum + (Date.parse(segment.ended_at) - Date.parse(segment.started_at))
        : sum,
    0,
  );
  const left = Math.max(0, agent.runTimeoutSeconds * 1000 - used);
  return setTimeout(
    () =>
      controller.abort(
        new StopReason(
          "timeout",
          `the run exceeded its time limit of ${agent.runTimeoutSeconds} s`,
        ),
      ),
    left,
  );
}

/** How a run ends when the process executing it died (and the agent may not retry it). */
const RESTART_END: SegmentEnd = {
  kind: "error",
  errcode: ERRCODE.serverRestart,
  description: "the server restarted while the run was executing; the run did not complete",
};

function cancelledEnd(action: "interrupt" | "rollback"): SegmentEnd {
  return {
    kind: "cancelled",
    description: "run was cancelled before it started",
    rollback: action === "rollback",
  };
}

/**
 * The hidden thread a stateless run's insert just created, as that insert wrote it (see
 * `InsertRunOptions.create_hidden_thread`): nothing else can have changed it since, so it is
 * not read back.
 */
function hiddenThreadOf(run: RunRecord): ThreadRecord {
  return {
    thread_id: run.thread_id!,
    created_at: run.created_at,
    updated_at: run.created_at,
    metadata: {},
    status: "busy",
    values: null,
    messages: null,
    checkpoint_id: null,
    hidden: true,
    principal: run.principal,
  };
}
