import pino from "pino";
import { Registry } from "prom-client";
import { afterAll, describe, expect, it } from "vitest";
import { RetentionMetrics } from "../../src/retention/metrics.js";
import { RETENTION_DEFAULTS, type RetentionSettings } from "../../src/retention/settings.js";
import { RetentionSweeper } from "../../src/retention/sweeper.js";
import { SqliteStorage } from "../../src/storage/index.js";
import { PostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import type { RunRecord, Storage } from "../../src/storage/types.js";
import { id, makeRun, makeThread, PAST, sleep } from "../storage/contract/helpers.js";
import {
  dropLeftoverSchemas,
  dropSchema,
  newSchemaName,
  requirePostgres,
  TEST_DATABASE_URL,
} from "../storage/pg-helpers.js";

await requirePostgres();
afterAll(dropLeftoverSchemas);

const logger = pino({ level: "silent" });

const settings = (over: Partial<RetentionSettings>): RetentionSettings => ({
  ...RETENTION_DEFAULTS,
  ...over,
});

async function finishedStateless(storage: Storage): Promise<RunRecord> {
  const run = await storage.insertRun(
    {
      run_id: id(),
      thread_id: id(),
      agent_id: "agent-a",
      kind: "stateless",
      creation: {},
      metadata: {},
      start_after: PAST,
    },
    { reject_if_busy: false, create_hidden_thread: true },
  );
  await storage.appendFrames([
    { run_id: run.run_id, seq: 1, mode: "values", data: '{"a":1}' },
    { run_id: run.run_id, seq: 2, mode: "final", data: '{"b":2}' },
  ]);
  return storage.finishRun(run.run_id, { status: "success", output: {} }, { delete: true });
}

async function finishedStateful(storage: Storage): Promise<RunRecord> {
  const thread = await makeThread(storage);
  const run = await makeRun(storage, thread.thread_id);
  await storage.appendFrames([
    { run_id: run.run_id, seq: 1, mode: "values", data: '{"a":1}' },
    { run_id: run.run_id, seq: 2, mode: "final", data: '{"b":2}' },
  ]);
  return storage.updateRun(run.run_id, { status: "success", output: {} });
}

/** What a counter of the registry adds up to, for the labels given. */
async function counted(registry: Registry, name: string, labels: Record<string, string> = {}) {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  return (metric?.values ?? [])
    .filter((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))
    .reduce((sum, v) => sum + v.value, 0);
}

describe("RetentionSweeper", () => {
  it("runs every rule in batches until done, and counts what it removed", async () => {
    const storage = new SqliteStorage({ path: ":memory:" });
    await storage.open();
    const stateless = await Promise.all(
      Array.from({ length: 5 }, () => finishedStateless(storage)),
    );
    const stateful = await Promise.all(Array.from({ length: 3 }, () => finishedStateful(storage)));
    const registry = new Registry();
    const later = new Date(Date.now() + 60_000);
    const sweeper = new RetentionSweeper({
      storage,
      logger,
      settings: settings({ finishedStatelessRuns: 30, frames: 30, batchSize: 2 }),
      metrics: new RetentionMetrics(registry),
      now: () => later,
    });
    const report = await sweeper.sweep();
    // Stateless: 2 + 2 + 1; frames: 2 + 1 (the stateless runs are gone by then).
    expect(report?.batches).toBe(5);
    expect(report?.removed.finishedStatelessRuns).toMatchObject({ runs: 5, frames: 10 });
    expect(report?.removed.frames).toMatchObject({ frames: 3, runs: 0 });
    for (const run of stateless) expect(await storage.getRun(run.run_id)).toBeNull();
    for (const run of stateful) {
      expect((await storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([2]);
    }
    expect(
      await counted(registry, "acp_retention_rows_removed_total", {
        rule: "finishedStatelessRuns",
        kind: "runs",
      }),
    ).toBe(5);
    expect(
      await counted(registry, "acp_retention_rows_removed_total", {
        rule: "frames",
        kind: "frames",
      }),
    ).toBe(3);
    expect(await counted(registry, "acp_retention_bytes_removed_total")).toBeGreaterThan(0);
    expect(await counted(registry, "acp_retention_sweeps_total", { result: "swept" })).toBe(1);
    // One sweep observed: the histogram's count line says 1.
    const exposition = await registry.metrics();
    expect(exposition).toMatch(/^acp_retention_sweep_duration_seconds_count 1$/m);
    await storage.close();
  });

  it("sweeps on its timer once started, and stop() ends it", async () => {
    const storage = new SqliteStorage({ path: ":memory:" });
    await storage.open();
    const sweeper = new RetentionSweeper({
      storage,
      logger,
      settings: settings({ finishedStatelessRuns: 0.05, sweepInterval: 0.05 }),
    });
    sweeper.start();
    const run = await finishedStateless(storage);
    const deadline = Date.now() + 5000;
    while ((await storage.getRun(run.run_id)) !== null && Date.now() < deadline) await sleep(20);
    expect(await storage.getRun(run.run_id)).toBeNull();
    await sweeper.stop();
    // Stopped: a run that ends now stays.
    const after = await finishedStateless(storage);
    await sleep(300);
    expect(await storage.getRun(after.run_id)).not.toBeNull();
    await storage.close();
  });

  it("on PostgreSQL, sweeps on one replica at a time", async () => {
    const schema = newSchemaName();
    const replicas = [0, 1].map(
      () => new PostgresStorage({ url: TEST_DATABASE_URL, schema, poolSize: 3 }),
    );
    await Promise.all(replicas.map((r) => r.open()));
    try {
      const [a, b] = replicas as [PostgresStorage, PostgresStorage];
      const runs = await Promise.all(Array.from({ length: 3 }, () => finishedStateless(a)));
      const later = new Date(Date.now() + 60_000);
      const registries = [new Registry(), new Registry()];
      const sweepers = replicas.map(
        (storage, i) =>
          new RetentionSweeper({
            storage,
            logger,
            settings: settings({ finishedStatelessRuns: 30 }),
            metrics: new RetentionMetrics(registries[i]!),
            now: () => later,
          }),
      );
      // Replica A is in the middle of a sweep: B's finds the lock taken and does nothing.
      let release!: () => void;
      const held = new Promise<void>((resolve) => {
        release = resolve;
      });
      let entered!: () => void;
      const inside = new Promise<void>((resolve) => {
        entered = resolve;
      });
      const sweepA = a.retention().exclusively(async () => {
        entered();
        await held;
      });
      await inside;
      expect(await sweepers[1]!.sweep()).toBeNull();
      expect(
        await counted(registries[1]!, "acp_retention_sweeps_total", { result: "skipped" }),
      ).toBe(1);
      for (const run of runs) expect(await b.getRun(run.run_id)).not.toBeNull();
      release();
      expect(await sweepA).toBe(true);
      // Lock released: the next sweep, from either replica, works.
      const report = await sweepers[1]!.sweep();
      expect(report?.removed.finishedStatelessRuns.runs).toBe(3);
      for (const run of runs) expect(await a.getRun(run.run_id)).toBeNull();
      // Two replicas starting a sweep together, each taking a while: exactly one runs it.
      let swept = 0;
      const together = await Promise.all(
        replicas.map((r) =>
          r.retention().exclusively(async () => {
            swept += 1;
            await sleep(200);
          }),
        ),
      );
      expect(together.filter(Boolean)).toHaveLength(1);
      expect(swept).toBe(1);
    } finally {
      await Promise.all(replicas.map((r) => r.close()));
      await dropSchema(schema);
    }
  });
});
