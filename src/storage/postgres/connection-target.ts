/**
 * A PostgreSQL storage URL taken apart: what pg gets and the schema. On its own so that a
 * storage can check its URL when it is built without loading the PostgreSQL code (see
 * postgres-storage.ts).
 */

/** Lower-case unquoted identifiers only: the name goes into `search_path` and DDL as-is. */
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export interface ConnectionTarget {
  /** The URL handed to pg, without our `schema` parameter (and without `options`, merged in when the pool opens). */
  url: string;
  schema: string;
  /** Server options from the URL's own `options` parameter, kept ahead of ours. */
  options: string | null;
  /** Connections per replica from `?pool_size=`, null when the URL does not say. */
  poolSize: number | null;
}

/** A pool this large is a typo, not a plan: PostgreSQL's own default is 100 connections. */
const MAX_POOL_SIZE = 1000;

/**
 * Splits a `postgres://` URL into what pg gets, the schema and the pool size: the `schema` option
 * wins over a `?schema=` query parameter, and `public` is the default; `?pool_size=` sets the
 * connections per replica.
 */
export function connectionTarget(url: string, schema?: string): ConnectionTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new Error("PostgreSQL storage URL is not a valid URL (postgres://user@host:port/db)");
  }
  let pgUrl = url;
  const fromUrl = parsed.searchParams.get("schema");
  const options = parsed.searchParams.get("options");
  const poolSize = parsed.searchParams.get("pool_size");
  // Only rewrite the URL when there is something to take out: the rest reaches pg untouched.
  if (fromUrl !== null || options !== null || poolSize !== null) {
    parsed.searchParams.delete("schema");
    parsed.searchParams.delete("options");
    parsed.searchParams.delete("pool_size");
    pgUrl = parsed.toString();
  }
  const chosen = schema ?? (fromUrl === null || fromUrl === "" ? "public" : fromUrl);
  if (!SCHEMA_NAME.test(chosen)) {
    throw new Error(
      `PostgreSQL schema name ${JSON.stringify(chosen)} is not allowed: use lower-case letters, digits and _ (at most 63)`,
    );
  }
  return { url: pgUrl, schema: chosen, options, poolSize: parsePoolSize(poolSize) };
}

function parsePoolSize(text: string | null): number | null {
  if (text === null) return null;
  const n = /^\d{1,4}$/.test(text) ? Number(text) : Number.NaN;
  if (!(n >= 1 && n <= MAX_POOL_SIZE)) {
    throw new Error(
      `PostgreSQL pool_size ${JSON.stringify(text)} is not allowed: give a whole number of connections from 1 to ${MAX_POOL_SIZE}`,
    );
  }
  return n;
}
