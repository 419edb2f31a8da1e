/**
 * SQLite stores a long output packed (src/storage/sqlite/packed-json.ts): compressed, built
 * piece by piece, and read back exactly; short outputs and rows written before the format stay
 * JSON text.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStorage } from "../../src/storage/index.js";
import { packJson, unpackJson } from "../../src/storage/sqlite/packed-json.js";
import { makeRun, makeThread, trickyJson } from "./contract/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "acp-packed-json-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Text that compresses like prose, not like one repeated letter. */
function prose(chars: number): string {
  const words = ["the", "agent", "streams", "a", "long", "answer", "über", "naïve", "café", "😀"];
  let text = "";
  let state = 7;
  while (text.length < chars) {
    state = (state * 1103515245 + 12345) % 2147483648;
    text += `${words[state % words.length]} `;
  }
  return text;
}

/** A fresh database file with one thread in it. */
async function openWithThread(name: string) {
  const path = join(dir, name);
  const storage = new SqliteStorage({ path });
  await storage.open();
  return { path, storage, thread: await makeThread(storage) };
}

describe("packJson", () => {
  it("keeps short values as JSON text", () => {
    const value = { messages: [{ role: "assistant", content: "hello" }], extra: trickyJson() };
    expect(packJson(value)).toBe(JSON.stringify(value));
    expect(packJson(undefined)).toBe("null");
  });

  it("packs long values into fewer bytes, and reads them back exactly", () => {
    for (const value of [
      { text: prose(300_000), extra: trickyJson() },
      { list: Array.from({ length: 30_000 }, (_, i) => ({ i, s: "😀é" })) },
      [prose(70_000), prose(70_000)],
    ]) {
      const packed = packJson(value);
      expect(Buffer.isBuffer(packed)).toBe(true);
      expect((packed as Buffer).length).toBeLessThan(Buffer.byteLength(JSON.stringify(value)) / 2);
      expect(unpackJson(packed)).toEqual(value);
    }
  });

  it("names an unknown stored format instead of guessing", () => {
    expect(() => unpackJson(Buffer.from([9, 1, 2]))).toThrow(/unknown format \(first byte 9\)/);
  });
});

describe("a run's output in SQLite", () => {
  it("is a BLOB when long and JSON text when short; rows of either kind read back", async () => {
    const { path, storage, thread } = await openWithThread("outputs.db");
    const long = await makeRun(storage, thread.thread_id);
    const short = await makeRun(storage, thread.thread_id);
    const longOutput = { type: "result", values: { text: prose(200_000) }, messages: [] };
    const shortOutput = { type: "result", values: { n: 1 }, messages: [] };
    await storage.updateRun(long.run_id, { status: "success", output: longOutput });
    await storage.updateRun(short.run_id, { status: "success", output: shortOutput });
    await storage.close();

    const db = new Database(path, { readonly: true });
    const row = (id: string) =>
      db
        .prepare(
          "SELECT typeof(output) AS type, length(output) AS bytes FROM runs WHERE run_id = ?",
        )
        .get(id) as { type: string; bytes: number };
    // The long one is a marker, its packed bytes in parts of about 32 KB.
    expect(row(long.run_id)).toEqual({ type: "blob", bytes: 1 });
    const parts = db
      .prepare(
        "SELECT count(*) AS n, sum(length(data)) AS bytes FROM run_output_parts WHERE run_id = ?",
      )
      .get(long.run_id) as { n: number; bytes: number };
    expect(parts.n).toBeGreaterThan(1);
    expect(parts.bytes).toBeLessThan(Buffer.byteLength(JSON.stringify(longOutput)) / 2);
    expect(row(short.run_id)).toMatchObject({ type: "text" });
    db.close();

    const reopened = new SqliteStorage({ path });
    await reopened.open();
    expect((await reopened.getRun(long.run_id))?.output).toEqual(longOutput);
    expect((await reopened.getRun(short.run_id))?.output).toEqual(shortOutput);
    const listed = await reopened.searchRuns({ thread_id: thread.thread_id, limit: 10, offset: 0 });
    expect(listed.find((run) => run.run_id === long.run_id)?.output).toEqual(longOutput);
    await reopened.close();
  });

  it("replaces an output's parts when it is written again, and removes them with the run", async () => {
    const { path, storage, thread } = await openWithThread("rewrites.db");
    const run = await makeRun(storage, thread.thread_id);
    const parts = () => {
      const db = new Database(path, { readonly: true });
      const n = (db.prepare("SELECT count(*) AS n FROM run_output_parts").get() as { n: number }).n;
      db.close();
      return n;
    };
    const first = { type: "result", values: { text: prose(300_000) }, messages: [] };
    const second = { type: "result", values: { text: prose(100_000) }, messages: [] };
    await storage.updateRun(run.run_id, { status: "interrupted", output: first });
    const firstParts = parts();
    await storage.updateRun(run.run_id, { status: "success", output: second });
    expect((await storage.getRun(run.run_id))?.output).toEqual(second);
    expect(parts()).toBeGreaterThan(0);
    expect(parts()).toBeLessThan(firstParts);
    // A short output after a long one leaves no parts behind.
    await storage.updateRun(run.run_id, { output: { type: "result", values: {}, messages: [] } });
    expect(parts()).toBe(0);
    await storage.updateRun(run.run_id, { output: first });
    await storage.deleteRun(run.run_id);
    expect(parts()).toBe(0);
    await storage.close();
  });
});

describe("a thread's state in SQLite", () => {
  it("packs long checkpoint and thread values and messages; reads, search and copies see them", async () => {
    const { path, storage, thread } = await openWithThread("threads.db");
    const text = prose(150_000);
    const values = { topic: "long", draft: text };
    const messages = [{ id: "m1", role: "assistant" as const, content: text }];
    await storage.addCheckpoint(thread.thread_id, {
      checkpoint_id: "c1",
      values,
      messages,
      metadata: { step: 1 },
    });

    const db = new Database(path, { readonly: true });
    const types = db
      .prepare(
        `SELECT typeof(t."values") AS tv, typeof(t.messages) AS tm, typeof(c."values") AS cv,
                typeof(c.messages) AS cm
           FROM threads t JOIN checkpoints c ON c.thread_id = t.thread_id WHERE t.thread_id = ?`,
      )
      .get(thread.thread_id);
    expect(types).toEqual({ tv: "blob", tm: "blob", cv: "blob", cm: "blob" });
    db.close();

    const stored = await storage.getThread(thread.thread_id);
    expect(stored?.values).toEqual(values);
    expect(stored?.messages).toEqual(messages);
    expect((await storage.getCheckpoint(thread.thread_id, "c1"))?.values).toEqual(values);
    // Containment on values reads the packed document too.
    const found = await storage.searchThreads({ values: { topic: "long" }, limit: 10, offset: 0 });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    expect(
      await storage.searchThreads({ values: { topic: "short" }, limit: 10, offset: 0 }),
    ).toEqual([]);
    const copy = await storage.copyThread(thread.thread_id, "copy-of-long");
    expect(copy.values).toEqual(values);
    expect((await storage.getThread("copy-of-long"))?.messages).toEqual(messages);
    await storage.close();
  });
});
