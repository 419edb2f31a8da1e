import type { Principal } from "../../auth/principal.js";
import {
  invalidParams,
  type ListTasksRequest,
  type ListTasksResponse,
  type Task,
  type TaskState,
} from "../../bridge/a2a/index.js";
import { ERRCODE } from "../../bridge/acp/outcomes.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunSearch } from "../../storage/types.js";
import { aclThreadId } from "../agui-runs/agui-runs.js";
import { type TaskHandle, taskRunOf } from "./tasks.js";

const DEFAULT_PAGE_SIZE = 50;

const cancelled = ERRCODE.cancelled;

/**
 * Each task state as a filter on runs (see bridge/a2a/task.ts for the mapping). A state no run
 * takes (auth required, rejected) has none: no task is in it.
 */
const STATE_FILTERS: Partial<Record<TaskState, Partial<RunSearch>>> = {
  TASK_STATE_SUBMITTED: { status: "pending", started: false },
  TASK_STATE_WORKING: { status: "pending", started: true },
  TASK_STATE_INPUT_REQUIRED: { status: "interrupted" },
  TASK_STATE_COMPLETED: { status: "success" },
  TASK_STATE_CANCELED: { status: "error", errcode: { value: cancelled, is: true } },
  TASK_STATE_FAILED: { statuses: ["error", "timeout"], errcode: { value: cancelled, is: false } },
};

/** Where a page ends: the last task's status time and id (an opaque token to the client). */
interface PagePosition {
  updated_at: string;
  run_id: string;
}

const encodeToken = (at: PagePosition) =>
  Buffer.from(JSON.stringify([at.updated_at, at.run_id])).toString("base64url");

function decodeToken(token: string): PagePosition {
  const refuse = () => invalidParams("pageToken must be a nextPageToken this server gave");
  if (!/^[A-Za-z0-9_-]{1,2000}$/.test(token)) throw refuse();
  let decoded: unknown;
  try {
    decoded = JSON.parse(Buffer.from(token, "base64url").toString("utf8"));
  } catch {
    throw refuse();
  }
  if (
    !Array.isArray(decoded) ||
    decoded.length !== 2 ||
    typeof decoded[0] !== "string" ||
    typeof decoded[1] !== "string" ||
    Number.isNaN(Date.parse(decoded[0]))
  ) {
    throw refuse();
  }
  return { updated_at: decoded[0], run_id: decoded[1] };
}

/**
 * ListTasks: the caller's tasks of an agent, the most recently updated first (a task's status
 * timestamp is its run's last update), filtered in the query by context, state and
 * `statusTimestampAfter`. The page token is the position of the page's last task in that
 * order, so a page never repeats a task of an earlier one; `totalSize` counts every match.
 */
export async function listTasks(
  runs: RunService,
  agentId: string,
  who: Principal,
  request: ListTasksRequest,
  show: (handle: TaskHandle, request: ListTasksRequest) => Promise<Task>,
): Promise<ListTasksResponse> {
  const pageSize = request.pageSize ?? DEFAULT_PAGE_SIZE;
  const after = request.pageToken ? decodeToken(request.pageToken) : undefined;
  const state = request.status ? STATE_FILTERS[request.status] : {};
  if (state === undefined) return { tasks: [], nextPageToken: "", pageSize, totalSize: 0 };
  const search: Partial<RunSearch> = {
    agent_id: agentId,
    kind: "stateful",
    ...(request.contextId ? { thread_id: aclThreadId(request.contextId, who.id) } : {}),
    ...state,
    ...(request.statusTimestampAfter ? { updated_since: request.statusTimestampAfter } : {}),
    order: "updated",
  };
  const [page, totalSize] = await Promise.all([
    runs.search(who, { ...search, ...(after ? { after } : {}), limit: pageSize + 1, offset: 0 }),
    runs.count(who, search),
  ]);
  const shown = page.slice(0, pageSize);
  const tasks: Task[] = [];
  for (const run of shown) tasks.push(await show({ run, view: taskRunOf(run) }, request));
  const last = shown.at(-1);
  return {
    tasks,
    nextPageToken: page.length > pageSize && last ? encodeToken(last) : "",
    pageSize,
    totalSize,
  };
}
