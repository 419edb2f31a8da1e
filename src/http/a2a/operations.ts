import type { Principal } from "../../auth/principal.js";
import {
  A2aError,
  messageTo03,
  type StreamResponse,
  sendParamsFrom03,
  streamEventTo03,
  taskTo03,
} from "../../bridge/a2a/index.js";
import { type A2aFace, type A2aStream, pushNotSupported } from "./face.js";
import type { ClientGone } from "./gone.js";

/**
 * The extended cards for the request's caller (see card.ts); null when the server does not
 * authenticate, so there is no extended card.
 */
export type ExtendedCards = { v1(): unknown; v03(): unknown } | null;

/** GetExtendedAgentCard without authentication: the card says there is none. */
export const noExtendedCard = () =>
  new A2aError(
    "UnsupportedOperation",
    "this agent has no extended card (its card says extendedAgentCard: false): the server does not authenticate callers",
  );

/**
 * One A2A operation, whatever the binding: a unary call or a stream. `params` is the
 * operation's request as ProtoJSON (either field-name form); the result is ProtoJSON in
 * lowerCamelCase (a stream: one StreamResponse per event). Errors are thrown as A2aError (its
 * `mapping` gives the code of each binding: JSON-RPC code, HTTP status, google.rpc.Code name).
 * A binding resolves the agent's face and the caller first (agents.ts), then calls
 * `V1_OPERATIONS.methods[name]` (or `operationsFor(method)` for a method name of either
 * dialect), as the JSON-RPC binding does (jsonrpc.ts).
 */
export interface Call {
  unary?(
    face: A2aFace,
    who: Principal,
    params: unknown,
    signal: ClientGone,
    cards: ExtendedCards,
  ): Promise<unknown>;
  stream?(face: A2aFace, who: Principal, params: unknown, signal: ClientGone): Promise<A2aStream>;
}

/** A dialect's methods and how its streams carry an event. */
export interface A2aOperations {
  methods: Record<string, Call>;
  streamResult(event: StreamResponse): unknown;
}

const noPush: Call = {
  unary: async () => {
    throw pushNotSupported();
  },
};

/** A push config operation, when the face sends push notifications. */
const push = (operation: "create" | "get" | "list" | "delete"): Call => ({
  unary: async (face, who, params) => {
    if (!face.push) throw pushNotSupported();
    return face.push[operation](face.tasks, who, params);
  },
});

/** A2A 1.0's methods (specification §9). */
export const V1_OPERATIONS: A2aOperations = {
  methods: {
    SendMessage: { unary: (face, who, params, signal) => face.sendMessage(who, params, signal) },
    SendStreamingMessage: {
      stream: (face, who, params, signal) => face.streamMessage(who, params, signal),
    },
    GetTask: { unary: (face, who, params) => face.getTask(who, params) },
    ListTasks: { unary: (face, who, params) => face.listTasks(who, params) },
    CancelTask: { unary: (face, who, params) => face.cancelTask(who, params) },
    SubscribeToTask: { stream: (face, who, params, signal) => face.subscribe(who, params, signal) },
    CreateTaskPushNotificationConfig: push("create"),
    GetTaskPushNotificationConfig: push("get"),
    ListTaskPushNotificationConfigs: push("list"),
    DeleteTaskPushNotificationConfig: push("delete"),
    GetExtendedAgentCard: {
      unary: async (_face, _who, _params, _signal, cards) => {
        if (!cards) throw noExtendedCard();
        return cards.v1();
      },
    },
  },
  streamResult: (event) => event,
};

const v1 = V1_OPERATIONS.methods;

/**
 * A2A 0.3's methods, for its clients: the same operations, their params and results in 0.3's
 * shapes (see bridge/a2a/v03.ts). `message/send` answers the Task (or Message) itself.
 */
export const V03_OPERATIONS: A2aOperations = {
  methods: {
    "message/send": {
      unary: async (face, who, params, signal) => {
        const answer = await face.sendMessage(who, sendParamsFrom03(params), signal);
        return "task" in answer ? taskTo03(answer.task) : messageTo03(answer.message);
      },
    },
    "message/stream": {
      stream: (face, who, params, signal) =>
        face.streamMessage(who, sendParamsFrom03(params), signal),
    },
    "tasks/get": { unary: async (face, who, params) => taskTo03(await face.getTask(who, params)) },
    "tasks/cancel": {
      unary: async (face, who, params) => taskTo03(await face.cancelTask(who, params)),
    },
    "tasks/resubscribe": v1.SubscribeToTask!,
    "tasks/pushNotificationConfig/set": noPush,
    "tasks/pushNotificationConfig/get": noPush,
    "tasks/pushNotificationConfig/list": noPush,
    "tasks/pushNotificationConfig/delete": noPush,
    "agent/getAuthenticatedExtendedCard": {
      unary: async (_face, _who, _params, _signal, cards) => {
        if (!cards) throw noExtendedCard();
        return cards.v03();
      },
    },
  },
  streamResult: streamEventTo03,
};

/** The dialect a JSON-RPC method belongs to (its name says which); undefined for none. */
export function operationsFor(method: string): A2aOperations | undefined {
  if (Object.hasOwn(V1_OPERATIONS.methods, method)) return V1_OPERATIONS;
  if (Object.hasOwn(V03_OPERATIONS.methods, method)) return V03_OPERATIONS;
  return undefined;
}
