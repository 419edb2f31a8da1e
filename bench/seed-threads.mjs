// Creates N threads directly through the storage API of the built server (dist/storage), in a
// SQLite file the benchmark then serves. Much faster than N HTTP calls: the creations are
// grouped in transactions of 20,000 (SEED_BATCH) (each createThread is the same call the HTTP route makes).
//
// Metadata of thread i: { user: "user-<i % 1000>", team: "team-<i % 10>", seq: i }
//   → a `user` filter matches 0.1 % of the threads, a `team` filter 10 %.
//
// Usage: node bench/seed-threads.mjs --db FILE --count N   (prints one JSON line)
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import { createStorage } from "../dist/storage/index.js";

const { values } = parseArgs({
  options: { db: { type: "string" }, count: { type: "string" } },
});
if (!values.db) throw new Error("--db is required");
const count = Number(values.count ?? 100_000);
const BATCH = Number(process.env.SEED_BATCH ?? 20000);

const t0 = performance.now();
const storage = createStorage(values.db);
await storage.open();
const db = storage.database;
let created = 0;
while (created < count) {
  const end = Math.min(count, created + BATCH);
  const start = created;
  // createThread is async by contract but synchronous inside (better-sqlite3), so every call
  // runs within this transaction; its own immediate transaction nests as a savepoint.
  const pending = [];
  db.transaction(() => {
    for (let i = start; i < end; i++) {
      pending.push(
        storage.createThread({
          thread_id: randomUUID(),
          metadata: { user: `user-${i % 1000}`, team: `team-${i % 10}`, seq: i },
          if_exists: "raise",
        }),
      );
    }
  })();
  await Promise.all(pending);
  created = end;
}
await storage.close();
process.stdout.write(
  `${JSON.stringify({ count: created, ms: Math.round(performance.now() - t0) })}\n`,
);
