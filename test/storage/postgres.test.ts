import { afterAll, describe, expect, it } from "vitest";
import { createStorage } from "../../src/storage/index.js";
import { loadMigrations } from "../../src/storage/postgres/migrate.js";
import { PostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import type { RunRecord } from "../../src/storage/types.js";
import {
  expectDomainError,
  id,
  makeRun,
  makeThread,
  messages,
  trickyJson,
} from "./contract/helpers.js";
import {
  dropLeftoverSchemas,
  dropSchema,
  newSchemaName,
  openDisposable,
  requirePostgres,
  TEST_DATABASE_URL,
} from "./pg-helpers.js";
import { describeStorageContract } from "./suite.js";

// Fails the whole file, loudly, when PostgreSQL is not there: these tests never skip.
await requirePostgres();
afterAll(dropLeftoverSchemas);

describeStorageContract("PostgreSQL", () => openDisposable());

/** Storages on one schema, as separate replicas would have them: one pool each. */
async function replicas(schema: string, count: number): Promise<PostgresStorage[]> {
  const storages = Array.from(
    { length: count },
    () => new PostgresStorage({ url: TEST_DATABASE_URL, schema, poolSize: 4 }),
  );
  await Promise.all(storages.map((s) => s.open()));
  return storages;
}

async function closeAll(storages: PostgresStorage[], schema: string): Promise<void> {
  await Promise.all(storages.map((s) => s.close()));
  await dropSchema(schema);
}

describe("PostgresStorage across replicas", () => {
  it("applies migrations once when three replicas open a new schema together", async () => {
    const schema = newSchemaName();
    const storages = Array.from(
      { length: 3 },
      () => new PostgresStorage({ url: TEST_DATABASE_URL, schema, poolSize: 2 }),
    );
    await Promise.all(storages.map((s) => s.open()));
    const names = loadMigrations().map((m) => m.name);
    const applied = storages.map((s) => s.appliedMigrations);
    expect(applied.filter((a) => a.length > 0)).toEqual([names]);
    expect(applied.filter((a) => a.length === 0)).toHaveLength(2);
    const recorded = await storages[0]!.database.query(
      "SELECT version, name FROM schema_migrations ORDER BY version",
    );
    expect(recorded.rows.map((r) => r.name)).toEqual(names);
    // Every replica works on the same tables.
    const thread = await makeThread(storages[1]!);
    expect(await storages[2]!.getThread(thread.thread_id)).toEqual(thread);
    await closeAll(storages, schema);
  });

  it("lets exactly one of two replicas win racing reject_if_busy inserts on a thread", async () => {
    const schema = newSchemaName();
    const [a, b] = (await replicas(schema, 2)) as [PostgresStorage, PostgresStorage];
    for (let i = 0; i < 20; i++) {
      const thread = await makeThread(a);
      const results = await Promise.allSettled([
        makeRun(a, thread.thread_id, {}, true),
        makeRun(b, thread.thread_id, {}, true),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const [lost] = results.filter((r) => r.status === "rejected");
      expect((lost as PromiseRejectedResult).reason).toMatchObject({ code: "conflict" });
      expect(await b.pendingRunsOfThread(thread.thread_id)).toHaveLength(1);
    }
    await closeAll([a, b], schema);
  });

  it("hands each runnable run to exactly one of two replicas claiming concurrently", async () => {
    const schema = newSchemaName();
    const [a, b] = (await replicas(schema, 2)) as [PostgresStorage, PostgresStorage];
    const runnable: string[] = [];
    const queued: string[] = [];
    for (let i = 0; i < 50; i++) {
      const thread = await makeThread(a);
      runnable.push((await makeRun(a, thread.thread_id)).run_id);
      // Every fifth thread has a second run, which must wait for the first one to finish.
      if (i % 5 === 0) queued.push((await makeRun(a, thread.thread_id)).run_id);
    }
    const now = new Date();
    const claimer = async (storage: PostgresStorage, owner: string) => {
      const won: RunRecord[] = [];
      for (;;) {
        const run = await storage.claimRun(owner, 60_000, now);
        if (run === null) return won;
        won.push(run);
      }
    };
    const claims = await Promise.all([
      ...[0, 1, 2, 3].map((i) => claimer(a, `a${i}`)),
      ...[0, 1, 2, 3].map((i) => claimer(b, `b${i}`)),
    ]);
    const claimed = claims.flat();
    expect(claimed.map((r) => r.run_id).sort()).toEqual([...runnable].sort());
    // Both replicas took part.
    expect(claims.slice(0, 4).flat().length).toBeGreaterThan(0);
    expect(claims.slice(4).flat().length).toBeGreaterThan(0);
    for (const run of claimed) {
      expect((await b.getRun(run.run_id))?.owner).toBe(run.owner);
    }
    for (const runId of queued) expect((await a.getRun(runId))?.owner).toBeNull();
    await closeAll([a, b], schema);
  });

  it("keeps threads, checkpoints, runs and frames across close and reopen", async () => {
    const schema = newSchemaName();
    const [first] = (await replicas(schema, 1)) as [PostgresStorage];
    expect(first.appliedMigrations).toEqual(loadMigrations().map((m) => m.name));
    const thread = await makeThread(first, trickyJson());
    const cp1 = await first.addCheckpoint(thread.thread_id, {
      checkpoint_id: id(),
      values: { n: 1, nested: trickyJson() },
      messages: messages("hi"),
      metadata: { source: "step", step: "agent" },
    });
    const cp2 = await first.addCheckpoint(thread.thread_id, {
      checkpoint_id: id(),
      values: { n: 2 },
      messages: messages("hi", "there"),
      metadata: { source: "run" },
    });
    const run = await makeRun(first, thread.thread_id, { metadata: { who: "me" } });
    await first.appendFrames([
      { run_id: run.run_id, seq: 1, mode: "values", data: '{"a":1}' },
      { run_id: run.run_id, seq: 2, mode: "final", data: '{"b":2}' },
    ]);
    const finished = await first.updateRun(run.run_id, {
      status: "success",
      output: { type: "result", values: { n: 2 } },
    });
    const threadBefore = await first.getThread(thread.thread_id);
    await first.close();

    const [second] = (await replicas(schema, 1)) as [PostgresStorage];
    expect(second.appliedMigrations).toEqual([]);
    expect(await second.getThread(thread.thread_id)).toEqual(threadBefore);
    expect(await second.listCheckpoints(thread.thread_id, { limit: 10 })).toEqual([cp2, cp1]);
    expect(await second.getRun(run.run_id)).toEqual({ ...finished, last_seq: 2 });
    expect((await second.readFrames(run.run_id, 0)).map((f) => f.data)).toEqual([
      '{"a":1}',
      '{"b":2}',
    ]);
    const found = await second.searchThreads({
      metadata: { "a.b": "dotted" },
      limit: 10,
      offset: 0,
    });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    await closeAll([second], schema);
  });
});

describe("PostgresStorage connections", () => {
  it("sets search_path to the schema on every pooled connection", async () => {
    const storage = await openDisposable(4);
    const schemas = await Promise.all(
      Array.from({ length: 8 }, () =>
        storage.database.query<{ schema: string }>(
          "SELECT current_schema() AS schema, pg_sleep(0.02)",
        ),
      ),
    );
    expect(new Set(schemas.map((r) => r.rows[0]?.schema))).toEqual(new Set([storage.schema]));
    await storage.close();
  });

  it("keeps each schema's data to itself", async () => {
    const a = await openDisposable(2);
    const b = await openDisposable(2);
    const thread = await makeThread(a, { where: "a" });
    expect(await b.getThread(thread.thread_id)).toBeNull();
    expect(await b.searchThreads({ limit: 10, offset: 0 })).toEqual([]);
    await a.close();
    await b.close();
  });

  it("answers a NUL character, which PostgreSQL text cannot hold, with an invalid error", async () => {
    const storage = await openDisposable(2);
    await expectDomainError(
      storage.createThread({ thread_id: "a\u0000b", metadata: {}, if_exists: "raise" }),
      "invalid",
    );
    await expectDomainError(storage.getThread("a\u0000b"), "invalid");
    // Escaped inside JSON it is ordinary data.
    const thread = await makeThread(storage, { text: "a\u0000b" });
    expect((await storage.getThread(thread.thread_id))?.metadata).toEqual({ text: "a\u0000b" });
    await storage.close();
  });

  it("refuses calls before open with a clear error", async () => {
    const storage = new PostgresStorage({ url: TEST_DATABASE_URL, schema: newSchemaName() });
    await expect(storage.getThread("x")).rejects.toThrow(/not open/);
    expect(await storage.ping()).toBe(false);
  });

  it("a close while it opens waits for the open, then closes the pool it opened", async () => {
    const storage = new PostgresStorage({ url: TEST_DATABASE_URL, schema: newSchemaName() });
    const opening = storage.open();
    await storage.close();
    await opening;
    expect(await storage.ping()).toBe(false);
    await expect(storage.getThread("x")).rejects.toThrow(/not open/);
  });
});

describe("PostgresStorage query plans", () => {
  it("counts an agent's queue from its pending runs alone, however many runs it finished", async () => {
    const storage = await openDisposable(8);
    const thread = await makeThread(storage);
    for (let batch = 0; batch < 10; batch++) {
      await Promise.all(
        Array.from({ length: 50 }, async () => {
          const run = await makeRun(storage, thread.thread_id);
          await storage.updateRun(run.run_id, { status: "success" });
        }),
      );
    }
    await storage.database.query("ANALYZE runs");
    // The count that run creation makes for the agent's queue limit (runs.ts), as a generic
    // plan: a prepared statement's plan once PostgreSQL stops planning it per call.
    const plan = await storage.database.transaction(async (db) => {
      await db.query(
        "PREPARE queue_count(text, integer) AS SELECT count(*) FROM (" +
          "SELECT 1 FROM runs WHERE agent_id = $1 AND status = 'pending' LIMIT $2) limited",
      );
      const explained = await db.query("EXPLAIN (FORMAT JSON) EXECUTE queue_count('agent-a', 100)");
      await db.query("DEALLOCATE queue_count");
      return JSON.stringify(explained.rows);
    }, "SET LOCAL plan_cache_mode = force_generic_plan");
    await storage.close();
    expect(plan).toContain('"Index Name":"runs_pending_by_agent"');
    // Not the index of every run the agent ever had, which grows with each run.
    expect(plan).not.toContain('"Index Name":"runs_by_agent"');
  });
});

describe("createStorage with PostgreSQL URLs", () => {
  it("chooses PostgreSQL for postgres:// and postgresql:// URLs", () => {
    for (const url of ["postgres://u:p@db/acp", "postgresql://db/acp", "POSTGRES://db/acp"]) {
      const storage = createStorage(url);
      expect(storage, url).toBeInstanceOf(PostgresStorage);
      expect(storage.kind).toBe("postgres");
      expect((storage as PostgresStorage).schema).toBe("public");
    }
  });

  it("takes the schema from ?schema= and refuses names it cannot use as-is", () => {
    const storage = createStorage("postgres://db/acp?sslmode=disable&schema=tenant_1");
    expect((storage as PostgresStorage).schema).toBe("tenant_1");
    for (const schema of ["Upper", "a-b", "x;drop", "1abc", "a".repeat(64)]) {
      expect(() => createStorage(`postgres://db/acp?schema=${schema}`), schema).toThrow(
        /schema name/,
      );
    }
  });

  it("takes the connections per replica from ?pool_size= and refuses a size that is not one", async () => {
    const schema = newSchemaName();
    const url = new URL(TEST_DATABASE_URL);
    url.searchParams.set("schema", schema);
    url.searchParams.set("pool_size", "3");
    const storage = createStorage(url.toString()) as PostgresStorage;
    await storage.open();
    // Ours, not pg's: taken out of the URL pg gets, and used for the pool.
    expect(storage.database.pool.options.max).toBe(3);
    expect(await storage.ping()).toBe(true);
    await storage.close();
    await dropSchema(schema);
    for (const size of ["0", "-1", "2.5", "ten", "", "1001", "99999"]) {
      expect(() => createStorage(`postgres://db/acp?pool_size=${size}`), size).toThrow(
        /pool_size .* whole number of connections from 1 to 1000/,
      );
    }
  });

  it("opens a working storage in the schema the URL names, creating it", async () => {
    const schema = newSchemaName();
    const url = new URL(TEST_DATABASE_URL);
    url.searchParams.set("schema", schema);
    const storage = createStorage(url.toString());
    await storage.open();
    expect(await storage.ping()).toBe(true);
    const thread = await makeThread(storage);
    const where = await (storage as PostgresStorage).database.query(
      "SELECT table_schema FROM information_schema.tables WHERE table_name = 'threads' AND table_schema = $1",
      [schema],
    );
    expect(where.rowCount).toBe(1);
    expect((await storage.getThread(thread.thread_id))?.thread_id).toBe(thread.thread_id);
    await storage.close();
    await dropSchema(schema);
  });
});
