/**
 * Coded domain errors. Storage, the engine and the config loader throw these; the single
 * HTTP error handler maps each code to an ACP status and a string `ErrorResponse`.
 * Nothing below `src/http/` knows about HTTP status codes.
 */
export type DomainErrorCode =
  | "not_found" // → 404
  | "conflict" // → 409
  | "invalid" // → 422
  | "too_large" // → 413
  | "unsupported_media_type" // → 415
  | "unauthorized" // → 401
  | "forbidden" // → 403
  | "overloaded"; // → 429 / 503

export class DomainError extends Error {
  readonly code: DomainErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: DomainErrorCode, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = "DomainError";
    this.code = code;
    this.details = details;
  }
}

export const notFound = (what: string, id: string) =>
  new DomainError("not_found", `${what} ${id} not found`);
export const conflict = (message: string) => new DomainError("conflict", message);
export const invalid = (message: string, details?: Record<string, unknown>) =>
  new DomainError("invalid", message, details);

/**
 * A fenced write refused: the run's claim (owner and lease epoch) passed to another replica, which
 * now owns the run's record. The writer stops quietly; nothing it tried was written.
 */
export const claimLost = (runId: string) =>
  new DomainError("conflict", `run ${runId}: its claim passed to another replica`, {
    reason: "claim_lost",
  });

/** An agent's queue is full: `pending` runs wait already, its limit (a 429). */
export const queueFull = (agentId: string, pending: number) =>
  new DomainError(
    "overloaded",
    `agent ${agentId} already has ${pending} pending runs (its limit); try again later`,
  );

export function isClaimLost(err: unknown): err is DomainError {
  return isDomainError(err, "conflict") && err.details?.reason === "claim_lost";
}

export function isDomainError(err: unknown, code?: DomainErrorCode): err is DomainError {
  return err instanceof DomainError && (code === undefined || err.code === code);
}
