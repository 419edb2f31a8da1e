import {
  checkMessage,
  fromProtoJson,
  invalidParams,
  type ListTasksRequest,
  type ProtoMessage,
  type SendMessageRequest,
  TASK_STATES,
  type TaskPushNotificationConfig,
  type TaskState,
} from "../../bridge/a2a/index.js";

/**
 * The parameters of each A2A operation, read as ProtoJSON (either field-name form, enums by name
 * or number, unknown fields ignored: bridge/a2a/protojson.ts) and checked: a request that is not
 * what the specification says gets InvalidParams naming the field, before anything runs.
 */
type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The params as the message `type`, or InvalidParams when they are not an object. */
export function protoParams(params: unknown, type: ProtoMessage, what: string): Rec {
  if (!isRecord(params)) throw invalidParams(`params of ${what} must be an object`);
  return fromProtoJson(type, params) as Rec;
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

export function sendParams(params: unknown): SendMessageRequest {
  const p = protoParams(params, "SendMessageRequest", "SendMessage");
  const message = checkMessage(p.message, "message");
  const request: SendMessageRequest = { message };
  if (p.configuration !== undefined) {
    if (!isRecord(p.configuration)) {
      throw invalidParams("params of SendMessage.configuration must be an object");
    }
    const c = p.configuration;
    request.configuration = {
      historyLength: optionalInt(c, "historyLength", 0, 1_000_000),
      returnImmediately: optionalBool(c, "returnImmediately"),
    };
    if (c.taskPushNotificationConfig !== undefined) {
      // Checked with the task in hand (push.ts).
      request.configuration.taskPushNotificationConfig =
        c.taskPushNotificationConfig as TaskPushNotificationConfig;
    }
  }
  return request;
}

/** An operation on one task (`id`), as GetTask, CancelTask and SubscribeToTask take it. */
export function taskIdParams(params: unknown, what: string, type: ProtoMessage) {
  const p = protoParams(params, type, what);
  return { id: id(p, "id"), historyLength: optionalInt(p, "historyLength", 0, 1_000_000) };
}

export const MAX_PAGE_SIZE = 100;

export function listParams(params: unknown): ListTasksRequest {
  const p = protoParams(params ?? {}, "ListTasksRequest", "ListTasks");
  const request: ListTasksRequest = {};
  if (p.contextId !== undefined && p.contextId !== "") request.contextId = id(p, "contextId");
  // An unset or UNRECOGNIZED status (protojson.ts) is no filter.
  if (p.status !== undefined) {
    if (!TASK_STATES.includes(p.status as TaskState)) {
      throw invalidParams(`status must be one of ${TASK_STATES.join(", ")}`);
    }
    request.status = p.status as TaskState;
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
  if (p.statusTimestampAfter !== undefined) {
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
