import type { Logger } from "pino";
import { ERRCODE, type SegmentEnd } from "../../bridge/acp/outcomes.js";
import type { Fence, RunRecord, Storage } from "../../storage/types.js";
import { isClaimLost } from "../../util/errors.js";
import type { FrameBus } from "../frame-bus.js";

export interface RunFailuresOptions {
  storage: Storage;
  bus: FrameBus;
  owner: string;
  logger: Logger;
  /** Records a run's end without a segment (the run recorder's). */
  finishWithoutSegment: (run: RunRecord, end: SegmentEnd, fence?: Fence) => Promise<void>;
}

/**
 * Runs whose execution threw: each ends as an error naming the cause, so that it does not stay
 * pending, owned by a replica that no longer executes it. A failure that cannot be stored yet
 * is held, published to the run's followers, and recorded again with each lease renewal.
 */
export class RunFailures {
  /** Runs that failed but whose failure could not be stored yet. */
  private readonly unrecorded = new Map<string, { end: SegmentEnd; fence: Fence }>();

  constructor(private readonly options: RunFailuresOptions) {}

  /** Whether some failure waits to be recorded. */
  get pending(): boolean {
    return this.unrecorded.size > 0;
  }

  /**
   * Ends a run whose execution threw (a write of its own that failed: storage full, a broken
   * row…) as an error naming the cause. If even that cannot be stored, its followers are still
   * told how it ended. Never throws: one run's failure is not the server's.
   *
   * A write refused because the claim passed to another replica is no failure of the run: the
   * survivor owns its record, so nothing is written or published from here.
   */
  async failAfterError(runId: string, err: unknown, fence: Fence): Promise<void> {
    const { logger, bus } = this.options;
    if (isClaimLost(err)) {
      logger.warn(
        { run_id: runId },
        "lost the claim on a run to another replica; stopped executing it without recording an outcome",
      );
      return;
    }
    logger.error({ err, run_id: runId }, "run execution failed");
    const message = err instanceof Error ? err.message : String(err);
    const end: SegmentEnd = {
      kind: "error",
      errcode: ERRCODE.storageFailure,
      description: `the server could not complete the run: ${message}`,
    };
    this.unrecorded.set(runId, { end, fence });
    const lastSeq = await this.record(runId, end, fence);
    if (lastSeq === null) return;
    const output = {
      type: "error",
      run_id: runId,
      errcode: end.errcode,
      description: end.description,
    };
    const data = JSON.stringify({ type: "values", run_id: runId, status: "error", output });
    bus.publish(runId, [{ run_id: runId, seq: lastSeq + 1, mode: "final", data }]);
  }

  /** Tries again to record every failure held. */
  async retry(): Promise<void> {
    for (const [runId, { end, fence }] of [...this.unrecorded]) {
      await this.record(runId, end, fence);
    }
  }

  /**
   * Records a failure held in `unrecorded`, and forgets it once recorded or once the run is no
   * longer this replica's. Returns the run's last seq when it could not be recorded (null when
   * it was, or when not even the run could be read).
   */
  private async record(runId: string, end: SegmentEnd, fence: Fence): Promise<number | null> {
    let current: RunRecord | null = null;
    try {
      current = await this.options.storage.getRun(runId);
      // Gone, ended after all, or taken over: nothing here to record.
      if (current?.status === "pending" && current.owner === this.options.owner) {
        await this.options.finishWithoutSegment(current, end, fence);
      }
      this.unrecorded.delete(runId);
      return null;
    } catch (err) {
      if (isClaimLost(err)) {
        this.unrecorded.delete(runId);
        return null;
      }
      this.options.logger.error(
        { err, run_id: runId },
        "could not record that the run failed; trying again later",
      );
      return current?.last_seq ?? null;
    }
  }
}
