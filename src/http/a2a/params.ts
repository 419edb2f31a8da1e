import {
  checkMessage,
  invalidParams,
  type ListTasksRequest,
  type SendMessageRequest,
  TASK_STATES,
  type TaskPushNotificationConfig,
  type TaskState,
} from "../../bridge/a2a/index.js";

/**
 * The parameters of each A2A operation, checked: a request that is not what the specification
 * says gets InvalidParams naming the field, before anything runs.
 */
type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function object(params: unknown, what: string): Rec {
  if (!isRecord(params)) throw invalidParams(`params of ${what} must be an object`);
  return params;
}

function id(params: Rec, key: string): string {
  const value = params[key];
  if (typeof value !== "string" || value === "" || value.length > 1000) {
    throw invalidParams(`${key} must be a non-empty string of at most 1000 characters`);
  }
  return value;
}

function optionalInt(params: Rec, key: string, min: number, max: number): number | undefined {
  let value = params[key];
  if (value === undefined || value === null) return undefined;
  // ProtoJSON may carry integers as strings; query strings always do.
  if (typeof value === "string" && /^-?\d{1,9}$/.test(value)) value = Number(value);
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw invalidParams(`${key} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function optionalBool(params: Rec, key: string): boolean | undefined {
  const value = params[key];
  if (value === undefined || value === null) return undefined;
  if (value === "true") return true;
  if (value === "false") return false;
  if (typeof value !== "boolean") throw invalidParams(`${key} must be a boolean`);
  return value;
}

/** ProtoJSON enums may come as their number: the name it stands for (`names[n - 1]`). */
export function enumName(value: unknown, names: readonly string[]): unknown {
  if (value === "" || value === 0 || value === "0") return undefined;
  if (typeof value === "number" && Number.isInteger(value)) return names[value - 1] ?? value;
  if (typeof value === "string" && /^[0-9]{1,3}$/.test(value))
    return names[Number(value) - 1] ?? value;
  return value;
}

export function sendParams(params: unknown): SendMessageRequest {
  const p = object(params, "SendMessage");
  const message = checkMessage(p.message, "message");
  const request: SendMessageRequest = { message };
  if (p.configuration !== undefined && p.configuration !== null) {
    const c = object(p.configuration, "SendMessage.configuration");
    request.configuration = {
      historyLength: optionalInt(c, "historyLength", 0, 1_000_000),
      returnImmediately: optionalBool(c, "returnImmediately"),
    };
    if (c.taskPushNotificationConfig !== undefined && c.taskPushNotificationConfig !== null) {
      // Checked with the task in hand (push.ts).
      request.configuration.taskPushNotificationConfig =
        c.taskPushNotificationConfig as TaskPushNotificationConfig;
    }
  }
  return request;
}

export function taskIdParams(params: unknown, what: string) {
  const p = object(params, what);
  return { id: id(p, "id"), historyLength: optionalInt(p, "historyLength", 0, 1_000_000) };
}

export const MAX_PAGE_SIZE = 100;

export function listParams(params: unknown): ListTasksRequest {
  const p = object(params ?? {}, "ListTasks");
  const request: ListTasksRequest = {};
  if (p.contextId !== undefined && p.contextId !== "") request.contextId = id(p, "contextId");
  const status = enumName(p.status, TASK_STATES);
  if (status !== undefined && status !== "TASK_STATE_UNSPECIFIED") {
    if (!TASK_STATES.includes(status as TaskState)) {
      throw invalidParams(`status must be one of ${TASK_STATES.join(", ")}`);
    }
    request.status = status as TaskState;
  }
  request.pageSize = optionalInt(p, "pageSize", 1, MAX_PAGE_SIZE);
  if (p.pageToken !== undefined && p.pageToken !== "") {
    // Its content is checked where it is read (list-tasks.ts).
    if (typeof p.pageToken !== "string") {
      throw invalidParams("pageToken must be a nextPageToken this server gave");
    }
    request.pageToken = p.pageToken;
  }
  request.historyLength = optionalInt(p, "historyLength", 0, 1_000_000);
  request.includeArtifacts = optionalBool(p, "includeArtifacts");
  if (p.statusTimestampAfter !== undefined && p.statusTimestampAfter !== null) {
    if (
      typeof p.statusTimestampAfter !== "string" ||
      Number.isNaN(Date.parse(p.statusTimestampAfter))
    ) {
      throw invalidParams("statusTimestampAfter must be an ISO 8601 timestamp");
    }
    request.statusTimestampAfter = p.statusTimestampAfter;
  }
  return request;
}
