import type { Principal } from "../../auth/principal.js";
import { A2aError, type StreamResponse } from "../../bridge/a2a/index.js";
import type { A2aFace } from "./face.js";

/** One JSON-RPC method: a unary call or a stream. */
export interface Call {
  unary?(face: A2aFace, who: Principal, params: unknown, signal: AbortSignal): Promise<unknown>;
  stream?(
    face: A2aFace,
    who: Principal,
    params: unknown,
    signal: AbortSignal,
  ): Promise<AsyncGenerator<StreamResponse>>;
}

/** A dialect's methods and how its streams carry an event. */
export interface A2aOperations {
  methods: Record<string, Call>;
  streamResult(event: StreamResponse): unknown;
}

const noPush: Call = {
  unary: async () => {
    throw new A2aError(
      "PushNotificationNotSupported",
      "this agent does not send push notifications (its card says pushNotifications: false)",
    );
  },
};

/** A2A 1.0's methods (specification §9). */
export const V1_OPERATIONS: A2aOperations = {
  methods: {
    SendMessage: {
      unary: async (face, who, params, signal) => ({
        task: await face.sendMessage(who, params, signal),
      }),
    },
    SendStreamingMessage: {
      stream: (face, who, params, signal) => face.streamMessage(who, params, signal),
    },
    GetTask: { unary: (face, who, params) => face.getTask(who, params) },
    ListTasks: { unary: (face, who, params) => face.listTasks(who, params) },
    CancelTask: { unary: (face, who, params) => face.cancelTask(who, params) },
    SubscribeToTask: { stream: (face, who, params, signal) => face.subscribe(who, params, signal) },
    CreateTaskPushNotificationConfig: noPush,
    GetTaskPushNotificationConfig: noPush,
    ListTaskPushNotificationConfigs: noPush,
    DeleteTaskPushNotificationConfig: noPush,
    GetExtendedAgentCard: {
      unary: async () => {
        throw new A2aError(
          "UnsupportedOperation",
          "this agent has no extended card (its card says extendedAgentCard: false)",
        );
      },
    },
  },
  streamResult: (event) => event,
};
