/**
 * PostgreSQL for the storage tests: the server URL, a loud check that it answers, and storages
 * that live in a schema of their own (`acp_test_<random>`) which goes away when they close.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { PostgresStorage } from "../../src/storage/postgres/postgres-storage.js";

/** Trust auth on the local cluster; override with TEST_DATABASE_URL. */
export const TEST_DATABASE_URL =
  process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Schemas this process created, so `dropLeftoverSchemas` can clean up after failed tests. */
const created = new Set<string>();

export function newSchemaName(): string {
  const schema = `acp_test_${randomBytes(6).toString("hex")}`;
  created.add(schema);
  return schema;
}

async function withClient<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: TEST_DATABASE_URL,
    connectionTimeoutMillis: 5000,
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/**
 * Throws (failing the test file, never skipping it) when PostgreSQL does not answer, saying what
 * is needed and how to start it.
 */
export async function requirePostgres(): Promise<void> {
  try {
    await withClient((client) => client.query("SELECT 1"));
  } catch (err) {
    throw new Error(
      [
        `The PostgreSQL storage tests need PostgreSQL at 127.0.0.1:5432 (database "test", user`,
        `"postgres", trust auth), or a server named by TEST_DATABASE_URL. Connecting to`,
        `${TEST_DATABASE_URL} failed: ${(err as Error).message}.`,
        "Start the local cluster with:",
        "  pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start",
      ].join("\n"),
    );
  }
}

export async function dropSchema(schema: string): Promise<void> {
  await withClient((client) => client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`));
  created.delete(schema);
}

export async function dropLeftoverSchemas(): Promise<void> {
  for (const schema of [...created]) await dropSchema(schema);
}

/** A storage in a fresh schema that it drops (CASCADE) on close, through its own pool. */
export class DisposablePostgresStorage extends PostgresStorage {
  override async close(): Promise<void> {
    if (await this.ping()) {
      await this.database.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`);
      created.delete(this.schema);
    }
    await super.close();
  }
}

export async function openDisposable(
  poolSize = 4,
  options: { writesPerGroup?: number; groupBudgetMs?: number } = {},
): Promise<DisposablePostgresStorage> {
  const storage = new DisposablePostgresStorage({
    url: TEST_DATABASE_URL,
    schema: newSchemaName(),
    poolSize,
    ...options,
  });
  await storage.open();
  return storage;
}
