/**
 * Request objects read as the proto3 JSON mapping (ProtoJSON) says a parser reads them, so that
 * clients generated from `a2a.proto` in any language are understood:
 *
 * - a field may be named by its lowerCamelCase JSON name (`contextId`) or its proto name
 *   (`context_id`); when both are sent, the JSON name wins;
 * - an enum may be its name (`TASK_STATE_WORKING`) or its number (`2`, or `"2"` in a query);
 *   `UNRECOGNIZED` (what generated clients send for an unset value) and the zero value mean unset;
 * - `null` means unset; unknown fields are ignored (dropped here);
 * - `Struct` and `Value` fields (`metadata`, a data part's `data`) are the client's own JSON and
 *   are kept exactly as sent, their keys untouched.
 *
 * What comes out uses the JSON names only; the operations check the values themselves
 * (`InvalidParams` naming the field). Answers are always written with the JSON names.
 */

type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A field's kind: a scalar, a free JSON value, an enum, or a message (by name). */
type FieldKind =
  | "scalar"
  | "json"
  | { enum: readonly string[] }
  | { message: MessageName }
  | { repeated: FieldKind };

type MessageName =
  | "Part"
  | "Message"
  | "AuthenticationInfo"
  | "TaskPushNotificationConfig"
  | "SendMessageConfiguration"
  | "SendMessageRequest"
  | "GetTaskRequest"
  | "ListTasksRequest"
  | "CancelTaskRequest"
  | "SubscribeToTaskRequest"
  | "GetTaskPushNotificationConfigRequest"
  | "DeleteTaskPushNotificationConfigRequest"
  | "ListTaskPushNotificationConfigsRequest"
  | "GetExtendedAgentCardRequest";

/** An enum's names in number order (index = number). */
const ROLE = ["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"] as const;
export const TASK_STATE_ENUM = [
  "TASK_STATE_UNSPECIFIED",
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_AUTH_REQUIRED",
] as const;

const S = "scalar" as const;
const J = "json" as const;
const msg = (message: MessageName): FieldKind => ({ message });
const list = (of: FieldKind): FieldKind => ({ repeated: of });

/** The request messages of `lf.a2a.v1` (specification/a2a.proto), field by JSON name. */
const MESSAGES: Record<MessageName, Record<string, FieldKind>> = {
  Part: { text: S, raw: S, url: S, data: J, metadata: J, filename: S, mediaType: S },
  Message: {
    messageId: S,
    contextId: S,
    taskId: S,
    role: { enum: ROLE },
    parts: list(msg("Part")),
    metadata: J,
    extensions: list(S),
    referenceTaskIds: list(S),
  },
  AuthenticationInfo: { scheme: S, credentials: S },
  TaskPushNotificationConfig: {
    tenant: S,
    id: S,
    taskId: S,
    url: S,
    token: S,
    authentication: msg("AuthenticationInfo"),
  },
  SendMessageConfiguration: {
    acceptedOutputModes: list(S),
    taskPushNotificationConfig: msg("TaskPushNotificationConfig"),
    historyLength: S,
    returnImmediately: S,
  },
  SendMessageRequest: {
    tenant: S,
    message: msg("Message"),
    configuration: msg("SendMessageConfiguration"),
    metadata: J,
  },
  GetTaskRequest: { tenant: S, id: S, historyLength: S },
  ListTasksRequest: {
    tenant: S,
    contextId: S,
    status: { enum: TASK_STATE_ENUM },
    pageSize: S,
    pageToken: S,
    historyLength: S,
    statusTimestampAfter: S,
    includeArtifacts: S,
  },
  CancelTaskRequest: { tenant: S, id: S, metadata: J },
  SubscribeToTaskRequest: { tenant: S, id: S },
  GetTaskPushNotificationConfigRequest: { tenant: S, taskId: S, id: S },
  DeleteTaskPushNotificationConfigRequest: { tenant: S, taskId: S, id: S },
  ListTaskPushNotificationConfigsRequest: { tenant: S, taskId: S, pageSize: S, pageToken: S },
  GetExtendedAgentCardRequest: { tenant: S },
};

export type ProtoMessage = MessageName;

/** `contextId` → `context_id`. */
const protoName = (jsonName: string) => jsonName.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

/** Per message: every accepted key (JSON name and proto name) → the field's JSON name. */
const KEYS = new Map<MessageName, Map<string, string>>(
  (Object.keys(MESSAGES) as MessageName[]).map((name) => {
    const keys = new Map<string, string>();
    for (const field of Object.keys(MESSAGES[name])) {
      keys.set(field, field);
      keys.set(protoName(field), field);
    }
    return [name, keys];
  }),
);

/**
 * `value` read as the message `type`: fields under their JSON names, enums by name, unknown
 * fields and nulls left out. Anything that is not an object is returned as it is (the
 * operation's check names the fault).
 */
export function fromProtoJson(type: ProtoMessage, value: unknown): unknown {
  if (!isRecord(value)) return value;
  const fields = MESSAGES[type];
  const keys = KEYS.get(type)!;
  const out: Rec = {};
  for (const [key, raw] of Object.entries(value)) {
    const field = keys.get(key);
    if (field === undefined || raw === null || raw === undefined) continue;
    // The JSON name wins over the proto name when a client sends both.
    if (key !== field && Object.hasOwn(value, field) && value[field] !== null) continue;
    const read = readField(fields[field]!, raw);
    // Assigned: `field` is one of the message's own field names (MESSAGES), never `__proto__`.
    if (read !== undefined) out[field] = read;
  }
  return out;
}

function readField(kind: FieldKind, value: unknown): unknown {
  if (kind === "scalar" || kind === "json") return value;
  if ("repeated" in kind) {
    return Array.isArray(value) ? value.map((item) => readField(kind.repeated, item)) : value;
  }
  if ("enum" in kind) return enumName(value, kind.enum);
  return fromProtoJson(kind.message, value);
}

/**
 * An enum value by name: its number (or the number as a string, as a query carries it) stands
 * for its name; the zero value and `UNRECOGNIZED` (-1) mean unset (undefined). Anything else is
 * returned as it is, for the check to refuse.
 */
export function enumName(value: unknown, names: readonly string[]): unknown {
  if (value === "" || value === "UNRECOGNIZED" || value === names[0]) return undefined;
  let number: number | undefined;
  if (typeof value === "number" && Number.isInteger(value)) number = value;
  else if (typeof value === "string" && /^-?[0-9]{1,3}$/.test(value)) number = Number(value);
  if (number === undefined) return value;
  if (number === 0 || number === -1) return undefined;
  return names[number] ?? value;
}
