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
  if (request.method === "POST" && isJsonRpcPath(basePath, request)) {
    return reply
      .code(error.rpcHttpStatus)
      .send({ jsonrpc: "2.0", id: null, error: error.toJsonRpc() });
  }
  return reply.code(error.mapping.http).send(error.toHttpStatus());
}

/**
 * Whether the request is for the JSON-RPC binding: `{basePath}/{agent}` itself (with or without
 * a trailing slash), where a POST is a call and any other verb is refused in JSON-RPC's shape.
 */
function isJsonRpcPath(basePath: string, request: FastifyRequest): boolean {
  const path = request.url.split("?")[0]!;
  const rest = path.slice(basePath.length + 1);
  const slash = rest.indexOf("/");
  return rest !== "" && (slash === -1 || slash === rest.length - 1);
}

/**
 * The router's own refusals under the face's prefix, before any route (a malformed
 * percent-encoding: 400; a path segment over the router's length limit: 414), in the binding's
 * shape as every other refusal there.
 */
export function sendA2aFrameworkError(
  basePath: string,
  request: FastifyRequest,
  reply: FastifyReply,
  code: string | undefined,
): FastifyReply {
  const error =
    code === "FST_ERR_MAX_PARAM_LENGTH"
      ? new A2aError("InvalidRequest", "a path segment of the URL is too long", {}, 414)
      : new A2aError("InvalidRequest", "the URL is malformed (bad percent-encoding)", {}, 400);
  reply.type("application/json");
  if (isJsonRpcPath(basePath, request)) {
    return reply
      .code(error.rpcHttpStatus)
      .send({ jsonrpc: "2.0", id: null, error: error.toJsonRpc() });
  }
  return reply.code(error.mapping.http).send(error.toHttpStatus());
}
