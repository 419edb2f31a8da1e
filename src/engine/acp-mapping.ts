import { storedValues } from "../bridge/acp/values.js";
import type { CheckpointRecord, RunRecord, ThreadRecord } from "../storage/types.js";
import type { AcpRun, AcpThread, AcpThreadState } from "../validation/acp-types.js";

/**
 * Records → ACP wire objects. ACP `values` must be an object; the engine stores AG-UI state
 * that is not an object wrapped (see bridge/acp/values.ts), so records always hold an object or null
 * here.
 */
export function toAcpThread(thread: ThreadRecord): AcpThread {
  return {
    thread_id: thread.thread_id,
    created_at: thread.created_at,
    updated_at: thread.updated_at,
    metadata: thread.metadata,
    status: thread.status,
    values: storedValues(thread.values),
    messages: (thread.messages ?? []) as AcpThread["messages"],
  };
}

export function toAcpThreadState(checkpoint: CheckpointRecord): AcpThreadState {
  return {
    checkpoint: { checkpoint_id: checkpoint.checkpoint_id },
    values: storedValues(checkpoint.values),
    messages: (checkpoint.messages ?? []) as AcpThreadState["messages"],
    metadata: checkpoint.metadata,
  };
}

export function toAcpRun(run: RunRecord): AcpRun {
  const acp: AcpRun = {
    run_id: run.run_id,
    agent_id: run.agent_id,
    created_at: run.created_at,
    updated_at: run.updated_at,
    status: run.status,
    creation: run.creation as AcpRun["creation"],
  };
  // Stateless runs expose their hidden thread too, until on_completion=delete removes it.
  if (run.thread_id !== null) acp.thread_id = run.thread_id;
  return acp;
}
