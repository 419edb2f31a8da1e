import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStorage } from "../../src/storage/index.js";
import type { RunFrame } from "../../src/storage/types.js";
import { expectDomainError, id, makeRun, makeThread } from "./contract/helpers.js";

/** Frame data of `chars` characters that DEFLATE cannot shrink much (frame pages are deflated). */
const incompressible = (chars: number) =>
  randomBytes(Math.ceil((chars * 3) / 4))
    .toString("base64")
    .slice(0, chars);

// The SQLite write path, beyond what the contract suite can see: group commit (the writes of one
// event-loop turn share a transaction, each in its own savepoint: group-commit.ts), multi-row
// frame inserts, and WAL checkpoints from a worker thread (checkpointer.ts).

const dir = mkdtempSync(join(tmpdir(), "acp-sqlite-writes-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function open(): Promise<{ storage: SqliteStorage; path: string }> {
  const path = join(dir, `${id()}.db`);
  const storage = new SqliteStorage({ path });
  await storage.open();
  return { storage, path };
}

const frame = (runId: string, seq: number): RunFrame => ({
  run_id: runId,
  seq,
  mode: "custom",
  data: `{"n":${seq}}`,
});

describe("SQLite write path", () => {
  it("commits the writes of one turn together and fails only the one that broke", async () => {
    const { storage } = await open();
    const thread = await makeThread(storage);
    const run = await makeRun(storage, thread.thread_id);
    // Issued in one turn: they land in one group.
    const results = await Promise.allSettled([
      storage.appendFrames([frame(run.run_id, 1), frame(run.run_id, 2)]),
      // A batch whose second frame repeats a seq of the first write: it fails as a whole.
      storage.appendFrames([frame(run.run_id, 3), frame(run.run_id, 1)]),
      storage.setThreadStatus(thread.thread_id, "busy"),
      storage.deleteThread(id()),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
    ]);
    await expectDomainError(
      Promise.reject((results[1] as PromiseRejectedResult).reason),
      "conflict",
    );
    await expectDomainError(
      Promise.reject((results[3] as PromiseRejectedResult).reason),
      "not_found",
    );
    // Frame 3 was rolled back with its failed batch; the others are stored.
    expect((await storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1, 2]);
    expect((await storage.getRun(run.run_id))?.last_seq).toBe(2);
    expect((await storage.getThread(thread.thread_id))?.status).toBe("busy");
    await storage.close();
  });

  it("rejects every write of a group the disk cannot hold, and commits the next once there is room", async () => {
    const { storage } = await open();
    const thread = await makeThread(storage);
    const run = await makeRun(storage, thread.thread_id);
    const db = storage.database;
    // A real SQLITE_FULL: the file may not grow by a page. SQLite then rolls back the whole
    // transaction, so the small writes grouped with the big one fail with it.
    db.pragma(`max_page_count = ${db.pragma("page_count", { simple: true })}`);
    const big = (seq: number) => ({ ...frame(run.run_id, seq), data: incompressible(100_000) });
    const results = await Promise.allSettled([
      storage.appendFrames([frame(run.run_id, 1)]),
      storage.appendFrames([big(2)]),
      storage.setThreadStatus(thread.thread_id, "busy"),
    ]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected", "rejected"]);
    for (const result of results) {
      expect((result as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_FULL" });
    }
    expect(await storage.readFrames(run.run_id, 0)).toEqual([]);
    expect((await storage.getThread(thread.thread_id))?.status).toBe("idle");
    // Reads go on; writes succeed again once the file may grow.
    db.pragma("max_page_count = 1073741823");
    await storage.appendFrames([frame(run.run_id, 1), big(2)]);
    expect((await storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1, 2]);
    await storage.close();
  });

  it("rejects the writes of a group whose transaction cannot begin, and commits the next", async () => {
    const { storage, path } = await open();
    const thread = await makeThread(storage);
    const run = await makeRun(storage, thread.thread_id);
    // Another connection (an operator's sqlite3) holds the write lock past the busy timeout.
    storage.database.pragma("busy_timeout = 50");
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    const results = await Promise.allSettled([
      storage.appendFrames([frame(run.run_id, 1)]),
      storage.setThreadStatus(thread.thread_id, "busy"),
    ]);
    other.exec("ROLLBACK");
    other.close();
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({ code: "SQLITE_BUSY" });
    await Promise.all([
      storage.appendFrames([frame(run.run_id, 1)]),
      storage.setThreadStatus(thread.thread_id, "busy"),
    ]);
    expect((await storage.readFrames(run.run_id, 0)).map((f) => f.seq)).toEqual([1]);
    await storage.close();
  });

  it("closes cleanly even when the disk is full", async () => {
    const { storage, path } = await open();
    const thread = await makeThread(storage);
    const db = storage.database;
    db.pragma(`max_page_count = ${db.pragma("page_count", { simple: true })}`);
    const refused = storage.appendFrames([
      { run_id: id(), seq: 1, mode: "custom", data: incompressible(100_000) },
    ]);
    await storage.close();
    await expect(refused).rejects.toBeDefined();
    expect(await storage.ping()).toBe(false);
    // The file was given up: it opens again, with what was committed.
    const reopened = new SqliteStorage({ path });
    await reopened.open();
    expect((await reopened.getThread(thread.thread_id))?.thread_id).toBe(thread.thread_id);
    await reopened.close();
  });

  it("resolves a write only once it is committed, visible to another connection", async () => {
    const { storage, path } = await open();
    const thread = await makeThread(storage);
    const writes = Array.from({ length: 20 }, () => makeRun(storage, thread.thread_id));
    const runs = await Promise.all(writes);
    const other = new Database(path, { readonly: true });
    try {
      const count = other.prepare("SELECT count(*) AS n FROM runs").get() as { n: number };
      expect(count.n).toBe(runs.length);
    } finally {
      other.close();
    }
    await storage.close();
  });

  it("stores long frame batches (multi-row inserts) in order and names a duplicate", async () => {
    const { storage } = await open();
    const thread = await makeThread(storage);
    const run = await makeRun(storage, thread.thread_id);
    const frames = Array.from({ length: 200 }, (_, i) => frame(run.run_id, i + 1));
    await storage.appendFrames(frames);
    const stored = await storage.readFrames(run.run_id, 0);
    expect(stored.map((f) => f.seq)).toEqual(frames.map((f) => f.seq));
    expect(stored[150]).toEqual(frames[150]);
    // A duplicate inside the first 64 rows: the multi-row insert fails, the row path names it.
    const again = Array.from({ length: 100 }, (_, i) => frame(run.run_id, 201 + i));
    again[10] = frame(run.run_id, 5);
    await expectDomainError(storage.appendFrames(again), "conflict");
    expect((await storage.readFrames(run.run_id, 200)).length).toBe(0);
    await storage.close();
  });

  it("commits what is queued when the storage closes", async () => {
    const { storage, path } = await open();
    const thread = await makeThread(storage);
    const pending = makeRun(storage, thread.thread_id);
    await storage.close();
    const run = await pending;
    const reopened = new SqliteStorage({ path });
    await reopened.open();
    expect((await reopened.getRun(run.run_id))?.run_id).toBe(run.run_id);
    await reopened.close();
  });

  it("copies a grown WAL back into the database file from the checkpoint worker", async () => {
    const { storage, path } = await open();
    const thread = await makeThread(storage);
    const run = await makeRun(storage, thread.thread_id);
    const size = () => statSync(path).size;
    const before = size();
    // ~6 MB of frames (8 MB of base64, deflated): past the worker's 4 MB threshold, far below
    // the connection's own automatic checkpoint (10,000 pages), so only the worker can have
    // moved them.
    const data = incompressible(5400 * 1500);
    for (let batch = 0; batch < 3; batch++) {
      const frames = Array.from({ length: 500 }, (_, i) => ({
        ...frame(run.run_id, batch * 500 + i + 1),
        data: data.slice((batch * 500 + i) * 5400, (batch * 500 + i + 1) * 5400),
      }));
      await storage.appendFrames(frames);
    }
    // A server under load keeps writing; the worker starts on a write once the WAL is large.
    const deadline = Date.now() + 10_000;
    for (let seq = 1501; size() < before + 4_000_000 && Date.now() < deadline; seq++) {
      await storage.appendFrames([frame(run.run_id, seq)]);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(size()).toBeGreaterThan(before + 4_000_000);
    expect((await storage.readFrames(run.run_id, 1499))[0]?.seq).toBe(1500);
    await storage.close();
  });
});
