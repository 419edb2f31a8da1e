import type { FastifyReply, FastifyRequest } from "fastify";
import { A2aError } from "../../bridge/a2a/index.js";

/**
 * A request refused before it reached the face (no or bad credentials, the token issuer
 * unreachable), answered in the shape of the binding it came by: the JSON-RPC binding (a POST
 * to the agent's base itself) gets a JSON-RPC response with an error object and the HTTP status;
 * the HTTP+JSON binding a google.rpc.Status. The body is not read yet, so the id is null, as
 * JSON-RPC says when the id could not be determined.
 */
export function sendA2aRefusal(
  basePath: string,
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
): FastifyReply {
  const kind =
    status === 401 ? "Unauthenticated" : status === 403 ? "PermissionDenied" : "Unavailable";
  const error = new A2aError(kind, message);
  reply.type("application/json");
  if (isJsonRpcCall(basePath, request)) {
    return reply
      .code(error.rpcHttpStatus)
      .send({ jsonrpc: "2.0", id: null, error: error.toJsonRpc() });
  }
  return reply.code(error.mapping.http).send(error.toHttpStatus());
}

/** Whether the request is a JSON-RPC call: a POST to `{basePath}/{agent}` exactly. */
function isJsonRpcCall(basePath: string, request: FastifyRequest): boolean {
  if (request.method !== "POST") return false;
  const path = request.url.split("?")[0]!;
  return !path.slice(basePath.length + 1).includes("/");
}
