import type { Logger } from "pino";
import { aguiToAcpMessages as toAcpMessages } from "../bridge/acp/messages.js";
import {
  runOutput,
  type SegmentEnd,
  statusesFor,
  storageFailureEnd,
} from "../bridge/acp/outcomes.js";
import { parseRunCommand } from "../bridge/acp/run-command.js";
import { asValues, storedValues } from "../bridge/acp/values.js";
import type {
  Fence,
  NewCheckpoint,
  RunFrame,
  RunPatch,
  RunRecord,
  Storage,
  ThreadOnFinish,
} from "../storage/types.js";
import { isClaimLost, notFound } from "../util/errors.js";
import { newId } from "../util/ids.js";
import { type FailureReporting, reportedEnd } from "./failure-report.js";
import type { FrameBus } from "./frame-bus.js";
import { finalFrameData } from "./frames/codec.js";
import { FrameWriter } from "./frames/writer.js";

export interface RunRecorderOptions {
  storage: Storage;
  bus: FrameBus;
  logger: Logger;
  /** Called on every run status change (webhooks, metrics); errors are logged, never thrown. */
  onStatusChange?: (run: RunRecord) => void | Promise<void>;
  /**
   * Called with the run as recorded, each time this recorder writes a segment's end; with all
   * of the run's frames when that end's commit wrote every one of them (none was stored before).
   */
  onEnded?: (run: RunRecord, frames?: readonly RunFrame[]) => void;
  /** How failures are logged and shown (failure-report.ts). */
  failures: Omit<FailureReporting, "logger">;
}

/**
 * Writes down how a run (segment) ended. Usually that is one storage call (`recordAtOnce`):
 * the frames not stored yet, the final frame, the checkpoint, the run's outcome and its
 * thread's status, one transaction; the final frame is published after it commits, then the
 * status-change hook runs. When that call fails it wrote nothing, and the end is written step
 * by step in the order streams and `wait` rely on: frames, checkpoint, run status and output,
 * thread status, then the final frame, then the hook.
 *
 * A write that fails fails only what it concerns: a checkpoint that cannot be stored turns the
 * run's end into an error saying so; a thread status or final frame that cannot be stored is
 * logged and the rest still goes out (the final frame is published regardless), so nobody
 * following the run is left waiting. Only the run's own outcome failing is thrown, for the
 * engine to record the failure in its place.
 *
 * The outcome of a run this replica executes is written under the writer's fence: once another
 * replica took the run over, the write is refused and `claimLost` is thrown before anything else
 * (thread status, final frame, hooks) goes out; the run's end is the other replica's to record.
 */
export class RunRecorder {
  constructor(private readonly options: RunRecorderOptions) {}

  private get storage(): Storage {
    return this.options.storage;
  }

  private get bus(): FrameBus {
    return this.options.bus;
  }

  /**
   * Records how a segment ended: checkpoint (progress is kept unless rolled back), run status
   * and output, thread status, the final frame, then webhooks and hidden-thread clean-up.
   */
  async finishSegment(
    run: RunRecord,
    segmentEnd: SegmentEnd,
    values: unknown,
    messages: unknown[],
    writer: FrameWriter,
  ): Promise<void> {
    const { storage } = this;
    const end = this.reported(run, segmentEnd);
    await writer.settle();
    // Taken over while executing: not even the checkpoint is ours to write.
    if (writer.claimLost) throw writer.failure;
    const acpValues = asValues(values);
    const acpMessages = toAcpMessages(messages as never);
    const threadId = run.thread_id;
    const rollback = end.kind === "cancelled" && end.rollback;
    const checkpointOfSegment: NewCheckpoint | undefined =
      threadId && !rollback
        ? {
            checkpoint_id: newId(),
            values: acpValues,
            messages: acpMessages,
            metadata: {
              run_id: run.run_id,
              step: `segment-${run.segments.length - 1}`,
              source: "run",
            },
          }
        : undefined;
    // The usual end: frames, checkpoint, outcome and thread in one commit.
    if (
      !rollback &&
      (await this.recordAtOnce(run, end, acpValues, acpMessages, writer, checkpointOfSegment))
    ) {
      return;
    }

    // Step by step (a rollback, or the one transaction failed): each write that fails fails
    // only what it concerns.
    await writer.flush();
    if (writer.claimLost) throw writer.failure;
    let recorded = end;
    if (writer.failure && !rollback) recorded = storageFailureEnd("events", writer.failure);
    const checkpoint = async () => {
      if (checkpointOfSegment) await storage.addCheckpoint(threadId!, checkpointOfSegment);
    };
    // A stateless run's hidden thread that is deleted at the end would take the checkpoint
    // with it: it is written only if that deletion fails (nothing can read a hidden thread).
    if (deletesHiddenThread(run, recorded)) {
      await this.record(run, recorded, acpValues, acpMessages, writer, checkpoint);
      return;
    }
    try {
      await checkpoint();
    } catch (err) {
      this.options.logger.error(
        { err, run_id: run.run_id },
        "could not store the run's checkpoint; the run fails",
      );
      recorded = storageFailureEnd(
        "checkpoint",
        err instanceof Error ? err : new Error(String(err)),
      );
    }
    await this.record(run, recorded, acpValues, acpMessages, writer);
  }

  /**
   * Records a segment's end as one storage call: the frames not stored yet and the final frame,
   * the checkpoint, the outcome and the thread's status (or a stateless run's hidden thread
   * deleted). False when that could not be written, which then wrote nothing: the caller writes
   * the end step by step instead, where each failure is handled on its own.
   */
  private async recordAtOnce(
    run: RunRecord,
    end: SegmentEnd,
    values: Record<string, unknown>,
    messages: unknown[],
    writer: FrameWriter,
    checkpoint: NewCheckpoint | undefined,
  ): Promise<boolean> {
    if (run.thread_id === null) return false;
    const statuses = statusesFor(end);
    const deleting = deletesHiddenThread(run, end);
    const thread: ThreadOnFinish = deleting
      ? { delete: true }
      : { status: (await this.othersPending(run)) ? "busy" : statuses.thread };
    const output = runOutput(run.run_id, end, values, messages);
    const patch = endPatch(run, end, output);
    const frames = await writer.endFrames(
      finalFrameData(run.run_id, statuses.run, values, messages, output),
    );
    if (frames === null) throw writer.failure;
    // A store that was still under way failed: the run ends as that failure, step by step.
    if (writer.failure) return false;
    let finished: RunRecord;
    try {
      finished = await this.storage.finishRun(run.run_id, patch, thread, writer.fence, {
        frames,
        checkpoint: deleting ? undefined : checkpoint,
      });
    } catch (err) {
      if (isClaimLost(err)) throw err;
      this.options.logger.warn(
        { err, run_id: run.run_id },
        "could not store the run's end in one transaction; storing it step by step",
      );
      return false;
    }
    writer.endStored();
    // Every frame of the run, from its first, went into this commit: handed to those waiting
    // for its end here, who need not read them back.
    this.ended(finished, frames[0]?.seq === 1 ? frames : undefined);
    return true;
  }

  /**
   * Ends a run that never got to execute a segment (cancelled while queued, agent gone…).
   * `fence`: the claim it was taken under, when it is this replica's execution that ends it.
   */
  async finishWithoutSegment(run: RunRecord, segmentEnd: SegmentEnd, fence?: Fence): Promise<void> {
    const end = this.reported(run, segmentEnd);
    const thread = run.thread_id ? await this.storage.getThread(run.thread_id) : null;
    const writer = new FrameWriter(this.storage, this.bus, run.run_id, run.last_seq, { fence });
    await this.record(
      run,
      end,
      storedValues(thread?.values ?? null),
      thread?.messages ?? [],
      writer,
    );
  }

  private reported(run: RunRecord, end: SegmentEnd): SegmentEnd {
    return reportedEnd(run, end, { ...this.options.failures, logger: this.options.logger });
  }

  private async record(
    run: RunRecord,
    end: SegmentEnd,
    values: Record<string, unknown>,
    messages: unknown[],
    writer: FrameWriter,
    /** Writes the segment's checkpoint when it was held back for a hidden thread's deletion. */
    heldCheckpoint?: () => Promise<void>,
  ): Promise<void> {
    const { storage } = this;
    const { fence } = writer;
    const statuses = statusesFor(end);
    const output = runOutput(run.run_id, end, values, messages);
    const rollback = end.kind === "cancelled" && end.rollback;
    const patch = endPatch(run, end, output);
    // The hidden thread goes before the final frame and the webhook, so `wait`, a late GET and
    // the webhook all show the same run (without `thread_id`). Its status and checkpoint would
    // go with it: they are written only when it could not be deleted.
    let finished: RunRecord;
    /** Whether the thread stays and its status (and held checkpoint) are still to be written. */
    let threadToUpdate = run.thread_id !== null;
    if (run.thread_id && deletesHiddenThread(run, end)) {
      try {
        // The usual end of a stateless run: one write for the outcome and the clean-up.
        finished = await storage.finishRun(run.run_id, patch, { delete: true }, fence);
        threadToUpdate = false;
      } catch (err) {
        if (isClaimLost(err)) throw err;
        this.options.logger.warn(
          { err, run_id: run.run_id },
          "could not delete the stateless run's thread",
        );
        // Nothing was written: record the outcome alone, and keep the thread if it is there.
        finished = await storage.updateRun(run.run_id, patch, fence);
        threadToUpdate = finished.thread_id !== null;
      }
    } else if (run.thread_id && !rollback) {
      // The outcome and the thread's status in one transaction, so a client that sees the run
      // ended does not then find its thread still busy.
      const threadStatus = (await this.othersPending(run)) ? "busy" : statuses.thread;
      finished = await storage.finishRun(run.run_id, patch, { status: threadStatus }, fence);
      // Its thread was deleted meanwhile: the outcome stands, there was no status to set.
      if (finished.thread_id === null) this.warnThread(run, notFound("thread", run.thread_id));
      threadToUpdate = false;
    } else {
      finished = await storage.updateRun(run.run_id, patch, fence);
    }
    if (run.thread_id && threadToUpdate) {
      const threadId = run.thread_id;
      try {
        await heldCheckpoint?.();
        // Only a run that started changed the thread; one cancelled in the queue has nothing to
        // undo.
        if (rollback && run.segments.length > 0) {
          await storage.restoreCheckpoint(threadId, run.checkpoint_before, {
            discardRunId: run.run_id,
          });
        }
        const threadStatus = (await this.othersPending(run)) ? "busy" : statuses.thread;
        await storage.setThreadStatus(threadId, threadStatus);
      } catch (err) {
        this.warnThread(run, err);
      }
    }
    const finalFrame = finalFrameData(run.run_id, statuses.run, values, messages, output);
    // Rolled back: the run is deleted before its final frame goes out, so a client that has
    // seen the end and asks again gets 404, never the run it was told is gone.
    if (rollback && (await this.deleteRolledBack(run, writer))) {
      await writer.publishFinal(finalFrame);
      this.ended(finished);
      // Nothing can reach a deleted stateless run's hidden thread any more.
      if (run.kind === "stateless" && run.thread_id) {
        await storage.deleteThread(run.thread_id).catch((err) => {
          this.options.logger.warn(
            { err, run_id: run.run_id },
            "could not delete the rolled-back stateless run's thread",
          );
        });
      }
      return;
    }
    if (!(await writer.final(finalFrame))) {
      this.options.logger.warn(
        { err: writer.failure, run_id: run.run_id },
        "could not store the run's final frame; published it to the clients following the run",
      );
    }
    this.ended(finished);
  }

  private warnThread(run: RunRecord, err: unknown): void {
    this.options.logger.warn(
      { err, run_id: run.run_id, thread_id: run.thread_id },
      "could not record the thread's state at the end of the run",
    );
  }

  /** Deletes a rolled-back run once its frames so far are stored; false if it could not. */
  private async deleteRolledBack(run: RunRecord, writer: FrameWriter): Promise<boolean> {
    await writer.flush();
    try {
      await this.storage.deleteRun(run.run_id);
      return true;
    } catch (err) {
      // Not deleted after all: it ends like any other run, so that its followers see the end.
      this.options.logger.warn({ err, run_id: run.run_id }, "could not delete a rolled-back run");
      return false;
    }
  }

  /** True when a run other than `run` is pending on its thread (the thread stays busy). */
  private async othersPending(run: RunRecord): Promise<boolean> {
    const pending = await this.storage.pendingRunsOfThread(run.thread_id!);
    return pending.some((other) => other.run_id !== run.run_id);
  }

  /** A segment's end is recorded: those waiting for it here, then the status-change hook. */
  private ended(run: RunRecord, frames?: readonly RunFrame[]): void {
    this.options.onEnded?.(run, frames);
    this.notify(run);
  }

  notify(run: RunRecord): void {
    const hook = this.options.onStatusChange;
    if (!hook) return;
    Promise.resolve()
      .then(() => hook(run))
      .catch((err) =>
        this.options.logger.warn({ err, run_id: run.run_id }, "status change hook failed"),
      );
  }
}

/** The run's record at the end of a segment: its outcome, its segment closed, no owner. */
function endPatch(run: RunRecord, end: SegmentEnd, output: Record<string, unknown>): RunPatch {
  const segments = run.segments.map((segment, index) =>
    index === run.segments.length - 1 && segment.ended_at === null
      ? { ...segment, ended_at: now() }
      : segment,
  );
  return {
    status: statusesFor(end).run,
    output,
    interrupts: end.kind === "interrupt" ? end.interrupts : [],
    resume: null,
    segments,
    owner: null,
    lease_expires_at: null,
    cancel_requested: null,
  };
}

function deletesHiddenThread(run: RunRecord, end: SegmentEnd): boolean {
  const rollback = end.kind === "cancelled" && end.rollback;
  return (
    !rollback &&
    run.kind === "stateless" &&
    statusesFor(end).run !== "interrupted" &&
    parseRunCommand(run.creation).onCompletion === "delete" &&
    run.thread_id !== null
  );
}

function now(): string {
  return new Date().toISOString();
}
