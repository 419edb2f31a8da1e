/**
 * The storage calls of one stateless `POST /runs/wait` on the echo agent, replayed against a
 * SQLite file without HTTP or the engine: what the database costs a run.
 *
 *   npx tsx bench/storage-run-replay.ts [concurrency=1] [runs=3000]
 *   PRAGMAS="wal_autocheckpoint=0" npx tsx bench/storage-run-replay.ts 50
 *
 * Prints runs/s, CPU per run and WAL bytes per run (the WAL is never checkpointed during the
 * replay, so its size is what the runs wrote); with concurrency 1, also the time of each call.
 * `concurrency` replays run at once, as concurrent requests do (their writes share commits).
 */
import { rmSync, statSync } from "node:fs";
import { SqliteStorage } from "../src/storage/sqlite/sqlite-storage.js";
import type { RunFrame } from "../src/storage/types.js";
import { newId } from "../src/util/ids.js";

const concurrency = Math.max(1, Number(process.argv[2] ?? 1));
const runs = Math.max(1, Number(process.argv[3] ?? 3000));
const path = `${process.env.TMPDIR ?? "/tmp"}/acp-storage-replay-${process.pid}.db`;
const files = [path, `${path}-wal`, `${path}-shm`];

const storage = new SqliteStorage({ path });
await storage.open();
// Keep every WAL frame: its size at the end is what the replay wrote.
storage.database.pragma("wal_autocheckpoint = 0");
for (const pragma of (process.env.PRAGMAS ?? "").split(";").filter(Boolean)) {
  storage.database.pragma(pragma);
}

const timings = new Map<string, number>();
async function timed<T>(name: string, call: () => Promise<T>): Promise<T> {
  const start = process.hrtime.bigint();
  const result = await call();
  const micros = Number(process.hrtime.bigint() - start) / 1e3;
  timings.set(name, (timings.get(name) ?? 0) + micros);
  return result;
}

/** A custom frame's stored data, as the engine writes it for an echo text event (its event). */
const frameData = (_runId: string) =>
  '{"type":"TEXT_MESSAGE_CONTENT","messageId":"m-1","delta":"hello world"}';

async function replayOneRun(): Promise<void> {
  await timed("countRuns", () => storage.countRuns({ agent_id: "echo", status: "pending" }, 5000));
  const threadId = newId();
  const runId = newId();
  await timed("insertRun (+thread)", () =>
    storage.insertRun(
      {
        run_id: runId,
        thread_id: threadId,
        agent_id: "echo",
        kind: "stateless",
        creation: { agent_id: "echo", input: { messages: [{ role: "user", content: "hi" }] } },
        metadata: {},
        start_after: new Date().toISOString(),
      },
      { reject_if_busy: false, create_hidden_thread: true },
    ),
  );
  await timed("claimRun", () => storage.claimRun("replica", 30_000, new Date(), ["echo"]));
  await timed("nextStartAfter", () => storage.nextStartAfter());
  await timed("getThread", () => storage.getThread(threadId));
  const segment = { agui_run_id: newId(), started_at: new Date().toISOString(), ended_at: null };
  await timed("updateRun (start)", () => storage.updateRun(runId, { segments: [segment] }));
  const frames: RunFrame[] = Array.from({ length: 9 }, (_, i) => ({
    run_id: runId,
    seq: i + 1,
    mode: i === 8 ? "values" : "custom",
    data: frameData(runId),
  }));
  await timed("appendFrames (9)", () => storage.appendFrames(frames));
  await timed("finishRun (deleting the thread)", () =>
    storage.finishRun(
      runId,
      {
        status: "success",
        output: { type: "result", values: {}, messages: [] },
        segments: [{ ...segment, ended_at: new Date().toISOString() }],
        owner: null,
        lease_expires_at: null,
      },
      { delete: true },
    ),
  );
  const final: RunFrame = { run_id: runId, seq: 10, mode: "final", data: frameData(runId) };
  await timed("appendFrames (final)", () => storage.appendFrames([final]));
  await timed("getRun", () => storage.getRun(runId));
  await timed("readFrames", () => storage.readFrames(runId, 0));
}

try {
  for (let i = 0; i < 200; i++) await replayOneRun(); // warm-up
  timings.clear();
  const walBefore = statSync(`${path}-wal`).size;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let started_runs = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (started_runs < runs) {
        started_runs++;
        await replayOneRun();
      }
    }),
  );
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const walBytes = statSync(`${path}-wal`).size - walBefore;
  console.log(
    `concurrency ${concurrency}: ${started_runs} runs in ${elapsed.toFixed(0)} ms → ` +
      `${((started_runs / elapsed) * 1000).toFixed(0)} runs/s, ` +
      `CPU ${((cpu.user + cpu.system) / started_runs).toFixed(0)} µs/run, ` +
      `WAL ${(walBytes / started_runs / 1024).toFixed(1)} KB/run`,
  );
  if (concurrency === 1) {
    for (const [name, micros] of timings) {
      console.log(`  ${name.padEnd(26)} ${(micros / started_runs).toFixed(1).padStart(7)} µs`);
    }
  }
} finally {
  await storage.close();
  for (const file of files) rmSync(file, { force: true });
}
