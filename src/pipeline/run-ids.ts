/**
 * Stage 2a: run ids — the one place that decides which thread and run an agent's lifecycle
 * events name, for every adapter alike.
 *
 * @ag-ui/client accepts any threadId and runId on RUN_STARTED and RUN_FINISHED (its verifier
 * checks the order of events, never their ids), and agents rely on it: `@ag-ui/langgraph`'s
 * LangGraphAgent puts the input's runId on RUN_STARTED and LangGraph's own run id on
 * RUN_FINISHED; other servers mint a runId of their own. So ids that disagree with the run in
 * progress are not a fault: they are set to the run in progress, with one warning per run
 * naming what the agent sent.
 *
 * The run in progress is the segment's thread, and the segment's runId for the stream's first
 * run. A later run in the same stream (AG-UI allows runs back to back) keeps the runId its
 * RUN_STARTED names, and its RUN_FINISHED is matched to that. RUN_ERROR carries no ids in AG-UI
 * 1.0: validation has already removed any it had.
 */
import type { EventRecord } from "./types.js";

export interface SegmentIds {
  threadId: string;
  runId: string;
}

export class RunIdMapper {
  private runs = 0;
  private current: string | undefined;
  private warned = false;

  constructor(private readonly ids: SegmentIds) {}

  /**
   * The event as the pipeline forwards it: `event` itself when its ids agree (or it is not a
   * RUN_STARTED / RUN_FINISHED), else a copy naming the run in progress.
   */
  map(event: EventRecord, warn: (text: string) => void): EventRecord {
    if (event.type === "RUN_STARTED") {
      this.current = this.runs === 0 ? this.ids.runId : (event.runId as string);
      this.runs++;
      this.warned = false;
    } else if (event.type !== "RUN_FINISHED" || this.current === undefined) {
      // A RUN_FINISHED before any RUN_STARTED is the order verifier's to refuse.
      return event;
    }
    const threadId = this.ids.threadId;
    const runId = this.current;
    if (event.threadId === threadId && event.runId === runId) return event;
    if (!this.warned) {
      this.warned = true;
      warn(
        `${event.type} names thread '${String(event.threadId)}' run '${String(event.runId)}', but the run in progress is thread '${threadId}' run '${runId}'; mapped to the run in progress (reported once per run)`,
      );
    }
    return { ...event, threadId, runId };
  }
}
