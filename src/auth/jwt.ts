/**
 * End users from bearer tokens: a JWT signed by the configured issuer, checked with `jose`
 * (signature against the issuer's JWKS or a configured public key; `iss`, `aud`, `exp`, `nbf`).
 * Nothing here parses or verifies a token by hand.
 */
import { createPublicKey, type KeyObject } from "node:crypto";
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyGetKey, jwtVerify } from "jose";
import type { JwtSettings } from "../config/settings.js";
import { TokenRefused, type VerifiedUser } from "./token.js";

export class TokenVerifier {
  readonly #settings: JwtSettings;
  readonly #key: KeyObject | JWTVerifyGetKey;

  constructor(settings: JwtSettings) {
    this.#settings = settings;
    this.#key =
      settings.publicKey !== undefined
        ? createPublicKey(settings.publicKey)
        : createRemoteJWKSet(new URL(settings.jwksUrl!), {
            timeoutDuration: 5000,
            cooldownDuration: 30_000,
          });
  }

  async verify(token: string): Promise<VerifiedUser> {
    const { issuer, audience, algorithms, userClaim, agentsClaim, clockToleranceSeconds } =
      this.#settings;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.#key as JWTVerifyGetKey, {
        issuer,
        audience,
        algorithms,
        requiredClaims: ["exp"],
        clockTolerance: clockToleranceSeconds,
      }));
    } catch (err) {
      throw refusal(err);
    }
    const id = payload[userClaim];
    if (!((typeof id === "string" && id.length > 0) || typeof id === "number")) {
      throw new TokenRefused(
        "unauthorized",
        `token has no usable "${userClaim}" claim (the user id: a non-empty string)`,
      );
    }
    const user: VerifiedUser = { userId: String(id) };
    if (agentsClaim !== undefined) user.agents = agentNames(payload[agentsClaim]);
    return user;
  }
}

/** A list of names, or OAuth-scope style one string of names separated by spaces. */
function agentNames(value: unknown): string[] {
  if (typeof value === "string") return value.split(/\s+/).filter(Boolean);
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === "string");
  return [];
}

/** jose's error as what the client is told; the issuer being unreachable is not its fault. */
function refusal(err: unknown): TokenRefused {
  if (err instanceof errors.JWTExpired) return new TokenRefused("unauthorized", "token expired");
  if (err instanceof errors.JWTClaimValidationFailed) {
    const reason =
      err.claim === "nbf" ? "is not valid yet (nbf)" : `fails its "${err.claim}" check`;
    return new TokenRefused("unauthorized", `token ${reason}`);
  }
  if (
    err instanceof errors.JWSSignatureVerificationFailed ||
    err instanceof errors.JWKSNoMatchingKey
  ) {
    return new TokenRefused(
      "unauthorized",
      "token signature does not verify with the issuer's keys",
    );
  }
  if (err instanceof errors.JOSEAlgNotAllowed) {
    return new TokenRefused("unauthorized", "token is signed with an algorithm not allowed");
  }
  if (err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid) {
    return new TokenRefused("unavailable", "the token issuer's keys could not be fetched");
  }
  if (err instanceof errors.JOSEError && err.code !== "ERR_JOSE_GENERIC") {
    return new TokenRefused("unauthorized", "token is malformed or not a signed JWT");
  }
  // ERR_JOSE_GENERIC (a non-200 JWKS answer) or a network failure fetching the JWKS.
  return new TokenRefused("unavailable", "the token issuer's keys could not be fetched");
}
