import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pg from "pg";
import { afterAll, beforeAll } from "vitest";

const root = resolve(import.meta.dirname, "../..");
export const PG_URL = process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/test";

/** Fails loudly (never skips) when the PostgreSQL these tests need is not there. */
export async function requirePostgres(): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  try {
    await client.connect();
    await client.query("SELECT 1");
  } catch (err) {
    throw new Error(
      `the multi-replica tests need PostgreSQL at ${PG_URL} (set TEST_DATABASE_URL, or start it: ` +
        `pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql) main start): ${(err as Error).message}`,
    );
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await client.end();
}

export async function query<T extends pg.QueryResultRow>(
  schema: string,
  sql: string,
  values: unknown[] = [],
) {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    await client.query(`SET search_path TO ${schema}`);
    return (await client.query<T>(sql, values)).rows;
  } finally {
    await client.end();
  }
}

export interface Replica {
  name: string;
  url: string;
  replicaId: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
}

/** Starts one server process (the real CLI) on a free port against the shared schema. */
export function startReplica(
  name: string,
  configFile: string,
  databaseUrl: string,
): Promise<Replica> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "src/cli.ts",
      "serve",
      "--config",
      configFile,
      "--port",
      "0",
      "--db",
      databaseUrl,
    ],
    { cwd: root, env: { ...process.env, LOG_LEVEL: "info" }, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  child.stdout!.on("data", (chunk) => (out += chunk));
  child.stderr!.on("data", (chunk) => (out += chunk));
  const exited = new Promise<number | null>((done) => child.on("exit", (code) => done(code)));
  return new Promise((resolveReplica, reject) => {
    const check = () => {
      const lines = out.split("\n");
      const listening = lines.find((l) => l.includes('"acp-agui listening"'));
      if (!listening) return;
      child.stdout!.off("data", check);
      resolveReplica({
        name,
        url: (JSON.parse(listening) as { url: string }).url,
        replicaId: (JSON.parse(listening) as { replica: string }).replica,
        child,
        exited,
        output: () => out,
      });
    };
    child.stdout!.on("data", check);
    void exited.then((code) => reject(new Error(`replica ${name} exited with ${code}:\n${out}`)));
  });
}

export function writeConfig(yaml: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "acp-scale-")), "config.yaml");
  writeFileSync(file, yaml);
  return file;
}

export async function json(
  url: string,
  method = "GET",
  body?: unknown,
  headers: Record<string, string> = {},
) {
  const res = await fetch(url, {
    method,
    headers: body === undefined ? headers : { "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text === "" ? undefined : (JSON.parse(text) as unknown) };
}

export async function until<T>(
  fn: () => Promise<T | undefined | false>,
  timeoutMs: number,
  what: string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await fn();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A scripted run of `steps` text deltas: slow with the adapter's `delayMs`. */
export const slowEvents = (steps: number) => [
  { type: "RUN_STARTED", threadId: "t", runId: "r" },
  { type: "TEXT_MESSAGE_START", messageId: "m", role: "assistant" },
  ...Array.from({ length: steps }, (_, i) => ({
    type: "TEXT_MESSAGE_CONTENT",
    messageId: "m",
    delta: `w${i} `,
  })),
  { type: "TEXT_MESSAGE_END", messageId: "m" },
  { type: "RUN_FINISHED", threadId: "t", runId: "r" },
];

/**
 * Replicas (CLI processes, "A" and "B") serving `configYaml` on a schema of their own in the
 * test PostgreSQL: started before the suite's tests (failing loudly without PostgreSQL),
 * killed and their schema dropped after them. The array is filled once they are up.
 */
export function replicasOfSuite(schemaPrefix: string, configYaml: string): Replica[] {
  const schema = `${schemaPrefix}_${randomBytes(4).toString("hex")}`;
  const replicas: Replica[] = [];
  beforeAll(async () => {
    await requirePostgres();
    const config = writeConfig(configYaml);
    const databaseUrl = `${PG_URL}?schema=${schema}`;
    replicas.push(
      ...(await Promise.all(["A", "B"].map((name) => startReplica(name, config, databaseUrl)))),
    );
  }, 60_000);
  afterAll(async () => {
    for (const replica of replicas) replica.child.kill("SIGKILL");
    await Promise.all(replicas.map((replica) => replica.exited));
    await dropSchema(schema);
  });
  return replicas;
}
