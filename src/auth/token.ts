/**
 * What the auth hook needs of bearer tokens before any is verified: what one looks like and
 * how a refusal is told. Apart from jwt.ts, so that jose loads only when an issuer is
 * configured (the hook imports the verifier then).
 */

/** Why a token was refused: `unauthorized` → 401; `unavailable` → 503 (the issuer's keys). */
export class TokenRefused extends Error {
  constructor(
    readonly kind: "unauthorized" | "unavailable",
    message: string,
  ) {
    super(message);
  }
}

export interface VerifiedUser {
  /** The user id claim's value. */
  userId: string;
  /** Agent names the agents claim lists; undefined when no agents claim is configured. */
  agents?: string[];
}

/** A compact JWS has three base64url parts; anything else is no token (an unknown API key). */
export const looksLikeJwt = (value: string): boolean =>
  /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(value);
