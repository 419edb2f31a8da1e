/**
 * SQLite stores a run's frames in pages of consecutive frames (src/storage/sqlite/frame-pages.ts):
 * the page format itself, reads that start or stop inside a page, and the migration that turned
 * a database's row-per-frame log into pages.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStorage } from "../../src/storage/index.js";
import {
  DEFLATE_FROM_CHARS,
  PAGE_CHARS,
  PAGE_FRAMES,
  pageText,
  readPage,
  storedPageData,
  storedTextBytes,
  toPages,
} from "../../src/storage/sqlite/frame-pages.js";
import type { RunFrame } from "../../src/storage/types.js";
import { makeRun, makeThread } from "./contract/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "acp-frame-pages-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MODES: RunFrame["mode"][] = ["values", "custom", "subagent", "final"];
/** Data that a naive format would trip on: spaces, digits, line breaks, astral characters. */
const TRICKY = ["", " ", "12 c 3 ", "a\nb\r\n", "😀 é € \u2028", '{"x":"1 2 3"}', "v", "f 9 "];

const frames = (runId: string, count: number, from = 1): RunFrame[] =>
  Array.from({ length: count }, (_, i) => ({
    run_id: runId,
    seq: from + i,
    mode: MODES[i % MODES.length]!,
    data: `${TRICKY[i % TRICKY.length]}#${from + i}`,
  }));

const decode = (pages: ReturnType<typeof toPages>, afterSeq = 0, limit = Infinity) => {
  const out: RunFrame[] = [];
  for (const page of pages) {
    if (page.last_seq <= afterSeq) continue;
    readPage(page, afterSeq, out, limit);
    if (out.length >= limit) break;
  }
  return out;
};

describe("the page format", () => {
  it("reads back every frame as written, whatever its data", () => {
    for (const count of [1, 2, PAGE_FRAMES - 1, PAGE_FRAMES, PAGE_FRAMES + 1, 3 * PAGE_FRAMES]) {
      const written = frames("r", count);
      const pages = toPages("r", written);
      expect(pages.reduce((sum, page) => sum + page.frames, 0)).toBe(count);
      expect(pages.every((page) => page.frames <= PAGE_FRAMES)).toBe(true);
      expect(decode(pages)).toEqual(written);
    }
  });

  it("closes a page once its frames' data passes PAGE_CHARS, and keeps a large frame whole", () => {
    const big = "x".repeat(PAGE_CHARS * 2);
    const written: RunFrame[] = [
      { run_id: "r", seq: 1, mode: "custom", data: "small" },
      { run_id: "r", seq: 2, mode: "values", data: big },
      { run_id: "r", seq: 3, mode: "custom", data: "after" },
    ];
    const pages = toPages("r", written);
    expect(pages.map((page) => page.last_seq)).toEqual([2, 3]);
    expect(decode(pages)).toEqual(written);
  });

  it("stores a page deflated when that is shorter, and reads it back exactly", () => {
    const written = frames("r", 40);
    const pages = toPages("r", written);
    expect(pages.every((page) => Buffer.isBuffer(page.data))).toBe(true);
    expect(decode(pages)).toEqual(written);
    // Its text's UTF-8 bytes are known without inflating it (what retention reports removed).
    for (const page of pages) {
      expect(storedTextBytes(page.data)).toBe(Buffer.byteLength(pageText(page), "utf8"));
    }
    // Short pages and pages that do not shrink stay text.
    expect(storedPageData("x".repeat(DEFLATE_FROM_CHARS - 1))).toBe(
      "x".repeat(DEFLATE_FROM_CHARS - 1),
    );
    const random = Buffer.from(Array.from({ length: 600 }, (_, i) => (i * 7919) % 251)).toString(
      "latin1",
    );
    const noisy = Array.from({ length: 4 }, () => random).join("");
    const stored = storedPageData(noisy);
    expect(typeof stored === "string" || stored.length < Buffer.byteLength(noisy)).toBe(true);
    // A long page (past a short page's window) too.
    const long = toPages("r", [{ run_id: "r", seq: 1, mode: "custom", data: "ab😀".repeat(9000) }]);
    expect(Buffer.isBuffer(long[0]!.data)).toBe(true);
    expect(decode(long)[0]!.data).toBe("ab😀".repeat(9000));
    expect(storedTextBytes(long[0]!.data)).toBe(Buffer.byteLength(pageText(long[0]!)));
  });

  it("starts and stops inside a page", () => {
    const written = frames("r", 150);
    const pages = toPages("r", written);
    for (const [after, limit] of [
      [0, 1],
      [10, 5],
      [PAGE_FRAMES - 1, 2],
      [PAGE_FRAMES, 100],
      [149, 10],
      [150, 10],
    ] as const) {
      expect(decode(pages, after, limit)).toEqual(written.slice(after, after + limit));
    }
  });

  it("keeps gaps in the numbering", () => {
    const written = [1, 2, 5, 9, 10].map((seq) => ({
      run_id: "r",
      seq,
      mode: "custom" as const,
      data: `#${seq}`,
    }));
    expect(decode(toPages("r", written), 3)).toEqual(written.slice(2));
  });

  it("refuses a page that is not in the format, naming it", () => {
    const page = { run_id: "r", last_seq: 3, frames: 2, data: "1 c 900 short" };
    expect(() => readPage(page, 0, [], 10)).toThrow(/frame page 3 of run r/);
    expect(() => readPage({ ...page, data: "3 z x" }, 0, [], 10)).toThrow(/frame page 3/);
  });
});

describe("SQLite frame pages", () => {
  it("a long log is stored in pages and read after any seq, with any limit", async () => {
    const storage = new SqliteStorage({ path: join(dir, "pages.db") });
    await storage.open();
    const thread = await makeThread(storage);
    const run = await makeRun(storage, thread.thread_id);
    const written = frames(run.run_id, 300);
    // As the engine appends: batches of different sizes.
    for (const [from, to] of [
      [0, 1],
      [1, 70],
      [70, 71],
      [71, 300],
    ]) {
      await storage.appendFrames(written.slice(from, to));
    }
    const rows = storage.database
      .prepare<[string], { n: number; frames: number }>(
        "SELECT count(*) AS n, sum(frames) AS frames FROM run_frames WHERE run_id = ?",
      )
      .get(run.run_id)!;
    expect(rows.frames).toBe(300);
    expect(rows.n).toBeLessThan(20);
    expect(await storage.readFrames(run.run_id, 0)).toEqual(written);
    for (const after of [0, 1, 69, 70, 71, 200, 299, 300]) {
      expect(await storage.readFrames(run.run_id, after, 7)).toEqual(
        written.slice(after, after + 7),
      );
    }
    expect((await storage.getRun(run.run_id))?.last_seq).toBe(300);
    // An append must come after the run's last stored frame.
    await expect(storage.appendFrames(frames(run.run_id, 1, 150))).rejects.toMatchObject({
      code: "conflict",
    });
    await storage.close();
  });

  it("a database with a row per frame (before migration 007) reads the same after it", async () => {
    const path = join(dir, "older.db");
    const storage = new SqliteStorage({ path });
    await storage.open();
    const thread = await makeThread(storage);
    const run = await makeRun(storage, thread.thread_id);
    const other = await makeRun(storage, thread.thread_id);
    await storage.close();

    // The log as 001-initial.sql stored it, and the schema before 007.
    const written = [...frames(run.run_id, 20), ...frames(other.run_id, 3)];
    const raw = new Database(path);
    raw.exec(`DROP TABLE run_frames;
      CREATE TABLE run_frames (
        run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
        seq    INTEGER NOT NULL CHECK (seq > 0),
        mode   TEXT NOT NULL CHECK (mode IN ('values', 'custom', 'subagent', 'final')),
        data   TEXT NOT NULL,
        PRIMARY KEY (run_id, seq)
      ) WITHOUT ROWID;
      DELETE FROM schema_migrations WHERE version = 7;`);
    const insert = raw.prepare(
      "INSERT INTO run_frames (run_id, seq, mode, data) VALUES (?, ?, ?, ?)",
    );
    for (const f of written) insert.run(f.run_id, f.seq, f.mode, f.data);
    raw.prepare("UPDATE runs SET last_seq = ? WHERE run_id = ?").run(20, run.run_id);
    raw.prepare("UPDATE runs SET last_seq = ? WHERE run_id = ?").run(3, other.run_id);
    raw.close();

    const reopened = new SqliteStorage({ path });
    await reopened.open();
    expect(reopened.appliedMigrations).toEqual(["007-frame-pages.sql"]);
    expect(await reopened.readFrames(run.run_id, 0)).toEqual(written.slice(0, 20));
    expect(await reopened.readFrames(run.run_id, 5, 3)).toEqual(written.slice(5, 8));
    expect(await reopened.readFrames(other.run_id, 0)).toEqual(written.slice(20));
    // The log goes on after the migrated frames.
    const next = frames(run.run_id, 2, 21);
    await reopened.appendFrames(next);
    expect(await reopened.readFrames(run.run_id, 18)).toEqual([...written.slice(18, 20), ...next]);
    expect(reopened.database.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(reopened.database.pragma("foreign_key_check")).toEqual([]);
    await reopened.close();
  });
});
