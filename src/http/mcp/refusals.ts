import type { FastifyReply, FastifyRequest } from "fastify";

/** JSON-RPC's codes for what is refused before a call reaches the MCP server. */
export const REFUSAL_CODE = {
  parse: -32700,
  invalidRequest: -32600,
  /** What the SDK's Streamable HTTP transport answers for a missing or unknown session. */
  session: -32000,
  notFound: -32001,
} as const;

/**
 * A refusal in JSON-RPC's shape (what an MCP client reads), with the HTTP status that says
 * what it is: the id is null, as JSON-RPC says when the request's id could not be read.
 */
export function sendRpcRefusal(
  reply: FastifyReply,
  status: number,
  code: number,
  message: string,
): FastifyReply {
  return reply
    .code(status)
    .type("application/json")
    .send({ jsonrpc: "2.0", id: null, error: { code, message } });
}

/**
 * The auth plugin's refusals (no or bad credentials, the token issuer unreachable) under the
 * MCP base path, in JSON-RPC's shape. A 401 keeps its `WWW-Authenticate` challenge, naming the
 * endpoint's protected-resource metadata when users' tokens are accepted (`challenge`).
 */
export function mcpRefusal(challenge?: (request: FastifyRequest) => string) {
  return (request: FastifyRequest, reply: FastifyReply, status: number, message: string) => {
    if (status === 401 && challenge) reply.header("www-authenticate", challenge(request));
    const code = status === 503 ? REFUSAL_CODE.session : REFUSAL_CODE.invalidRequest;
    return sendRpcRefusal(reply, status, code, message);
  };
}

/** Loopback hosts: a browser page there is the user's own, not a rebinding attack. */
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/**
 * Whether a request's `Origin` may reach the MCP server (MCP 2025-11-25, Streamable HTTP,
 * "Security Warning": servers MUST validate Origin against DNS rebinding). No Origin (not a
 * browser) passes; loopback origins pass; any other must be in `allowed`.
 */
export function originAllowed(origin: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true;
  if (allowed.includes("*") || allowed.includes(origin)) return true;
  try {
    const url = new URL(origin);
    return (url.protocol === "http:" || url.protocol === "https:") && LOOPBACK.test(url.hostname);
  } catch {
    return false;
  }
}

/**
 * The router's own refusals under the MCP base path, before any route (a malformed
 * percent-encoding: 400; a path segment over the router's length limit: 414), in JSON-RPC's
 * shape as every other refusal there.
 */
export function sendMcpFrameworkError(reply: FastifyReply, code: string | undefined): FastifyReply {
  return code === "FST_ERR_MAX_PARAM_LENGTH"
    ? sendRpcRefusal(
        reply,
        414,
        REFUSAL_CODE.invalidRequest,
        "a path segment of the URL is too long",
      )
    : sendRpcRefusal(
        reply,
        400,
        REFUSAL_CODE.invalidRequest,
        "the URL is malformed (bad percent-encoding)",
      );
}
