/**
 * Runs as MCP tasks (2025-11-25, experimental Tasks): a task is a run, its id the run id, its
 * status the run's. Pure mapping; the face reads and writes the runs.
 */
import { ERRCODE } from "../acp/outcomes.js";
import { isObject } from "../acp/values.js";

export type McpTaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** An MCP `Task`. */
export interface McpTask {
  taskId: string;
  status: McpTaskStatus;
  statusMessage?: string;
  createdAt: string;
  lastUpdatedAt: string;
  /**
   * How long the task is kept after it is made: the ttl granted to its client's ask, or what
   * retention gives its run; null: until retention removes its run.
   */
  ttl: number | null;
  pollInterval?: number;
}

/** What of a stored run its task is made of. */
export interface TaskRunRecord {
  run_id: string;
  kind: string;
  status: string;
  created_at: string;
  updated_at: string;
  output: unknown;
  interrupts: readonly Record<string, unknown>[];
}

/** How often a client is asked to poll a working task, in milliseconds. */
export const POLL_INTERVAL_MS = 1000;

/** A run's status as its task's. */
export function taskStatusOf(run: Pick<TaskRunRecord, "status" | "output">): McpTaskStatus {
  switch (run.status) {
    case "pending":
      return "working";
    case "interrupted":
      return "input_required";
    case "success":
      return "completed";
    default: {
      const output = isObject(run.output) ? run.output : {};
      return output.errcode === ERRCODE.cancelled ? "cancelled" : "failed";
    }
  }
}

/** Whether a task is in a terminal status (no more changes). */
export const isTerminalStatus = (status: McpTaskStatus) =>
  status === "completed" || status === "failed" || status === "cancelled";

/** A run as its task, with `ttl` as retention keeps it (null: kept until removed). */
export function taskOf(run: TaskRunRecord, ttl: number | null = null): McpTask {
  const status = taskStatusOf(run);
  const task: McpTask = {
    taskId: run.run_id,
    status,
    createdAt: run.created_at,
    lastUpdatedAt: run.updated_at,
    ttl,
  };
  if (!isTerminalStatus(status)) task.pollInterval = POLL_INTERVAL_MS;
  const message = statusMessageOf(run, status);
  if (message) task.statusMessage = message;
  return task;
}

function statusMessageOf(run: TaskRunRecord, status: McpTaskStatus): string | undefined {
  if (status === "input_required") {
    const asks = run.interrupts
      .map((interrupt) => interrupt.message ?? interrupt.reason)
      .filter((text): text is string => typeof text === "string" && text !== "");
    return asks.length > 0 ? `The agent asks: ${asks.join("; ")}` : "The agent waits for input.";
  }
  if (status === "failed" || status === "cancelled") {
    const output = isObject(run.output) ? run.output : {};
    return typeof output.description === "string" ? output.description : undefined;
  }
  return undefined;
}

/**
 * How long a task is kept from its creation, in milliseconds (MCP's `ttl`), as the retention
 * settings keep its run: a finished stateless run is deleted `finishedStatelessRunsSeconds`
 * after its end. Null (kept until removed otherwise) for a run on a thread, one not finished
 * yet, or when finished runs are kept.
 */
export function ttlOf(
  run: Pick<TaskRunRecord, "kind" | "status" | "created_at" | "updated_at">,
  finishedStatelessRunsSeconds: number | null,
): number | null {
  if (run.kind !== "stateless" || finishedStatelessRunsSeconds === null) return null;
  if (run.status === "pending" || run.status === "interrupted") return null;
  const ran = Math.max(0, Date.parse(run.updated_at) - Date.parse(run.created_at));
  return ran + finishedStatelessRunsSeconds * 1000;
}

/** The longest ttl a task is granted (100 years): beyond it, a date is of no use. */
export const MAX_TASK_TTL_MS = 100 * 365 * 86_400_000;

/**
 * The ttl granted to a task whose client asks for `askedMs` in `params.task.ttl`, for a
 * stateless run: what was asked, but no longer than retention keeps a stateless run
 * (`finishedStatelessRunsSeconds` after its end, so at least that long after its creation), nor
 * than MAX_TASK_TTL_MS. Undefined when none was asked (the task's ttl is then `ttlOf`'s).
 * A negative or fractional ask is the client's mistake: whole milliseconds from zero.
 */
export function grantedTtl(
  askedMs: number | undefined,
  finishedStatelessRunsSeconds: number | null,
): number | undefined {
  if (askedMs === undefined || !Number.isFinite(askedMs)) return undefined;
  const retained =
    finishedStatelessRunsSeconds === null
      ? MAX_TASK_TTL_MS
      : Math.floor(finishedStatelessRunsSeconds * 1000);
  return Math.min(Math.max(0, Math.floor(askedMs)), retained, MAX_TASK_TTL_MS);
}

/** The `_meta` key MCP relates a message to its task with. */
export const RELATED_TASK_META_KEY = "io.modelcontextprotocol/related-task";

/** tasks/list's cursor: the offset of the next page, opaque to the client. */
export const encodeCursor = (offset: number) => Buffer.from(`o:${offset}`).toString("base64url");

/** A cursor this server gave, as its offset; undefined for anything else. */
export function decodeCursor(cursor: string): number | undefined {
  if (!/^[A-Za-z0-9_-]{1,40}$/.test(cursor)) return undefined;
  const match = /^o:(\d{1,9})$/.exec(Buffer.from(cursor, "base64url").toString("utf8"));
  return match ? Number(match[1]) : undefined;
}
