import {
  AgentCard,
  CancelTaskRequest,
  DeleteTaskPushNotificationConfigRequest,
  GetExtendedAgentCardRequest,
  GetTaskPushNotificationConfigRequest,
  GetTaskRequest,
  ListTaskPushNotificationConfigsRequest,
  ListTaskPushNotificationConfigsResponse,
  ListTasksRequest,
  ListTasksResponse,
  SendMessageRequest,
  SendMessageResponse,
  StreamResponse,
  SubscribeToTaskRequest,
  Task,
  TaskPushNotificationConfig,
} from "@a2a-js/sdk";
import { A2AService } from "@a2a-js/sdk/server/grpc";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";

/**
 * The messages of `lf.a2a.v1.A2AService` as the official SDK generated them from a2a.proto:
 * its service definition reads and writes the protobuf wire format into its own objects, and
 * its message types convert those objects to and from ProtoJSON, which the operations layer
 * takes and answers (operations.ts). Nothing of the proto is written by hand here.
 */
interface JsonCodec {
  fromJSON(object: never): unknown;
  toJSON(message: never): unknown;
}

/** The empty answer of DeleteTaskPushNotificationConfig (`google.protobuf.Empty`). */
const EMPTY: JsonCodec = { fromJSON: () => ({}), toJSON: () => ({}) };

export interface GrpcMethod {
  /** The method's name in the service definition of the SDK (lowerCamelCase). */
  key: keyof typeof A2AService;
  request: JsonCodec;
  response: JsonCodec;
}

/** Every method of the service, by its name in a2a.proto (and in V1_OPERATIONS). */
export const GRPC_METHODS = {
  SendMessage: { key: "sendMessage", request: SendMessageRequest, response: SendMessageResponse },
  SendStreamingMessage: {
    key: "sendStreamingMessage",
    request: SendMessageRequest,
    response: StreamResponse,
  },
  GetTask: { key: "getTask", request: GetTaskRequest, response: Task },
  ListTasks: { key: "listTasks", request: ListTasksRequest, response: ListTasksResponse },
  CancelTask: { key: "cancelTask", request: CancelTaskRequest, response: Task },
  SubscribeToTask: {
    key: "subscribeToTask",
    request: SubscribeToTaskRequest,
    response: StreamResponse,
  },
  CreateTaskPushNotificationConfig: {
    key: "createTaskPushNotificationConfig",
    request: TaskPushNotificationConfig,
    response: TaskPushNotificationConfig,
  },
  GetTaskPushNotificationConfig: {
    key: "getTaskPushNotificationConfig",
    request: GetTaskPushNotificationConfigRequest,
    response: TaskPushNotificationConfig,
  },
  ListTaskPushNotificationConfigs: {
    key: "listTaskPushNotificationConfigs",
    request: ListTaskPushNotificationConfigsRequest,
    response: ListTaskPushNotificationConfigsResponse,
  },
  DeleteTaskPushNotificationConfig: {
    key: "deleteTaskPushNotificationConfig",
    request: DeleteTaskPushNotificationConfigRequest,
    response: EMPTY,
  },
  GetExtendedAgentCard: {
    key: "getExtendedAgentCard",
    request: GetExtendedAgentCardRequest,
    response: AgentCard,
  },
} as const satisfies Record<string, GrpcMethod>;

export type GrpcMethodName = keyof typeof GRPC_METHODS;

/**
 * A request as it came off the wire: the SDK's object of the request message, or why its
 * bytes are not one. gRPC's own answer to bytes that do not parse is INTERNAL; A2A's is
 * INVALID_ARGUMENT, so the handler gets to answer it.
 */
export type Received = { value: Record<string, unknown> } | { malformed: string };

type Definition = MethodDefinition<unknown, unknown>;

/**
 * The SDK's service definition with every request deserializer made total (see `Received`).
 * Paths, streaming and the response serializers are the SDK's own.
 */
export function serviceDefinition(): ServiceDefinition {
  const definition: Record<string, Definition> = {};
  for (const method of Object.values(GRPC_METHODS)) {
    const generated = A2AService[method.key] as unknown as Definition;
    definition[method.key] = {
      ...generated,
      requestDeserialize: (bytes: Buffer): Received => {
        try {
          return { value: generated.requestDeserialize(bytes) as Record<string, unknown> };
        } catch (err) {
          return { malformed: (err as Error).message };
        }
      },
    };
  }
  return definition as ServiceDefinition;
}

/** A received request as ProtoJSON, the form the operations take. */
export const requestJson = (method: GrpcMethod, value: Record<string, unknown>): unknown =>
  method.request.toJSON(value as never);

/** An operation's ProtoJSON answer as the SDK's object, which the definition serializes. */
export const responseMessage = (method: GrpcMethod, json: unknown): unknown =>
  method.response.fromJSON(json as never);
