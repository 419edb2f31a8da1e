import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { createStorage, SqliteStorage } from "../../src/storage/index.js";
import { loadMigrations } from "../../src/storage/sqlite/migrate.js";
import { DatabaseInUseError } from "../../src/storage/sqlite/owner-lock.js";
import { describeHeldNewThreadRuns } from "./contract/held-new-thread-runs.js";
import { id, makeRun, makeThread, messages, trickyJson } from "./contract/helpers.js";
import { describeStorageContract } from "./suite.js";

const dir = mkdtempSync(join(tmpdir(), "acp-sqlite-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const openStorage = async (path: string): Promise<SqliteStorage> => {
  const storage = new SqliteStorage({ path });
  await storage.open();
  return storage;
};

describeStorageContract("SQLite in memory", () => openStorage(":memory:"));
describeStorageContract("SQLite file", () => openStorage(join(dir, "contract", `${id()}.db`)));
// SQLite only: PostgreSQL writes a new thread's first run in two commits (insertRunOnNewThread).
describe("SQLite: a held run on a new thread", () =>
  describeHeldNewThreadRuns(() => openStorage(join(dir, "contract", `${id()}.db`))));

describe("SqliteStorage on a file", () => {
  it("creates parent directories and uses WAL with foreign keys on, savepoint journals in memory", async () => {
    const path = join(dir, "nested", "deeper", "wal.db");
    const storage = await openStorage(path);
    expect(storage.database.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(storage.database.pragma("foreign_keys", { simple: true })).toBe(1);
    expect(storage.database.pragma("synchronous", { simple: true })).toBe(1);
    expect(storage.database.pragma("busy_timeout", { simple: true })).toBe(5000);
    // 2 = MEMORY: a group commit's per-write savepoints copy pages to memory, not a temp file.
    expect(storage.database.pragma("temp_store", { simple: true })).toBe(2);
    await storage.close();
    expect(await storage.ping()).toBe(false);
  });

  it("keeps threads, checkpoints, runs and frames across close and reopen", async () => {
    const path = join(dir, "reopen.db");
    const first = await openStorage(path);
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
    const appliedAt = first.database
      .prepare("SELECT version, applied_at FROM schema_migrations ORDER BY version")
      .all();
    await first.close();

    const second = await openStorage(path);
    expect(second.appliedMigrations).toEqual([]);
    expect(
      second.database
        .prepare("SELECT version, applied_at FROM schema_migrations ORDER BY version")
        .all(),
    ).toEqual(appliedAt);
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
    expect(second.database.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(second.database.pragma("foreign_key_check")).toEqual([]);
    await second.close();

    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("integrity_check", { simple: true })).toBe("ok");
    raw.close();
  });

  it("refuses a second storage on a file another one has open, naming the owner, until the first closes", async () => {
    const path = join(dir, "owned.db");
    const first = await openStorage(path);
    const thread = await makeThread(first);
    const second = new SqliteStorage({ path });
    const refused = await second.open().then(
      () => null,
      (err: unknown) => err,
    );
    expect(refused).toBeInstanceOf(DatabaseInUseError);
    expect((refused as DatabaseInUseError).owner).toMatchObject({
      pid: process.pid,
      host: hostname(),
    });
    expect((refused as Error).message).toMatch(
      new RegExp(
        `^database file ${realpathSync(path)} is in use by another process \\(pid ${process.pid} on host ${hostname()}, since \\S+\\): `,
      ),
    );
    expect(await second.ping()).toBe(false);
    // The owner goes on as if nothing happened.
    expect(await first.ping()).toBe(true);
    await makeRun(first, thread.thread_id);
    // Through a symlink it is the same file, and the same lock.
    const link = join(dir, "owned-link.db");
    symlinkSync(path, link);
    await expect(new SqliteStorage({ path: link }).open()).rejects.toThrow(DatabaseInUseError);
    await first.close();

    await second.open();
    expect((await second.getThread(thread.thread_id))?.thread_id).toBe(thread.thread_id);
    await second.close();
  });

  it("names the lock file when it cannot be opened", async () => {
    const path = join(dir, "unlockable.db");
    mkdirSync(`${path}-lock`);
    const storage = new SqliteStorage({ path });
    await expect(storage.open()).rejects.toThrow(
      `cannot open the lock file ${realpathSync(path)}-lock: `,
    );
    expect(await storage.ping()).toBe(false);
  });

  it("needs no owner for in-memory databases: each is its own", async () => {
    const a = await openStorage(":memory:");
    const b = await openStorage(":memory:");
    await makeThread(a);
    expect(await b.searchThreads({ limit: 10, offset: 0 })).toEqual([]);
    await a.close();
    await b.close();
  });

  it("refuses calls before open with a clear error", async () => {
    const storage = new SqliteStorage({ path: ":memory:" });
    await expect(storage.getThread("x")).rejects.toThrow(/not open/);
    expect(await storage.ping()).toBe(false);
  });
});

describe("SqliteStorage metadata search plans", () => {
  it("gives the same answers whether a key is selective (index-driven) or common (scan)", async () => {
    const storage = await openStorage(":memory:");
    // More threads share `common` than the selective-key threshold (5,000), so filters on it
    // take the newest-first scan; `group` keys stay selective and drive the query.
    for (let i = 0; i < 5_200; i++) {
      await storage.createThread({
        thread_id: `t${String(i).padStart(5, "0")}`,
        metadata: { common: true, parity: i % 2, group: `g${i % 100}`, nested: { m: i % 3 } },
        hidden: i % 7 === 0,
        if_exists: "raise",
      });
    }
    const all = await storage.searchThreads({ limit: 10_000, offset: 0 });
    expect(all).toHaveLength(5_200 - Math.ceil(5_200 / 7));
    const expected = (filter: (m: Record<string, unknown>) => boolean) =>
      all.filter((t) => filter(t.metadata)).map((t) => t.thread_id);
    const cases: [Record<string, unknown>, (m: Record<string, unknown>) => boolean][] = [
      [{ common: true }, () => true],
      [{ common: true, parity: 1 }, (m) => m.parity === 1],
      [
        { parity: 0, nested: { m: 2 } },
        (m) => m.parity === 0 && (m.nested as { m: number }).m === 2,
      ],
      [{ group: "g7" }, (m) => m.group === "g7"],
      [{ common: true, group: "g8", parity: 0 }, (m) => m.group === "g8"],
      [{ common: true, group: "g8", parity: 1 }, () => false],
      [{ common: false }, () => false],
    ];
    for (const [metadata, filter] of cases) {
      const want = expected(filter);
      for (const [limit, offset] of [
        [10, 0],
        [25, 40],
        [10_000, 0],
      ] as const) {
        const got = await storage.searchThreads({ metadata, limit, offset });
        expect(
          got.map((t) => t.thread_id),
          JSON.stringify({ metadata, limit, offset }),
        ).toEqual(want.slice(offset, offset + limit));
      }
    }
    await storage.close();
  });
});

describe("createStorage", () => {
  it("chooses SQLite for :memory:, plain paths and sqlite: URLs", () => {
    const cases: [string, string][] = [
      [":memory:", ":memory:"],
      ["sqlite::memory:", ":memory:"],
      ["./data/acp.db", "./data/acp.db"],
      ["/var/lib/acp/acp.db", "/var/lib/acp/acp.db"],
      ["sqlite:data/acp.db", "data/acp.db"],
      ["sqlite://data/acp.db", "data/acp.db"],
      ["sqlite:///var/lib/acp.db", "/var/lib/acp.db"],
    ];
    for (const [url, path] of cases) {
      const storage = createStorage(url);
      expect(storage, url).toBeInstanceOf(SqliteStorage);
      expect((storage as SqliteStorage).path, url).toBe(path);
      expect(storage.kind).toBe("sqlite");
    }
  });

  it("rejects empty URLs and unknown schemes", () => {
    expect(() => createStorage("")).toThrow(/empty/);
    expect(() => createStorage("sqlite:")).toThrow(/names no SQLite file/);
    expect(() => createStorage("mysql://db/acp")).toThrow(/unsupported storage URL scheme/);
  });

  it("opens a working storage", async () => {
    const storage = createStorage(`sqlite:${join(dir, "created.db")}`);
    await storage.open();
    expect(await storage.ping()).toBe(true);
    await storage.close();
  });
});
