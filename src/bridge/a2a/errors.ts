/**
 * A2A's errors (specification §3.3.2 and §5.4): the JSON-RPC code, the HTTP status and the
 * `google.rpc.ErrorInfo` reason of each, so both bindings answer the same fault the same way.
 */

export const A2A_ERROR_DOMAIN = "a2a-protocol.org";
export const ERROR_INFO_TYPE = "type.googleapis.com/google.rpc.ErrorInfo";

export type A2aErrorKind =
  | "TaskNotFound"
  | "TaskNotCancelable"
  | "PushNotificationNotSupported"
  | "UnsupportedOperation"
  | "ContentTypeNotSupported"
  | "ExtendedAgentCardNotConfigured"
  | "VersionNotSupported"
  | "ParseError"
  | "InvalidRequest"
  | "MethodNotFound"
  | "InvalidParams"
  | "Internal"
  | "Unauthenticated"
  | "PermissionDenied"
  | "Unavailable"
  | "AgentNotFound"
  | "ResourceExhausted"
  | "NotFound"
  | "MethodNotAllowed";

/** The ErrorInfo domain of the server's own refusals, which A2A does not name. */
export const SERVER_ERROR_DOMAIN = "acp-agui";

interface Mapping {
  code: number;
  http: number;
  /**
   * The HTTP status a JSON-RPC answer carrying this error has: 200 for A2A's errors (the call
   * was made and answered); the HTTP status itself for a refusal before any call (credentials).
   */
  rpcHttp?: number;
  /** Absent: A2A's own domain. */
  domain?: string;
  /** google.rpc.Code name, for HTTP+JSON's `status`. */
  status: string;
  reason: string;
}

const MAPPINGS: Record<A2aErrorKind, Mapping> = {
  TaskNotFound: { code: -32001, http: 404, status: "NOT_FOUND", reason: "TASK_NOT_FOUND" },
  TaskNotCancelable: {
    code: -32002,
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "TASK_NOT_CANCELABLE",
  },
  PushNotificationNotSupported: {
    code: -32003,
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "PUSH_NOTIFICATION_NOT_SUPPORTED",
  },
  UnsupportedOperation: {
    code: -32004,
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "UNSUPPORTED_OPERATION",
  },
  ContentTypeNotSupported: {
    code: -32005,
    http: 400,
    status: "INVALID_ARGUMENT",
    reason: "CONTENT_TYPE_NOT_SUPPORTED",
  },
  ExtendedAgentCardNotConfigured: {
    code: -32007,
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
  },
  VersionNotSupported: {
    code: -32009,
    http: 400,
    status: "FAILED_PRECONDITION",
    reason: "VERSION_NOT_SUPPORTED",
  },
  ParseError: { code: -32700, http: 400, status: "INVALID_ARGUMENT", reason: "PARSE_ERROR" },
  InvalidRequest: {
    code: -32600,
    http: 400,
    status: "INVALID_ARGUMENT",
    reason: "INVALID_REQUEST",
  },
  MethodNotFound: { code: -32601, http: 404, status: "NOT_FOUND", reason: "METHOD_NOT_FOUND" },
  InvalidParams: { code: -32602, http: 400, status: "INVALID_ARGUMENT", reason: "INVALID_PARAMS" },
  Internal: { code: -32603, http: 500, status: "INTERNAL", reason: "INTERNAL_ERROR" },
  // A2A leaves the credential errors to the binding ("JSON-RPC custom error"): -32000, the one
  // server-error code outside A2A's own range, told apart by the HTTP status and the reason.
  Unauthenticated: {
    code: -32000,
    http: 401,
    rpcHttp: 401,
    status: "UNAUTHENTICATED",
    reason: "UNAUTHENTICATED",
    domain: SERVER_ERROR_DOMAIN,
  },
  PermissionDenied: {
    code: -32000,
    http: 403,
    rpcHttp: 403,
    status: "PERMISSION_DENIED",
    reason: "PERMISSION_DENIED",
    domain: SERVER_ERROR_DOMAIN,
  },
  Unavailable: {
    code: -32603,
    http: 503,
    rpcHttp: 503,
    status: "UNAVAILABLE",
    reason: "UNAVAILABLE",
    domain: SERVER_ERROR_DOMAIN,
  },
  // No agent at the interface URL: the server's own fault code too, with the HTTP 404 a
  // missing URL has on either binding.
  AgentNotFound: {
    code: -32000,
    http: 404,
    rpcHttp: 404,
    status: "NOT_FOUND",
    reason: "AGENT_NOT_FOUND",
    domain: SERVER_ERROR_DOMAIN,
  },
  // Refused for load (the rate limit, a full queue, too many open streams): try again later.
  ResourceExhausted: {
    code: -32000,
    http: 429,
    rpcHttp: 429,
    status: "RESOURCE_EXHAUSTED",
    reason: "RESOURCE_EXHAUSTED",
    domain: SERVER_ERROR_DOMAIN,
  },
  // A path under the face's prefix that is no A2A operation (HTTP+JSON's 404 for a route).
  NotFound: {
    code: -32601,
    http: 404,
    rpcHttp: 404,
    status: "NOT_FOUND",
    reason: "NOT_FOUND",
    domain: SERVER_ERROR_DOMAIN,
  },
  // A path of an operation asked with another verb: 405, its `Allow` header names the right one.
  MethodNotAllowed: {
    code: -32600,
    http: 405,
    rpcHttp: 405,
    status: "UNIMPLEMENTED",
    reason: "METHOD_NOT_ALLOWED",
    domain: SERVER_ERROR_DOMAIN,
  },
};

/** A fault to report to an A2A client, whichever binding it came by. */
export class A2aError extends Error {
  constructor(
    readonly kind: A2aErrorKind,
    message: string,
    readonly metadata: Record<string, string> = {},
    /**
     * The HTTP status both bindings answer with, where the transport itself refused the request
     * (a body of a content type the server does not take is ContentTypeNotSupported with 415).
     */
    private readonly httpStatus?: number,
  ) {
    super(message);
    this.name = "A2aError";
  }

  get mapping(): Mapping {
    const mapping = MAPPINGS[this.kind];
    return this.httpStatus === undefined
      ? mapping
      : { ...mapping, http: this.httpStatus, rpcHttp: this.httpStatus };
  }

  /** The `google.rpc.ErrorInfo` detail both bindings carry. */
  errorInfo(): Record<string, unknown> {
    return {
      "@type": ERROR_INFO_TYPE,
      reason: this.mapping.reason,
      domain: this.mapping.domain ?? A2A_ERROR_DOMAIN,
      ...(Object.keys(this.metadata).length > 0 ? { metadata: this.metadata } : {}),
    };
  }

  /** The HTTP status of a JSON-RPC response carrying this error. */
  get rpcHttpStatus(): number {
    return this.mapping.rpcHttp ?? 200;
  }

  /** A JSON-RPC error object: the code, the message, the ErrorInfo in `data`. */
  toJsonRpc(): { code: number; message: string; data: unknown[] } {
    return { code: this.mapping.code, message: this.message, data: [this.errorInfo()] };
  }

  /** The HTTP+JSON error body: a google.rpc.Status under `error` (AIP-193). */
  toHttpStatus(): { error: Record<string, unknown> } {
    const { http, status } = this.mapping;
    return { error: { code: http, status, message: this.message, details: [this.errorInfo()] } };
  }
}

export const taskNotFound = (taskId: string) =>
  new A2aError("TaskNotFound", `task ${JSON.stringify(taskId)} not found`, { taskId });

export const invalidParams = (message: string) => new A2aError("InvalidParams", message);
