/**
 * claimRun latency and appendFrames throughput, SQLite vs PostgreSQL (not part of `vitest run`):
 *
 *   npx tsx test/storage/storage-bench.ts
 *   RUNS=2000 FRAMES=50000 npx tsx test/storage/storage-bench.ts
 *   TEST_DATABASE_URL=postgres://… npx tsx test/storage/storage-bench.ts
 *
 * claimRun: RUNS pending runs on as many threads, claimed one after another by one caller (each
 * claim sees the rest of the queue still pending); prints p50/p95/max. appendFrames: FRAMES
 * frames of ~200 bytes into one run, in batches of 1 (a tenth of FRAMES: one commit each), 32
 * and 512 (the frame writer's maximum); prints frames per second. SQLite is a WAL file in .tmp/ (what a server uses); PostgreSQL is
 * a fresh schema on TEST_DATABASE_URL, dropped afterwards.
 */
import { mkdirSync, rmSync } from "node:fs";
import { PostgresStorage } from "../../src/storage/postgres/postgres-storage.js";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";
import type { RunFrame, Storage } from "../../src/storage/types.js";
import { makeRun, makeThread } from "./contract/helpers.js";
import { newSchemaName, requirePostgres, TEST_DATABASE_URL } from "./pg-helpers.js";

const runs = Number(process.env.RUNS ?? 1000);
const frames = Number(process.env.FRAMES ?? 20_000);
const BATCHES = [1, 32, 512];

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;

async function bench(name: string, storage: Storage): Promise<void> {
  for (let i = 0; i < runs; i++) await makeRun(storage, (await makeThread(storage)).thread_id);
  const times: number[] = [];
  const now = new Date();
  for (;;) {
    const started = performance.now();
    const run = await storage.claimRun("bench", 60_000, now);
    if (run === null) break;
    times.push(performance.now() - started);
  }
  if (times.length !== runs) throw new Error(`${name}: claimed ${times.length} of ${runs}`);
  times.sort((a, b) => a - b);
  const ms = (v: number) => `${v.toFixed(3)} ms`;
  console.log(
    `${name.padEnd(10)} claimRun (${runs} runs)  p50 ${ms(percentile(times, 50))}  p95 ${ms(percentile(times, 95))}  max ${ms(times.at(-1) ?? 0)}`,
  );

  const data = JSON.stringify({ type: "TEXT_MESSAGE_CONTENT", delta: "x".repeat(150) });
  for (const batch of BATCHES) {
    const thread = await makeThread(storage);
    const runId = (await makeRun(storage, thread.thread_id)).run_id;
    const total = batch === 1 ? Math.ceil(frames / 10) : frames;
    let seq = 0;
    const started = performance.now();
    while (seq < total) {
      const chunk: RunFrame[] = [];
      for (let i = 0; i < batch && seq < total; i++) {
        chunk.push({ run_id: runId, seq: ++seq, mode: "custom", data });
      }
      await storage.appendFrames(chunk);
    }
    const seconds = (performance.now() - started) / 1000;
    const rate = Math.round(total / seconds).toLocaleString("en-US");
    console.log(
      `${name.padEnd(10)} appendFrames batch ${String(batch).padStart(3)}  ${rate} frames/s (${(seconds * 1000).toFixed(0)} ms)`,
    );
  }
}

mkdirSync(".tmp", { recursive: true });
const path = ".tmp/storage-bench.db";
for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });
const sqlite = new SqliteStorage({ path });
await sqlite.open();
await bench("SQLite", sqlite);
await sqlite.close();

await requirePostgres();
const schema = newSchemaName();
const postgres = new PostgresStorage({ url: TEST_DATABASE_URL, schema });
await postgres.open();
try {
  await bench("PostgreSQL", postgres);
} finally {
  await postgres.database.query(`DROP SCHEMA ${schema} CASCADE`);
  await postgres.close();
}
