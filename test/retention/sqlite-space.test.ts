import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStorage } from "../../src/storage/index.js";
import { id, PAST } from "../storage/contract/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "acp-retention-space-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function open(path: string): Promise<SqliteStorage> {
  const storage = new SqliteStorage({ path });
  await storage.open();
  return storage;
}

/** Finished stateless runs of `frames` frames of ~`bytes` each, their threads already gone. */
async function finishedRuns(storage: SqliteStorage, runs: number, frames: number, bytes: number) {
  for (let r = 0; r < runs; r++) {
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
    await storage.appendFrames(
      Array.from({ length: frames }, (_, i) => ({
        run_id: run.run_id,
        seq: i + 1,
        mode: i === frames - 1 ? ("final" as const) : ("custom" as const),
        // Random text: frame pages are stored deflated, and repeated text would take no room.
        data: JSON.stringify({ i, text: randomBytes(bytes).toString("base64").slice(0, bytes) }),
      })),
    );
    await storage.finishRun(run.run_id, { status: "success", output: {} }, { delete: true });
  }
}

const fileBytes = (path: string) => statSync(path).size;

describe("SQLite space after retention", () => {
  it("makes new files with incremental auto-vacuum and gives the swept pages back", async () => {
    const path = join(dir, "fresh.db");
    const storage = await open(path);
    const db = storage.database;
    expect(db.pragma("auto_vacuum", { simple: true })).toBe(2);
    await finishedRuns(storage, 40, 10, 4000);
    db.pragma("wal_checkpoint(TRUNCATE)");
    const full = fileBytes(path);

    const batch = await storage
      .retention()
      .deleteFinishedStatelessRuns(new Date(Date.now() + 1000).toISOString(), 100);
    expect(batch.removed.runs).toBe(40);
    const free = db.pragma("freelist_count", { simple: true }) as number;
    expect(free).toBeGreaterThan(100);

    let released = 0;
    for (;;) {
      const step = await storage.retention().reclaimSpace(50);
      if (step === 0) break;
      released += step;
    }
    const pageSize = db.pragma("page_size", { simple: true }) as number;
    expect(released).toBe(free * pageSize);
    expect(db.pragma("freelist_count", { simple: true })).toBe(0);
    // The file shrinks once the WAL is copied back.
    db.pragma("wal_checkpoint(TRUNCATE)");
    expect(fileBytes(path)).toBeLessThanOrEqual(full - released);
    await storage.close();
  });

  it("keeps working on a file made before, reusing its free pages instead", async () => {
    const path = join(dir, "older.db");
    // A database file as an earlier version made it: auto-vacuum off, tables already there.
    const before = new Database(path);
    before.exec("CREATE TABLE leftover (x INTEGER)");
    before.close();
    const storage = await open(path);
    const db = storage.database;
    expect(db.pragma("auto_vacuum", { simple: true })).toBe(0);
    await finishedRuns(storage, 20, 10, 4000);
    const batch = await storage
      .retention()
      .deleteFinishedStatelessRuns(new Date(Date.now() + 1000).toISOString(), 100);
    expect(batch.removed.runs).toBe(20);
    expect(db.pragma("freelist_count", { simple: true })).toBeGreaterThan(0);
    expect(await storage.retention().reclaimSpace(1000)).toBe(0);
    db.pragma("wal_checkpoint(TRUNCATE)");
    const size = fileBytes(path);
    // The same amount again fits in the freed pages: the file does not grow.
    await finishedRuns(storage, 20, 10, 4000);
    db.pragma("wal_checkpoint(TRUNCATE)");
    expect(fileBytes(path)).toBeLessThanOrEqual(size * 1.1);
    await storage.close();
    // And it opens again as it was.
    const again = await open(path);
    expect(again.database.pragma("auto_vacuum", { simple: true })).toBe(0);
    expect(again.appliedMigrations).toEqual([]);
    await again.close();
  });
});
