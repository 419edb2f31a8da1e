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

export interface PostgresStorageOptions {
  /**
   * `postgres://user:password@host:port/database`. A `?schema=name` parameter selects the schema
   * and `?pool_size=n` the connections per replica (both are taken out before the URL reaches
   * pg); other parameters are pg's (sslmode, …).
   */
  url: string;
  /** Schema for every table; wins over `?schema=`. Created when missing. Default `public`. */
  schema?: string;
  /** Connections per storage (per replica); wins over `?pool_size=`. Default 10. */
  poolSize?: number;
  /**
   * Write groups in flight at once, each on a connection of the pool (group-commit.ts). Default
   * half the pool: the rest serves reads.
   */
  writeGroups?: number;
  /**
   * The most writes one group may hold (default 64, see group-commit.ts); 1 turns grouping
   * off: every write is its own transaction.
   */
  writesPerGroup?: number;
  /**
   * How long a group takes writes before it commits (default 25 ms, see group-commit.ts). Tests
   * that count a group's commits raise it, so that a busy machine's slow round trips do not
   * split their groups.
   */
  groupBudgetMs?: number;
}

/**
 * Connections per replica unless the URL says otherwise: half carry write groups, the rest reads
 * (measured here: more lanes did not raise runs/s, the database's CPU was the limit).
 */
const DEFAULT_POOL_SIZE = 10;

/** The pool and write-group sizes a storage opens with (see repositories.ts). */
export interface PoolSettings {
  poolSize: number;
  writeGroups: number;
  writesPerGroup: number | undefined;
  groupBudgetMs: number | undefined;
}

/** The options' pool settings, the URL's where the options give none; refuses nonsense. */
export function poolSettings(
  options: PostgresStorageOptions,
  target: ConnectionTarget,
): PoolSettings {
  const poolSize = options.poolSize ?? target.poolSize ?? DEFAULT_POOL_SIZE;
  if (!Number.isInteger(poolSize) || poolSize < 1) {
    throw new Error(`PostgreSQL pool size must be a positive integer, got ${options.poolSize}`);
  }
  const writeGroups = options.writeGroups ?? Math.max(1, Math.floor(poolSize / 2));
  if (!Number.isInteger(writeGroups) || writeGroups < 1) {
    throw new Error(
      `PostgreSQL write groups must be a positive integer, got ${options.writeGroups}`,
    );
  }
  return {
    poolSize,
    writeGroups,
    writesPerGroup: options.writesPerGroup,
    groupBudgetMs: options.groupBudgetMs,
  };
}
