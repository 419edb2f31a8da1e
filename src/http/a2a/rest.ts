import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { LazyAbortController } from "../../engine/run-engine/lazy-abort.js";
import { asA2aError, retryAfterOverload } from "./errors.js";
import { type A2aFace, type A2aStream, isWhole, pushNotSupported } from "./face.js";
import { disconnectWatch } from "./gone.js";
import { type ExtendedCards, noExtendedCard } from "./operations.js";
import { openA2aSse, sendWholeSse, sseEvent } from "./sse.js";
import type { Unrouted } from "./unrouted.js";

export interface RestBinding {
  /** The face of the agent the path names (AgentNotFound, PermissionDenied). */
  faceOf(request: FastifyRequest): A2aFace;
  /** The caller's extended cards (null: the server does not authenticate). */
  cardsOf(request: FastifyRequest): ExtendedCards;
  keepAliveSeconds: number;
  /** The refusal of a request whose path and verb name no operation (unrouted.ts). */
  refuse(request: FastifyRequest): Unrouted;
}

/** An A2A error as HTTP+JSON answers it: its status code and a google.rpc.Status body. */
export function sendRestError(request: FastifyRequest, reply: FastifyReply, err: unknown) {
  const error = asA2aError(err, request.log);
  retryAfterOverload(reply, err);
  return reply.code(error.mapping.http).type("application/json").send(error.toHttpStatus());
}

/**
 * A2A's HTTP+JSON binding (specification §11) under an agent's base: `POST message:send`,
 * `message:stream`, `GET tasks`, `GET tasks/{id}`, `POST tasks/{id}:cancel`,
 * `tasks/{id}:subscribe` (GET as the specification says, POST as some clients send it). A
 * stream's every `data:` is a bare StreamResponse.
 */
export function registerRestBinding(app: FastifyInstance, binding: RestBinding) {
  const { faceOf, cardsOf, keepAliveSeconds } = binding;
  /** A path and verb that name no operation: 404, or 405 with the verbs the path takes. */
  const refuse = (request: FastifyRequest, reply: FastifyReply): never => {
    const refused = binding.refuse(request);
    if (refused.allow) reply.header("allow", refused.allow);
    throw refused.error;
  };
  const ref = { type: "string", minLength: 1, maxLength: 1100 } as const;
  const params = (...keys: string[]) => ({
    type: "object",
    properties: Object.fromEntries(keys.map((key) => [key, ref])),
    required: keys,
  });

  const stream = async (
    request: FastifyRequest,
    reply: FastifyReply,
    open: (gone: LazyAbortController) => Promise<A2aStream>,
  ) => {
    const gone = new LazyAbortController();
    const events = await open(gone);
    if (isWhole(events))
      return sendWholeSse(
        reply,
        events.map((event) => sseEvent(event)),
      );
    const sse = openA2aSse(request, reply, keepAliveSeconds);
    sse.closed.addEventListener("abort", () => gone.abort(new Error("client disconnected")), {
      once: true,
    });
    try {
      for await (const event of events) await sse.write(event);
    } catch (err) {
      if (!sse.closed.aborted)
        await sse.write(asA2aError(err, request.log).toHttpStatus(), "error");
    } finally {
      await events.return(undefined);
      sse.end();
    }
  };

  app.post<{ Params: { agent: string; op: string } }>(
    "/:agent/:op",
    { schema: { params: params("agent", "op") }, config: { longRequest: "stream" } },
    async (request, reply) => {
      const face = faceOf(request);
      if (request.params.op === "message:send") {
        return face.sendMessage(request.caller, request.body, disconnectWatch(reply.raw));
      }
      if (request.params.op === "message:stream") {
        return stream(request, reply, (signal) =>
          face.streamMessage(request.caller, request.body, signal),
        );
      }
      return refuse(request, reply);
    },
  );
  app.get<{ Params: { agent: string }; Querystring: Record<string, unknown> }>(
    "/:agent/tasks",
    { schema: { params: params("agent") } },
    async (request) => faceOf(request).listTasks(request.caller, request.query),
  );
  const taskRoute = async (
    request: FastifyRequest<{ Params: { agent: string; ref: string } }>,
    reply: FastifyReply,
  ) => {
    const face = faceOf(request);
    const [id, action, extra] = request.params.ref.split(":");
    const query = (request.query ?? {}) as Record<string, unknown>;
    if (extra === undefined && action === "subscribe") {
      return stream(request, reply, (signal) => face.subscribe(request.caller, { id }, signal));
    }
    if (request.method === "GET" && action === undefined) {
      return face.getTask(request.caller, { ...query, id });
    }
    if (request.method === "POST" && action === "cancel" && extra === undefined) {
      return face.cancelTask(request.caller, { id });
    }
    return refuse(request, reply);
  };
  const taskOptions = {
    schema: { params: params("agent", "ref") },
    config: { longRequest: "stream" as const },
  };
  app.get("/:agent/tasks/:ref", taskOptions, taskRoute);
  app.post("/:agent/tasks/:ref", taskOptions, taskRoute);
  // Push notification configs: the task's id from the path, the config from the body.
  type ConfigRequest = FastifyRequest<{ Params: { agent: string; task: string; config?: string } }>;
  const pushOf = (request: ConfigRequest) => {
    const face = faceOf(request);
    if (!face.push) throw pushNotSupported();
    return { face, push: face.push };
  };
  const taskParams = { schema: { params: params("agent", "task") } };
  const configParams = { schema: { params: params("agent", "task", "config") } };
  app.post(
    "/:agent/tasks/:task/pushNotificationConfigs",
    taskParams,
    async (request: ConfigRequest) => {
      const { face, push } = pushOf(request);
      return push.create(face.tasks, request.caller, request.body, request.params.task);
    },
  );
  app.get(
    "/:agent/tasks/:task/pushNotificationConfigs",
    taskParams,
    async (request: ConfigRequest) => {
      const { face, push } = pushOf(request);
      return push.list(face.tasks, request.caller, { taskId: request.params.task });
    },
  );
  app.get(
    "/:agent/tasks/:task/pushNotificationConfigs/:config",
    configParams,
    async (request: ConfigRequest) => {
      const { face, push } = pushOf(request);
      const ids = { taskId: request.params.task, id: request.params.config };
      return push.get(face.tasks, request.caller, ids);
    },
  );
  app.delete(
    "/:agent/tasks/:task/pushNotificationConfigs/:config",
    configParams,
    async (request: ConfigRequest) => {
      const { face, push } = pushOf(request);
      const ids = { taskId: request.params.task, id: request.params.config };
      return push.delete(face.tasks, request.caller, ids);
    },
  );
  app.get("/:agent/extendedAgentCard", { schema: { params: params("agent") } }, async (request) => {
    const cards = cardsOf(request);
    if (!cards) throw noExtendedCard();
    return cards.v1();
  });
}
