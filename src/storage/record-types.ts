/**
 * The records the storage contract (types.ts) reads and writes: threads, checkpoints, runs, and
 * what creating, searching and ending them takes. Imported through types.ts.
 */
import type { AcpMessage, RunStatus, ThreadStatus } from "../validation/acp-types.js";

export type RunKind = "stateful" | "stateless";

export interface ThreadRecord {
  thread_id: string;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  status: ThreadStatus;
  /** Current values (AG-UI state). `null` when nothing was ever written. Any JSON value. */
  values: unknown;
  /** Current messages, ACP form. `null` when nothing was ever written. */
  messages: AcpMessage[] | null;
  /** Latest checkpoint id, or null for a thread without checkpoints. */
  checkpoint_id: string | null;
  /** True for the hidden thread a stateless run gets; hidden threads never show in thread search. */
  hidden: boolean;
  /**
   * The principal that created the thread (`key:<name>` or `user:<id>`, see src/auth), or null
   * for a thread from before ownership existed or made without authentication.
   */
  principal: string | null;
}

export interface CheckpointRecord {
  checkpoint_id: string;
  thread_id: string;
  parent_checkpoint_id: string | null;
  created_at: string;
  values: unknown;
  messages: AcpMessage[] | null;
  /** `run_id`, `step`, `source` ("run" | "step" | "patch" | "copy" | "branch"), anything else. */
  metadata: Record<string, unknown>;
}

export interface CreateThreadInput {
  thread_id: string;
  metadata: Record<string, unknown>;
  hidden?: boolean;
  /** Status of a new thread (default `idle`); an existing thread keeps its own. */
  status?: ThreadStatus;
  /** "raise" → conflict error when it exists; "do_nothing" → return the existing thread. */
  if_exists: "raise" | "do_nothing";
  /** Who owns a new thread (default: nobody). */
  principal?: string | null;
}

/**
 * Whose records a search may return: `undefined` → everyone's (admin, or no authentication);
 * a string → that principal's only. Applied inside the query, so pages are full.
 */
export type PrincipalFilter = string | undefined;

export interface ThreadSearch {
  /** Containment: every key given must be present with a deep-equal value. */
  metadata?: Record<string, unknown>;
  /** Containment on the thread's current values (top-level keys, deep-equal values). */
  values?: Record<string, unknown>;
  status?: ThreadStatus;
  principal?: PrincipalFilter;
  limit: number;
  offset: number;
}

export interface NewCheckpoint {
  checkpoint_id: string;
  values: unknown;
  messages: AcpMessage[] | null;
  metadata: Record<string, unknown>;
  /** Defaults to the thread's current checkpoint (linear history); set for branches. */
  parent_checkpoint_id?: string | null;
}

export interface SegmentRecord {
  /** AG-UI runId of this segment (first start, then one per resume). */
  agui_run_id: string;
  started_at: string;
  ended_at: string | null;
  /**
   * A resumed segment's AG-UI resume entries (the answers it was started with), kept with the
   * segment when it opens: what the caller answered stays readable after the run's `resume` is
   * cleared. Absent on a first segment, and on segments from before they were kept.
   */
  resume?: Record<string, unknown>[];
}

export interface RunRecord {
  run_id: string;
  /** The thread (for stateless runs: the hidden thread). Null only when that thread was deleted. */
  thread_id: string | null;
  agent_id: string;
  kind: RunKind;
  status: RunStatus;
  created_at: string;
  updated_at: string;
  /** The RunCreateStateful / RunCreateStateless body as received (defaults not written in). */
  creation: Record<string, unknown>;
  metadata: Record<string, unknown>;
  /** ACP RunOutput once the run has a terminal or interrupted outcome. */
  output: Record<string, unknown> | null;
  /** Open AG-UI interrupts (camelCase objects) while status is `interrupted`. */
  interrupts: Record<string, unknown>[];
  /** AG-UI resume entries to hand to the next segment; cleared when that segment starts. */
  resume: Record<string, unknown>[] | null;
  segments: SegmentRecord[];
  /** Earliest time the engine may start it (after_seconds). */
  start_after: string;
  /** Thread checkpoint before the run started, for rollback. */
  checkpoint_before: string | null;
  /** Replica currently executing the run and until when its lease holds. Null when not executing. */
  owner: string | null;
  lease_expires_at: string | null;
  /** Bumped by every claim: with `owner`, names the claim a fenced write must still hold. */
  lease_epoch: number;
  /** Set by cancel from any replica; the executing replica notices and stops. */
  cancel_requested: "interrupt" | "rollback" | null;
  /** Sequence number of the last stored frame (0 = none). */
  last_seq: number;
  /** The principal the run belongs to (see `ThreadRecord.principal`); not the replica `owner`. */
  principal: string | null;
  /**
   * The W3C trace context (traceparent, and tracestate after a newline) of the request that
   * created the run, when tracing was on: every segment's span joins that trace, on any replica.
   */
  trace_context: string | null;
  /**
   * The face the run was started from (`acp`, `agui`, `copilotkit`, `a2a`, …), written with its
   * insert; null for a run from before faces were recorded.
   */
  face: string | null;
}

/**
 * The claim an executing replica writes under (`owner` and `lease_epoch` of the run it claimed).
 * A write given a fence is refused with `claimLost` (src/util/errors.ts) once another claim took the
 * run, and then writes nothing: a replica that stalled past its lease cannot overwrite the
 * survivor's outcome or append frames after it. Every claim bumps the epoch, so a claim taken
 * and released since is caught too. Run updates need the run still owned by the fence's owner;
 * frames are also accepted once the run ended under that same claim (owner cleared, not pending,
 * epoch unchanged), since a run's final frame is stored after its outcome.
 */
export interface Fence {
  owner: string;
  epoch: number;
}

export interface NewRun {
  run_id: string;
  thread_id: string;
  agent_id: string;
  kind: RunKind;
  creation: Record<string, unknown>;
  metadata: Record<string, unknown>;
  start_after: string;
  /** Who the run (and a hidden thread created with it) belongs to; default nobody. */
  principal?: string | null;
  /** See `RunRecord.trace_context`; default none. */
  trace_context?: string | null;
  /** See `RunRecord.face`; default none. */
  face?: string | null;
}

export interface InsertRunOptions {
  /**
   * When true, insertion fails with a `conflict` error if the thread already has a pending run.
   * The check and the insert are one atomic step (two replicas racing: exactly one wins).
   */
  reject_if_busy: boolean;
  /**
   * Creates the run's thread in the same transaction: hidden, `busy`, no metadata (the thread a
   * stateless run gets). `conflict` when a thread with that id exists; nothing is written then.
   */
  create_hidden_thread?: boolean;
  /**
   * Sets the (existing) thread's status to `busy` in the same transaction: a stateful run's
   * thread is busy from the moment the run exists.
   */
  mark_thread_busy?: boolean;
  /**
   * Claims the run in the same transaction when it can start at once: due (`start_after` no
   * later than `claim.now`) and alone on its thread (no other pending run). The run then comes
   * back owned by `claim.owner` under a new lease epoch, with `claim.segment` as its first,
   * open segment, as if `claimRun` had taken it and the engine had started it. Otherwise the
   * run is inserted unclaimed, for `claimRun` later; either way the insert itself stands.
   */
  claim?: InsertClaim;
  /**
   * The agent's queue limit, checked by the insert itself: `overloaded` (see errors.ts
   * `queueFull`) when the agent already has this many pending runs, and nothing is written.
   * The count and the insert are one step: one round trip instead of a count before it.
   */
  queue_limit?: number;
}

/** A replica's claim on a run it is about to insert (see `InsertRunOptions.claim`). */
export interface InsertClaim {
  owner: string;
  leaseMs: number;
  now: Date;
  segment: SegmentRecord;
}

/**
 * What a run's end stores besides its outcome, in the same transaction (see `finishRun`): the
 * frames not stored yet (its final frame among them) and the checkpoint of the segment.
 */
export interface FinishRunWrites {
  /** Appended as `appendFrames` does, under the same fence. */
  frames?: RunFrame[];
  /** Added to the run's thread as `addCheckpoint` does (not with `{ delete: true }`). */
  checkpoint?: NewCheckpoint;
}

export interface RunSearch {
  agent_id?: string;
  status?: RunStatus;
  metadata?: Record<string, unknown>;
  kind?: RunKind;
  thread_id?: string;
  principal?: PrincipalFilter;
  /** Only runs of these agents (a key restricted to some agents); `undefined` = any agent. */
  agent_ids?: readonly string[];
  /** Only runs with one of these statuses (besides `status`, when both are given). */
  statuses?: readonly RunStatus[];
  /** Only runs that have (true) or have not (false) started a segment. */
  started?: boolean;
  /** Only runs whose output's `errcode` is (`is: true`) or is not (`is: false`) `value`. */
  errcode?: { value: number; is: boolean };
  /** Only runs updated at or after this time. */
  updated_since?: string;
  /**
   * `"created"` (the default): newest created first. `"updated"`: most recently updated first
   * (`updated_at`, then `run_id`, descending), a stable order that `after` pages through.
   */
  order?: "created" | "updated";
  /** With `order: "updated"`: only the runs after this one in that order (a keyset page). */
  after?: { updated_at: string; run_id: string };
  limit: number;
  offset: number;
}

/** Filters of `countRuns` (the equality filters of `RunSearch`). */
export interface RunCountFilter {
  agent_id?: string;
  status?: RunStatus;
  kind?: RunKind;
  thread_id?: string;
}

/** See `Storage.insertRunHeld`. */
export interface HeldInsert {
  /** The run as its insert writes it. */
  run: RunRecord;
  /** Resolves with `run` once the insert is committed. */
  committed: Promise<RunRecord>;
  /** The thread as the insert creates it, for a run on a new thread (`insertRunOnNewThreadHeld`). */
  thread?: ThreadRecord;
}

/** What `finishRun` does to the run's thread: set its status, or delete it. */
export type ThreadOnFinish = { status: ThreadStatus } | { delete: true };

export type RunPatch = Partial<
  Pick<
    RunRecord,
    | "status"
    | "output"
    | "interrupts"
    | "resume"
    | "segments"
    | "start_after"
    | "checkpoint_before"
    | "owner"
    | "lease_expires_at"
    | "cancel_requested"
  >
>;

/** One SSE frame of a run, as stored. `data` is the serialized JSON payload (one line). */
export interface RunFrame {
  run_id: string;
  seq: number;
  /**
   * Which stream modes the frame belongs to: "values", "custom", "subagent" (a custom frame of
   * an event a subagent produced, streamed only with `stream_subgraphs`), or "final" (the end
   * of a segment, sent in every mode).
   */
  mode: "values" | "custom" | "subagent" | "final";
  data: string;
}
