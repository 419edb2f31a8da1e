import type { FastifyBaseLogger, FastifyReply } from "fastify";
import { A2aError } from "../../bridge/a2a/index.js";
import { isDomainError } from "../../util/errors.js";

/** Tells a client refused for load when to try again, as the ACP face does. */
export function retryAfterOverload(reply: FastifyReply, err: unknown): void {
  if (isDomainError(err, "overloaded") && !reply.hasHeader("retry-after")) {
    reply.header("retry-after", "1");
  }
}

/**
 * Any error an operation threw, as the A2A error the client gets: A2A's own as they are, the
 * run service's domain errors by meaning, a body the parser refused as a parse error, anything
 * else as an internal error (logged; its message is not shown).
 */
export function asA2aError(err: unknown, log?: FastifyBaseLogger): A2aError {
  if (err instanceof A2aError) return err;
  if (isDomainError(err)) {
    switch (err.code) {
      case "invalid":
      case "not_found":
      case "too_large":
        return new A2aError("InvalidParams", err.message);
      case "unsupported_media_type":
        return new A2aError("ContentTypeNotSupported", err.message);
      case "conflict":
        return new A2aError("UnsupportedOperation", err.message);
      case "overloaded":
        return new A2aError("ResourceExhausted", err.message);
      case "forbidden":
        return new A2aError("PermissionDenied", err.message);
      default:
        return new A2aError("Internal", err.message);
    }
  }
  const status = (err as { statusCode?: unknown } | null)?.statusCode;
  if (typeof status === "number" && status >= 400 && status < 500) {
    const message = (err as Error).message;
    if (status === 415) return new A2aError("ContentTypeNotSupported", message);
    if (status === 413) return new A2aError("InvalidRequest", message);
    // The rate limit (its `retry-after` is set already).
    if (status === 429) return new A2aError("ResourceExhausted", message);
    return new A2aError("ParseError", message);
  }
  log?.error({ err }, "A2A operation failed");
  return new A2aError("Internal", "internal error");
}
