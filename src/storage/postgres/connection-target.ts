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
}

/**
 * Splits a `postgres://` URL into what pg gets and the schema: the `schema` option wins over a
 * `?schema=` query parameter, and `public` is the default.
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
  // Only rewrite the URL when there is something to take out: the rest reaches pg untouched.
  if (fromUrl !== null || options !== null) {
    parsed.searchParams.delete("schema");
    parsed.searchParams.delete("options");
    pgUrl = parsed.toString();
  }
  const chosen = schema ?? (fromUrl === null || fromUrl === "" ? "public" : fromUrl);
  if (!SCHEMA_NAME.test(chosen)) {
    throw new Error(
      `PostgreSQL schema name ${JSON.stringify(chosen)} is not allowed: use lower-case letters, digits and _ (at most 63)`,
    );
  }
  return { url: pgUrl, schema: chosen, options };
}
