import { randomUUID } from "node:crypto";
import { createStorage } from "../../src/storage/index.js";
import type { RunRecord, Storage } from "../../src/storage/types.js";

/**
 * An open SQLite storage in memory holding one pending stateless run (on its hidden thread),
 * for tests of what reads and writes a run's frames.
 */
export async function storageWithPendingRun(
  runId: string = randomUUID(),
): Promise<{ storage: Storage; run: RunRecord }> {
  const storage = createStorage(":memory:");
  await storage.open();
  const run = await storage.insertRun(
    {
      run_id: runId,
      thread_id: randomUUID(),
      agent_id: "agent",
      kind: "stateless",
      creation: {},
      metadata: {},
      start_after: new Date().toISOString(),
    },
    { reject_if_busy: false, create_hidden_thread: true },
  );
  return { storage, run };
}
