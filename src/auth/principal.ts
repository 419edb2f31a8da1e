/**
 * Who is calling, and what of the stored data that caller may reach. Every thread and run
 * records the principal that created it (`principal` in storage); a principal reaches its own
 * records only, an admin reaches everyone's. What a caller may not reach does not exist for it:
 * the services answer 404, never 403, so ids cannot be probed.
 */
import type { PrincipalFilter } from "../storage/types.js";

export interface Principal {
  /**
   * What ownership records: `key:<name>` for an API key, `user:<id>` for a token's end user.
   * Null only for the anonymous caller of a server without authentication.
   */
  id: string | null;
  /** For messages: `API key "app"`, `user "alice"`. */
  label: string;
  /** Reaches every principal's records, and those without an owner. */
  admin: boolean;
  /** Agent ids this principal may use; null: every agent. */
  agentIds: ReadonlySet<string> | null;
}

/**
 * The caller of a server with no API keys and no token issuer: one principal that sees
 * everything, as before ownership existed. What it creates has no owner.
 */
export const ANONYMOUS: Principal = Object.freeze({
  id: null,
  label: "anonymous caller",
  admin: true,
  agentIds: null,
});

/** The server itself acting on a run (stopping it, waiting for it): reaches everything. */
export const SYSTEM: Principal = Object.freeze({
  id: null,
  label: "server",
  admin: true,
  agentIds: null,
});

/**
 * The caller of an open path (health, documents, public metrics) when authentication is on:
 * reaches nothing and may use no agent.
 */
export const NOBODY: Principal = Object.freeze({
  id: null,
  label: "unauthenticated caller",
  admin: false,
  agentIds: new Set<string>(),
});

export const keyPrincipalId = (name: string): string => `key:${name}`;
export const userPrincipalId = (id: string): string => `user:${id}`;

/** Whether `principal` may reach a record owned by `owner` (null: from before ownership). */
export function reaches(principal: Principal, owner: string | null): boolean {
  return principal.admin || (principal.id !== null && owner === principal.id);
}

/** The storage search filter for `principal`: none for an admin, else its own records. */
export function ownerFilter(principal: Principal): PrincipalFilter {
  // A non-admin always has an id; "" (no record's owner) keeps a mistake from widening.
  return principal.admin ? undefined : (principal.id ?? "");
}

/** The owner a new record of `principal` gets. */
export const ownerOf = (principal: Principal): string | null => principal.id;

/** `--owner` of the assign command: `key:<name>` or `user:<id>`, else null. */
export function parsePrincipalId(value: string): string | null {
  return /^(key|user):\S.*$/.test(value) ? value : null;
}
