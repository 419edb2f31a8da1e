/**
 * Our records as LangGraph API objects: an agent as an assistant, a thread, its state (from the
 * thread or a checkpoint), a run. Ids are ours, so the same thread is one conversation through
 * every face.
 */
import { ERRCODE } from "../../bridge/acp/outcomes.js";
import { runOptionsOf } from "../../bridge/langgraph/run-body.js";
import { type LangGraphInterrupt, toLangGraphValues } from "../../bridge/langgraph/values.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { CheckpointRecord, RunRecord, ThreadRecord } from "../../storage/types.js";

type Rec = Record<string, unknown>;

/** When configured agents came to be, as far as an assistant's timestamps go: server start. */
const STARTED_AT = new Date().toISOString();

/** An agent as a LangGraph assistant: its name is the assistant id and the graph id. */
export function toAssistant(agent: RegisteredAgent): Rec {
  return {
    assistant_id: agent.name,
    graph_id: agent.name,
    name: agent.name,
    description: agent.config.description ?? null,
    config: {},
    context: {},
    metadata: { agent_id: agent.agentId, version: agent.version },
    version: 1,
    created_at: STARTED_AT,
    updated_at: STARTED_AT,
  };
}

/** The assistant's schemas, from the agent's descriptor (`specs.input`, `output`, `config`…). */
export function toSchemas(agent: RegisteredAgent): Rec {
  const specs = agent.descriptor.specs as unknown as Rec;
  return {
    graph_id: agent.name,
    input_schema: specs.input ?? null,
    output_schema: specs.output ?? null,
    state_schema: specs.thread_state ?? null,
    config_schema: specs.config ?? null,
    context_schema: specs.config ?? null,
  };
}

/** The graph an agent is, drawn as LangGraph draws one: start, the agent, end. */
export function toGraph(agent: RegisteredAgent): Rec {
  return {
    nodes: [
      { id: "__start__", type: "schema", data: "__start__" },
      {
        id: agent.name,
        type: "runnable",
        data: { id: ["acp-agui", agent.name], name: agent.name },
      },
      { id: "__end__", type: "schema", data: "__end__" },
    ],
    edges: [
      { source: "__start__", target: agent.name },
      { source: agent.name, target: "__end__" },
    ],
  };
}

/**
 * A run's status as LangGraph says it: a run executing is `running`, and a cancelled one ended
 * `interrupted` (as LangGraph's server has it), not as an error.
 */
export function runStatus(run: RunRecord): string {
  if (run.status === "pending") return run.segments.length > 0 ? "running" : "pending";
  if (run.status === "error" && (run.output as Rec | null)?.errcode === ERRCODE.cancelled) {
    return "interrupted";
  }
  return run.status;
}

export function toRun(run: RunRecord, agentName: string): Rec {
  const creation = run.creation;
  return {
    run_id: run.run_id,
    thread_id: run.thread_id,
    assistant_id: runOptionsOf(creation, agentName).assistant_id,
    created_at: run.created_at,
    updated_at: run.updated_at,
    status: runStatus(run),
    metadata: run.metadata,
    multitask_strategy: creation.multitask_strategy ?? "reject",
    kwargs: {},
  };
}

/** A thread; `interrupts` are those of its interrupted run, keyed by that run (a task id). */
export function toThread(
  thread: ThreadRecord,
  interrupts: { runId: string; interrupts: LangGraphInterrupt[] } | undefined,
): Rec {
  return {
    thread_id: thread.thread_id,
    created_at: thread.created_at,
    updated_at: thread.updated_at,
    state_updated_at: thread.updated_at,
    metadata: thread.metadata,
    status: thread.status,
    values: toLangGraphValues(thread.values, thread.messages),
    interrupts: interrupts ? { [interrupts.runId]: interrupts.interrupts } : {},
  };
}

function checkpointOf(threadId: string, checkpointId: string | null): Rec {
  return {
    thread_id: threadId,
    checkpoint_ns: "",
    checkpoint_id: checkpointId,
    checkpoint_map: null,
  };
}

/** The thread's current state; an interrupted thread has the agent as its next task. */
export function toThreadState(
  thread: ThreadRecord,
  checkpoint: CheckpointRecord | undefined,
  interrupts: { runId: string; interrupts: LangGraphInterrupt[]; node: string } | undefined,
): Rec {
  const state: Rec = checkpoint
    ? toCheckpointState(checkpoint)
    : {
        next: [],
        checkpoint: checkpointOf(thread.thread_id, thread.checkpoint_id),
        metadata: {},
        created_at: thread.updated_at,
        parent_checkpoint: null,
        tasks: [],
      };
  // The thread's own values: newer than its last checkpoint while a run writes them.
  state.values = toLangGraphValues(thread.values, thread.messages);
  if (interrupts) {
    state.next = [interrupts.node];
    state.tasks = [
      {
        id: interrupts.runId,
        name: interrupts.node,
        path: ["__pregel_pull", interrupts.node],
        error: null,
        interrupts: interrupts.interrupts,
        checkpoint: null,
        state: null,
        result: null,
      },
    ];
  }
  return state;
}

/** One checkpoint of a thread's history as a LangGraph state. */
export function toCheckpointState(checkpoint: CheckpointRecord): Rec & { values: Rec } {
  return {
    values: toLangGraphValues(checkpoint.values, checkpoint.messages),
    next: [],
    checkpoint: checkpointOf(checkpoint.thread_id, checkpoint.checkpoint_id),
    metadata: checkpoint.metadata,
    created_at: checkpoint.created_at,
    parent_checkpoint: checkpoint.parent_checkpoint_id
      ? checkpointOf(checkpoint.thread_id, checkpoint.parent_checkpoint_id)
      : null,
    tasks: [],
  };
}

/** Where a run is, as LangGraph's client reads it: without the face's prefix. */
export function locationOf(run: RunRecord): string {
  return run.kind === "stateful"
    ? `/threads/${run.thread_id}/runs/${run.run_id}`
    : `/runs/${run.run_id}`;
}
