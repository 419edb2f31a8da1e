import type { FastifyReply, FastifyRequest } from "fastify";
import { A2aError, type StreamResponse } from "../../bridge/a2a/index.js";
import { disconnectSignal } from "../streaming/client-gone.js";
import { asA2aError, retryAfterOverload } from "./errors.js";
import type { A2aFace } from "./face.js";
import type { A2aOperations, ExtendedCards } from "./operations.js";
import { openA2aSse } from "./sse.js";

type Id = string | number | null;
type Rec = Record<string, unknown>;
const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** A JSON-RPC id as sent back: a string or number as it came, anything else null. */
export function idOf(body: unknown): Id {
  const id = isRecord(body) ? body.id : undefined;
  if (typeof id === "string" && id.length <= 200) return id;
  if (typeof id === "number" && Number.isFinite(id)) return id;
  return null;
}

/**
 * A2A's JSON-RPC 2.0 binding: one POST per call. An answer is a JSON-RPC response (errors as
 * an error object with a `google.rpc.ErrorInfo` detail, HTTP 200); a streaming method answers
 * SSE whose every `data:` is a whole JSON-RPC response, its result a StreamResponse.
 */
export async function serveJsonRpc(
  request: FastifyRequest,
  reply: FastifyReply,
  face: A2aFace,
  operations: (method: string) => A2aOperations | undefined,
  keepAliveSeconds: number,
  cards: ExtendedCards,
): Promise<unknown> {
  const body = request.body;
  const id = idOf(body);
  const fail = (err: unknown) => {
    const error = asA2aError(err, request.log);
    retryAfterOverload(reply, err);
    return reply
      .code(error.rpcHttpStatus)
      .type("application/json")
      .send({ jsonrpc: "2.0", id, error: error.toJsonRpc() });
  };
  try {
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
    const ops = operations(method);
    if (!ops) {
      throw new A2aError(
        "MethodNotFound",
        `method ${JSON.stringify(method.slice(0, 100))} is not an A2A method`,
      );
    }
    const call = ops.methods[method]!;
    if (call.stream) {
      const signal = new AbortController();
      const events = await call.stream(face, request.caller, body.params, signal.signal);
      return streamJsonRpc(
        request,
        reply,
        id,
        events,
        (event) => ops.streamResult(event),
        signal,
        keepAliveSeconds,
      );
    }
    const result = await call.unary!(
      face,
      request.caller,
      body.params,
      disconnectSignal(reply.raw),
      cards,
    );
    return reply.type("application/json").send({ jsonrpc: "2.0", id, result });
  } catch (err) {
    return fail(err);
  }
}

async function streamJsonRpc(
  request: FastifyRequest,
  reply: FastifyReply,
  id: Id,
  events: AsyncGenerator<StreamResponse>,
  toResult: (event: StreamResponse) => unknown,
  controller: AbortController,
  keepAliveSeconds: number,
): Promise<void> {
  const sse = openA2aSse(request, reply, keepAliveSeconds);
  sse.closed.addEventListener("abort", () => controller.abort(), { once: true });
  try {
    for await (const event of events) {
      await sse.write({ jsonrpc: "2.0", id, result: toResult(event) });
    }
  } catch (err) {
    if (!sse.closed.aborted) {
      await sse.write({ jsonrpc: "2.0", id, error: asA2aError(err, request.log).toJsonRpc() });
    }
  } finally {
    await events.return(undefined);
    sse.end();
  }
}
