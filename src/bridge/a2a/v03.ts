/**
 * A2A 0.3 ⇄ 1.0, for clients of that version (a request naming no A2A-Version, or 0.3): 0.3's
 * JSON-RPC methods take and give 0.3 shapes — `kind` discriminators (`message`, `task`,
 * `status-update`, `artifact-update`; parts `text`, `data`, `file`), lower-case roles
 * (`user`, `agent`) and states (`input-required`), `configuration.blocking`, a status update's
 * `final` — and are served by the same 1.0 operations through these conversions.
 */
import { invalidParams } from "./errors.js";
import type {
  Artifact,
  Message,
  Part,
  StreamResponse,
  Task,
  TaskState,
  TaskStatus,
} from "./types.js";
import { FINAL_STATES, PAUSED_STATES } from "./types.js";

type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** 0.3's method names, and the 1.0 method each one is. */
export const V03_METHODS: Readonly<Record<string, string>> = {
  "message/send": "SendMessage",
  "message/stream": "SendStreamingMessage",
  "tasks/get": "GetTask",
  "tasks/cancel": "CancelTask",
  "tasks/resubscribe": "SubscribeToTask",
  "tasks/pushNotificationConfig/set": "CreateTaskPushNotificationConfig",
  "tasks/pushNotificationConfig/get": "GetTaskPushNotificationConfig",
  "tasks/pushNotificationConfig/list": "ListTaskPushNotificationConfigs",
  "tasks/pushNotificationConfig/delete": "DeleteTaskPushNotificationConfig",
  "agent/getAuthenticatedExtendedCard": "GetExtendedAgentCard",
};

/** `TASK_STATE_INPUT_REQUIRED` → `input-required`. */
export function v03State(state: TaskState): string {
  return state.slice("TASK_STATE_".length).toLowerCase().replaceAll("_", "-");
}

// --- 0.3 in ---------------------------------------------------------------------------------

function partFrom03(part: unknown, at: string): Part {
  if (!isRecord(part)) throw invalidParams(`${at} must be an object`);
  const metadata = isRecord(part.metadata) ? { metadata: part.metadata } : {};
  switch (part.kind) {
    case "text":
      return { text: part.text as string, ...metadata };
    case "data":
      return { data: part.data, ...metadata };
    case "file": {
      const file = isRecord(part.file) ? part.file : {};
      const about = {
        ...(typeof file.mimeType === "string" && file.mimeType ? { mediaType: file.mimeType } : {}),
        ...(typeof file.name === "string" && file.name ? { filename: file.name } : {}),
        ...metadata,
      };
      return typeof file.uri === "string"
        ? { url: file.uri, ...about }
        : { raw: typeof file.bytes === "string" ? file.bytes : "", ...about };
    }
    default:
      throw invalidParams(`${at}.kind must be text, data or file`);
  }
}

/** A 0.3 message as the 1.0 message it is. */
export function messageFrom03(value: unknown, at = "message"): unknown {
  if (!isRecord(value)) throw invalidParams(`${at} must be an object`);
  const role =
    value.role === "user" ? "ROLE_USER" : value.role === "agent" ? "ROLE_AGENT" : value.role;
  const parts = Array.isArray(value.parts)
    ? value.parts.map((part, index) => partFrom03(part, `${at}.parts[${index}]`))
    : value.parts;
  const { kind: _kind, ...rest } = value;
  return { ...rest, role, parts };
}

/** 0.3 `message/send` params (`MessageSendParams`) as 1.0 SendMessageRequest params. */
export function sendParamsFrom03(params: unknown): unknown {
  if (!isRecord(params)) return params;
  const out: Rec = { message: messageFrom03(params.message) };
  if (isRecord(params.configuration)) {
    const c = params.configuration;
    out.configuration = {
      ...(c.historyLength !== undefined ? { historyLength: c.historyLength } : {}),
      ...(c.blocking === false ? { returnImmediately: true } : {}),
      ...(c.pushNotificationConfig !== undefined
        ? { taskPushNotificationConfig: c.pushNotificationConfig }
        : {}),
    };
  }
  return out;
}

// --- 0.3 out --------------------------------------------------------------------------------

function partTo03(part: Part): Rec {
  const metadata = part.metadata ? { metadata: part.metadata } : {};
  if (part.text !== undefined) return { kind: "text", text: part.text, ...metadata };
  if (part.data !== undefined) {
    // 0.3's data part holds an object; any other value is wrapped.
    const data = isRecord(part.data) ? part.data : { value: part.data };
    return { kind: "data", data, ...metadata };
  }
  const file = part.url !== undefined ? { uri: part.url } : { bytes: part.raw };
  return {
    kind: "file",
    file: {
      ...file,
      ...(part.mediaType ? { mimeType: part.mediaType } : {}),
      ...(part.filename ? { name: part.filename } : {}),
    },
    ...metadata,
  };
}

export function messageTo03(message: Message): Rec {
  return {
    kind: "message",
    messageId: message.messageId,
    role: message.role === "ROLE_USER" ? "user" : "agent",
    parts: message.parts.map(partTo03),
    ...(message.contextId ? { contextId: message.contextId } : {}),
    ...(message.taskId ? { taskId: message.taskId } : {}),
    ...(message.metadata ? { metadata: message.metadata } : {}),
  };
}

function statusTo03(status: TaskStatus): Rec {
  return {
    state: v03State(status.state),
    ...(status.message ? { message: messageTo03(status.message) } : {}),
    ...(status.timestamp ? { timestamp: status.timestamp } : {}),
  };
}

function artifactTo03(artifact: Artifact): Rec {
  return { ...artifact, parts: artifact.parts.map(partTo03) };
}

export function taskTo03(task: Task): Rec {
  return {
    kind: "task",
    id: task.id,
    contextId: task.contextId,
    status: statusTo03(task.status),
    ...(task.artifacts ? { artifacts: task.artifacts.map(artifactTo03) } : {}),
    ...(task.history ? { history: task.history.map(messageTo03) } : {}),
    ...(task.metadata ? { metadata: task.metadata } : {}),
  };
}

/** A 1.0 stream event as 0.3 sends it: the object itself, with its `kind`. */
export function streamEventTo03(event: StreamResponse): Rec {
  if ("task" in event) return taskTo03(event.task);
  if ("message" in event) return messageTo03(event.message);
  if ("statusUpdate" in event) {
    const update = event.statusUpdate;
    const state = update.status.state;
    return {
      kind: "status-update",
      taskId: update.taskId,
      contextId: update.contextId,
      status: statusTo03(update.status),
      final: FINAL_STATES.has(state) || PAUSED_STATES.has(state),
    };
  }
  const update = event.artifactUpdate;
  return {
    kind: "artifact-update",
    taskId: update.taskId,
    contextId: update.contextId,
    artifact: artifactTo03(update.artifact),
    ...(update.append !== undefined ? { append: update.append } : {}),
    ...(update.lastChunk !== undefined ? { lastChunk: update.lastChunk } : {}),
  };
}
