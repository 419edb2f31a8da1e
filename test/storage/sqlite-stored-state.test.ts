/**
 * SQLite stores a thread's state once: a run's end writes it in its checkpoint, and the thread
 * row (packed-json.ts, OF_CHECKPOINT) and the run's output (output-state.ts) refer to it. What
 * every read returns stays what was written, byte for byte as JSON, including after the
 * checkpoint is deleted while the run stays (migration 018's trigger writes the output whole).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SqliteStorage } from "../../src/storage/index.js";
import type { AcpMessage, Storage } from "../../src/storage/types.js";
import { id, makeRun, makeThread, messages, trickyJson } from "./contract/helpers.js";

const dir = mkdtempSync(join(tmpdir(), "acp-stored-state-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function open(): Promise<SqliteStorage> {
  const storage = new SqliteStorage({ path: join(dir, `${id()}.db`) });
  await storage.open();
  return storage;
}

/** A run ended as the engine ends it: output and checkpoint built from the same state. */
async function endedRun(
  storage: Storage,
  threadId: string,
  values: Record<string, unknown>,
  msgs: AcpMessage[],
) {
  const run = await makeRun(storage, threadId);
  const output = { type: "result", values, messages: msgs, result: { echoed: "hi" } };
  const checkpoint = {
    checkpoint_id: id(),
    values,
    messages: msgs,
    metadata: { run_id: run.run_id, step: "segment-0", source: "run" },
  };
  await storage.finishRun(
    run.run_id,
    { status: "success", output },
    { status: "idle" },
    undefined,
    { checkpoint },
  );
  return { run, output, checkpoint };
}

const rawRun = (storage: SqliteStorage, runId: string) =>
  storage.database.prepare("SELECT output FROM runs WHERE run_id = ?").get(runId) as {
    output: string | Buffer;
  };
const rawThread = (storage: SqliteStorage, threadId: string) =>
  storage.database
    .prepare('SELECT "values", messages FROM threads WHERE thread_id = ?')
    .get(threadId) as { values: string | Buffer; messages: string | Buffer };

const same = (a: unknown, b: unknown) => expect(JSON.stringify(a)).toBe(JSON.stringify(b));

describe("SQLite: a thread's state stored once", () => {
  it("reads the output and the thread's state back as written, from the checkpoint", async () => {
    const storage = await open();
    const thread = await makeThread(storage);
    const values = trickyJson();
    const msgs = messages("hello", "hi there");
    const { run, output } = await endedRun(storage, thread.thread_id, values, msgs);
    // Stored as references: the output's format byte 4, the thread's marker 3.
    expect(Buffer.isBuffer(rawRun(storage, run.run_id).output)).toBe(true);
    expect((rawRun(storage, run.run_id).output as Buffer)[0]).toBe(4);
    expect(rawThread(storage, thread.thread_id).values).toEqual(Buffer.of(3));
    same((await storage.getRun(run.run_id))?.output, output);
    same(
      (await storage.searchRuns({ thread_id: thread.thread_id, limit: 5, offset: 0 }))[0]?.output,
      output,
    );
    const read = await storage.getThread(thread.thread_id);
    same(read?.values, values);
    same(read?.messages, msgs);
    // Thread search by values looks at the checkpoint's.
    const found = await storage.searchThreads({
      values: { zeta: 1, nothing: null },
      limit: 10,
      offset: 0,
    });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    expect(await storage.searchThreads({ values: { zeta: 2 }, limit: 10, offset: 0 })).toEqual([]);
    // A copy has the same state.
    const copy = await storage.copyThread(thread.thread_id, id());
    same(copy.values, values);
    same(copy.messages, msgs);
    await storage.close();
  });

  it("keeps a run's output when its checkpoint goes with its thread", async () => {
    const storage = await open();
    const thread = await makeThread(storage);
    const big = { text: "long answer ".repeat(10_000) };
    const small = await endedRun(storage, thread.thread_id, { n: 1 }, messages("a", "b"));
    const long = await endedRun(storage, thread.thread_id, big, messages("c", "d"));
    await storage.deleteThread(thread.thread_id);
    for (const { run, output } of [small, long]) {
      const read = await storage.getRun(run.run_id);
      expect(read?.thread_id).toBeNull();
      same(read?.output, output);
      expect((rawRun(storage, run.run_id).output as Buffer | string)[0]).not.toBe(4);
    }
    await storage.close();
  });

  it("keeps a run's output when retention keeps only the newest checkpoint", async () => {
    const storage = await open();
    const thread = await makeThread(storage);
    const first = await endedRun(storage, thread.thread_id, { n: 1 }, messages("a", "b"));
    const second = await endedRun(storage, thread.thread_id, { n: 2 }, messages("c", "d"));
    const batch = await storage
      .retention()
      .sweepIdleThreads(new Date(Date.now() + 60_000).toISOString(), "keep-latest", 10);
    expect(batch.removed.checkpoints).toBe(1);
    same((await storage.getRun(first.run.run_id))?.output, first.output);
    same((await storage.getRun(second.run.run_id))?.output, second.output);
    same((await storage.getThread(thread.thread_id))?.values, { n: 2 });
    await storage.close();
  });

  it("keeps a rolled-back run's output, and the thread's state restored", async () => {
    const storage = await open();
    const thread = await makeThread(storage);
    const first = await endedRun(storage, thread.thread_id, { n: 1 }, messages("a", "b"));
    const second = await endedRun(storage, thread.thread_id, { n: 2 }, messages("c", "d"));
    await storage.restoreCheckpoint(thread.thread_id, first.checkpoint.checkpoint_id, {
      discardRunId: second.run.run_id,
    });
    same((await storage.getRun(second.run.run_id))?.output, second.output);
    const read = await storage.getThread(thread.thread_id);
    same(read?.values, { n: 1 });
    same(read?.messages, messages("a", "b"));
    expect(read?.checkpoint_id).toBe(first.checkpoint.checkpoint_id);
    await storage.restoreCheckpoint(thread.thread_id, null);
    expect((await storage.getThread(thread.thread_id))?.values).toBeNull();
    await storage.close();
  });

  it("stores an output whole when the checkpoint does not name the run", async () => {
    const storage = await open();
    const thread = await makeThread(storage);
    const run = await makeRun(storage, thread.thread_id);
    const values = { n: 1 };
    const msgs = messages("a", "b");
    const output = { type: "result", values, messages: msgs };
    await storage.finishRun(
      run.run_id,
      { status: "success", output },
      { status: "idle" },
      undefined,
      {
        checkpoint: { checkpoint_id: id(), values, messages: msgs, metadata: {} },
      },
    );
    expect(typeof rawRun(storage, run.run_id).output).toBe("string");
    same((await storage.getRun(run.run_id))?.output, output);
    await storage.close();
  });
});
