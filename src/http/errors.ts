import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { type DomainErrorCode, isDomainError } from "../util/errors.js";

/** HTTP status for each domain error code; the only place codes meet statuses. */
const STATUS_BY_CODE: Record<DomainErrorCode, number> = {
  not_found: 404,
  conflict: 409,
  invalid: 422,
  too_large: 413,
  unsupported_media_type: 415,
  unauthorized: 401,
  forbidden: 403,
  overloaded: 429,
};

/** The HTTP status of a coded domain error, for a face that answers errors in its own shape. */
export function domainErrorStatus(code: DomainErrorCode): number {
  return STATUS_BY_CODE[code];
}

/**
 * ACP's `ErrorResponse` is a JSON *string*: the body is `"thread … not found"` with an
 * `application/json` content type. Sent pre-serialized so no serializer can alter it.
 */
export function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type("application/json; charset=utf-8").send(JSON.stringify(message));
}

/**
 * Errors the router raises before any route or hook: a malformed percent-encoding in the URL
 * (400), a path segment over the router's length limit (414).
 */
export function sendFrameworkError(
  err: FastifyError,
  _request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (err.code === "FST_ERR_MAX_PARAM_LENGTH") {
    return sendError(reply, 414, "a path segment of the URL is too long");
  }
  if (err.code === "FST_ERR_BAD_URL") {
    return sendError(reply, 400, "the URL is malformed (bad percent-encoding)");
  }
  return sendError(reply, err.statusCode ?? 400, err.message);
}

/** Fastify's own client-error codes, mapped to what the ACP client should see. */
function clientErrorStatus(err: FastifyError): number | undefined {
  switch (err.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
    case "FST_ERR_CTP_INVALID_CONTENT_LENGTH":
      return 400;
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return 413;
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
    case "FST_ERR_CTP_INVALID_TYPE":
      return 415;
    default:
      return undefined;
  }
}

export interface ErrorHandlingOptions {
  /** `server.limits.maxBodyBytes`, named in the 413 message. */
  maxBodyBytes: number;
  /** What a 404 under a face's path adds: where that face's routes are (see RouteHint). */
  routeHints?: readonly RouteHint[];
}

/** A face's paths, said by a 404 for a path under its prefix that matches none of them. */
export interface RouteHint {
  prefix: string;
  routes: string;
}

export function registerErrorHandling(app: FastifyInstance, options: ErrorHandlingOptions): void {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    if (isDomainError(err)) {
      // Tell a refused client when trying again makes sense.
      if (err.code === "overloaded") reply.header("retry-after", "1");
      return sendError(reply, STATUS_BY_CODE[err.code], err.message);
    }
    if (err.validation) {
      // Schema failures on body, params or query: the message already names the path.
      return sendError(reply, 422, err.message);
    }
    const status = clientErrorStatus(err);
    if (status !== undefined) {
      return sendError(reply, status, describeClientError(err, status, request, options));
    }
    if (err.statusCode === 400) return sendError(reply, 400, err.message);
    if (typeof err.statusCode === "number" && err.statusCode >= 400 && err.statusCode < 500) {
      return sendError(reply, err.statusCode, err.message);
    }
    // Anything else is our fault: log the details, tell the client nothing internal.
    request.log.error({ err }, "unhandled error");
    return sendError(reply, 500, "internal server error");
  });

  const hints = options.routeHints ?? [];
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?", 1)[0]!;
    const hint = hints.find((h) => path === h.prefix || path.startsWith(`${h.prefix}/`));
    const missing = `no route for ${request.method} ${path}`;
    return sendError(reply, 404, hint ? `${missing}: ${hint.routes}` : missing);
  });
}

/** What the client did, and what is expected instead. */
function describeClientError(
  err: FastifyError,
  status: number,
  request: FastifyRequest,
  options: ErrorHandlingOptions,
): string {
  if (status === 400) return `body is not valid JSON: ${err.message}`;
  if (status === 413) {
    return `request body is larger than ${formatBytes(options.maxBodyBytes)} (server.limits.maxBodyBytes)`;
  }
  if (status === 415) {
    const given = request.headers["content-type"];
    const what = given
      ? `content-type ${JSON.stringify(given.slice(0, MAX_QUOTED_LENGTH))} is not accepted`
      : "the request has a body but no content-type";
    return `${what}: send a JSON body with content-type application/json`;
  }
  return err.message;
}

/** A client-supplied header is quoted in a message only this far. */
const MAX_QUOTED_LENGTH = 100;

/** 1048576 → "1 MiB", 4096 → "4 KiB", 1500000 → "1.43 MiB", 1000 → "1000 bytes". */
export function formatBytes(bytes: number): string {
  for (const [unit, size] of [
    ["GiB", 2 ** 30],
    ["MiB", 2 ** 20],
    ["KiB", 2 ** 10],
  ] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(2))} ${unit}`;
  }
  return `${bytes} bytes`;
}
