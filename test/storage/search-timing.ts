/**
 * Thread search timings on a large SQLite database (not part of `vitest run`):
 *
 *   npx tsx test/storage/search-timing.ts            # 100,000 threads in .tmp/search-timing.db
 *   THREADS=20000 ITERATIONS=50 npx tsx test/storage/search-timing.ts
 *   REUSE=1 npx tsx test/storage/search-timing.ts    # time again on the file left by a run
 *                                                    # (close() ran PRAGMA optimize: analyzed)
 *
 * Every thread has metadata with common and rare keys, a nested object and a checkpoint (so
 * `values` is set); one in ten is hidden and three in four are not idle. Prints p50/p95 per filter.
 */
import { rmSync } from "node:fs";
import { SqliteStorage } from "../../src/storage/sqlite/sqlite-storage.js";
import type { ThreadSearch } from "../../src/storage/types.js";

const threads = Number(process.env.THREADS ?? 100_000);
const iterations = Number(process.env.ITERATIONS ?? 200);
const path = process.env.DB ?? ".tmp/search-timing.db";
const reuse = process.env.REUSE === "1";
if (!reuse) for (const file of [path, `${path}-wal`, `${path}-shm`]) rmSync(file, { force: true });

const storage = new SqliteStorage({ path });
await storage.open();
const statuses = ["idle", "busy", "interrupted", "error"] as const;
const started = performance.now();
for (let i = 0; i < (reuse ? 0 : threads); i++) {
  // Batches of writes in one transaction only to load faster; each call nests as a savepoint.
  if (i % 10_000 === 0) storage.database.exec("BEGIN");
  const threadId = `t${String(i).padStart(7, "0")}`;
  const metadata: Record<string, unknown> = {
    user: `u${i % 1000}`,
    env: i % 2 ? "prod" : "dev",
    odd: i % 2 === 1,
    team: { name: `team${i % 50}`, tags: ["a", i % 3] },
    n: i,
  };
  if (i % 10_000 === 0) metadata.rare = "yes";
  await storage.createThread({
    thread_id: threadId,
    metadata,
    hidden: i % 10 === 9,
    if_exists: "raise",
  });
  await storage.addCheckpoint(threadId, {
    checkpoint_id: `c${i}`,
    values: { topic: `topic${i % 500}`, count: i % 7, notes: ["x", "y"] },
    messages: [{ role: "user", content: `message ${i}` }],
    metadata: { source: "run" },
  });
  const status = statuses[i % 4];
  if (status !== undefined && status !== "idle") await storage.setThreadStatus(threadId, status);
  if (i % 10_000 === 9_999 || i === threads - 1) storage.database.exec("COMMIT");
}
if (!reuse)
  console.log(
    `loaded ${threads} threads in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

const cases: [string, Partial<ThreadSearch>][] = [
  ["no filter", {}],
  ["metadata user=u42 (~90 hits)", { metadata: { user: "u42" } }],
  ["metadata env=prod (~45% of threads)", { metadata: { env: "prod" } }],
  ["metadata env=prod, offset 10,000", { metadata: { env: "prod" }, offset: 10_000 }],
  ["metadata env=prod + user=u43", { metadata: { env: "prod", user: "u43" } }],
  [
    "metadata nested team (~2% of threads)",
    { metadata: { team: { tags: ["a", 0], name: "team6" } } },
  ],
  ["metadata rare=yes (10 hits)", { metadata: { rare: "yes" } }],
  ["metadata key nobody has", { metadata: { nope: 1 } }],
  ["metadata env=dev + odd=true (0 hits, worst)", { metadata: { env: "dev", odd: true } }],
  ["status=busy + metadata env=prod", { status: "busy", metadata: { env: "prod" } }],
  ["status=busy + metadata user=u5", { status: "busy", metadata: { user: "u5" } }],
  ["values topic=topic7 (scan)", { values: { topic: "topic7" } }],
];

for (const [label, search] of cases) {
  const query: ThreadSearch = { limit: 10, offset: 0, ...search };
  let rows = (await storage.searchThreads(query)).length;
  const times: number[] = [];
  for (let i = 0; i < iterations; i++) {
    const t = performance.now();
    rows = (await storage.searchThreads(query)).length;
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  const at = (q: number) => (times[Math.floor(q * (times.length - 1))] ?? 0).toFixed(2);
  console.log(
    `${label.padEnd(46)} rows=${String(rows).padStart(2)}  p50=${at(0.5)} ms  p95=${at(0.95)} ms`,
  );
}
await storage.close();
