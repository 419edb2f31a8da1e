import type { FastifyReply, FastifyRequest } from "fastify";
import { A2aError, type StreamResponse } from "../../bridge/a2a/index.js";
import { LazyAbortController } from "../../engine/run-engine/lazy-abort.js";
import { asA2aError, retryAfterOverload } from "./errors.js";
import { type A2aFace, isWhole } from "./face.js";
import { disconnectWatch } from "./gone.js";
import type { A2aOperations, ExtendedCards } from "./operations.js";
import { openA2aSse, sendWholeSse, sseEvent } from "./sse.js";

type Id = string | number | null;
type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** The most calls one batch may hold. */
export const MAX_BATCH = 50;

/** A JSON-RPC id as sent back: a string or number as it came, anything else null. */
export function idOf(body: unknown): Id {
  const id = isRecord(body) ? body.id : undefined;
  if (typeof id === "string" && id.length <= 200) return id;
  if (typeof id === "number" && Number.isFinite(id)) return id;
  return null;
}

export interface JsonRpcContext {
  /** The agent's face (throws AgentNotFound or PermissionDenied). */
  faceOf(): A2aFace;
  /** The dialect a method belongs to (its name says which); undefined for none. */
  operations(method: string): A2aOperations | undefined;
  keepAliveSeconds: number;
  /** The caller's extended cards (null: the server does not authenticate). */
  cards(): ExtendedCards;
}

const response = (id: Id, answer: { result: unknown } | { error: unknown }) => ({
  jsonrpc: "2.0",
  id,
  ...answer,
});

/** A call of the request, checked: its method's operations, or the JSON-RPC error it is. */
function callOf(body: unknown, context: JsonRpcContext) {
  if (!isRecord(body) || body.jsonrpc !== "2.0" || typeof body.method !== "string") {
    throw new A2aError(
      "InvalidRequest",
      'a JSON-RPC 2.0 request is an object with "jsonrpc": "2.0", a "method" and "params"',
    );
  }
  if (body.id !== undefined && body.id !== null && idOf(body) === null) {
    throw new A2aError("InvalidRequest", "id must be a string (at most 200) or a number");
  }
  const method = body.method;
  const ops = context.operations(method);
  if (!ops) {
    throw new A2aError(
      "MethodNotFound",
      `method ${JSON.stringify(method.slice(0, 100))} is not an A2A method`,
    );
  }
  // A request without an id is a notification: JSON-RPC answers it with nothing.
  return { ops, call: ops.methods[method]!, params: body.params, notification: !("id" in body) };
}

/**
 * A2A's JSON-RPC 2.0 binding: one POST per call (or a batch of them). An answer is a JSON-RPC
 * response (errors as an error object with a `google.rpc.ErrorInfo` detail, HTTP 200); a
 * streaming method answers SSE whose every `data:` is a whole JSON-RPC response, its result a
 * StreamResponse. An empty or malformed body is -32700; a notification (no `id`) is answered
 * with 204 and no body.
 */
export async function serveJsonRpc(
  request: FastifyRequest,
  reply: FastifyReply,
  context: JsonRpcContext,
): Promise<unknown> {
  const body = request.body;
  if (Array.isArray(body)) return serveBatch(request, reply, body, context);
  const id = idOf(body);
  const fail = (err: unknown) => {
    const error = asA2aError(err, request.log);
    retryAfterOverload(reply, err);
    return reply
      .code(error.rpcHttpStatus)
      .type("application/json")
      .send(response(id, { error: error.toJsonRpc() }));
  };
  try {
    if (body === undefined) {
      throw new A2aError("ParseError", "body is empty: a JSON-RPC request is a JSON object");
    }
    const { ops, call, params, notification } = callOf(body, context);
    const face = context.faceOf();
    if (call.stream) {
      const gone = new LazyAbortController();
      const events = await call.stream(face, request.caller, params, gone);
      if (isWhole(events)) {
        return sendWholeSse(
          reply,
          events.map((event) => sseEvent(response(id, { result: ops.streamResult(event) }))),
        );
      }
      return streamJsonRpc(request, reply, id, events, ops.streamResult, gone, context);
    }
    const signal = disconnectWatch(reply.raw);
    const result = await call.unary!(face, request.caller, params, signal, context.cards());
    if (notification) return reply.code(204).send();
    return reply.type("application/json").send(response(id, { result }));
  } catch (err) {
    return fail(err);
  }
}

/**
 * A batch, as JSON-RPC 2.0 says: an array of responses, one per call that is not a
 * notification, in order (204 when there is none). Calls run one after another; a streaming
 * method has no place in a batch (its answer is a stream) and gets -32600.
 */
async function serveBatch(
  request: FastifyRequest,
  reply: FastifyReply,
  calls: unknown[],
  context: JsonRpcContext,
): Promise<unknown> {
  const refuse = (message: string) =>
    reply
      .type("application/json")
      .send(response(null, { error: new A2aError("InvalidRequest", message).toJsonRpc() }));
  if (calls.length === 0) return refuse("an empty batch is not a request");
  if (calls.length > MAX_BATCH) {
    return refuse(`a batch holds at most ${MAX_BATCH} calls (it has ${calls.length})`);
  }
  const signal = disconnectWatch(reply.raw);
  const answers: unknown[] = [];
  for (const body of calls) {
    const id = idOf(body);
    try {
      const { call, params, notification } = callOf(body, context);
      if (!call.unary) {
        throw new A2aError(
          "InvalidRequest",
          `${(body as Rec).method} answers with a stream: send it on its own, not in a batch`,
        );
      }
      const result = await call.unary(
        context.faceOf(),
        request.caller,
        params,
        signal,
        context.cards(),
      );
      if (!notification) answers.push(response(id, { result }));
    } catch (err) {
      answers.push(response(id, { error: asA2aError(err, request.log).toJsonRpc() }));
    }
  }
  if (answers.length === 0) return reply.code(204).send();
  return reply.type("application/json").send(answers);
}

async function streamJsonRpc(
  request: FastifyRequest,
  reply: FastifyReply,
  id: Id,
  events: AsyncGenerator<StreamResponse>,
  toResult: (event: StreamResponse) => unknown,
  gone: LazyAbortController,
  context: JsonRpcContext,
): Promise<void> {
  const sse = openA2aSse(request, reply, context.keepAliveSeconds);
  sse.closed.addEventListener("abort", () => gone.abort(new Error("client disconnected")), {
    once: true,
  });
  try {
    for await (const event of events) {
      await sse.write(response(id, { result: toResult(event) }));
    }
  } catch (err) {
    if (!sse.closed.aborted) {
      await sse.write(response(id, { error: asA2aError(err, request.log).toJsonRpc() }));
    }
  } finally {
    await events.return(undefined);
    sse.end();
  }
}
