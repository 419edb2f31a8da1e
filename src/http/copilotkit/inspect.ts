import type { FastifyRequest } from "fastify";
import { acpToAguiMessage } from "../../bridge/acp/messages.js";
import type { RunService } from "../../engine/run-service.js";
import type { ThreadService } from "../../engine/thread-service.js";
import type { ThreadRecord } from "../../storage/types.js";
import { notFound } from "../../util/errors.js";
import { aclThreadId } from "../agui-runs/agui-runs.js";
import { replayThread } from "../agui-runs/thread-replay.js";
import { OWNER_KEY, type Owner } from "./threads.js";

/**
 * The thread views' read side (`inspect`): a thread's messages, state and events, from the
 * ACP thread. Readable by whoever may connect to it, except that a thread a CopilotKit user
 * made under one API key is not shown to another key.
 */
async function readableThread(
  threads: ThreadService,
  request: FastifyRequest,
  clientThreadId: string,
): Promise<ThreadRecord> {
  const caller = request.caller;
  const thread = await threads.findReachable(caller, aclThreadId(clientThreadId, caller.id));
  const owner = thread?.metadata[OWNER_KEY] as Partial<Owner> | undefined;
  // Another principal's thread, or one of an agent the caller may not use, does not exist here.
  const hiddenFromCaller =
    !thread || (typeof owner?.agent === "string" && !agentNamed(request, owner.agent));
  if (!thread || thread.hidden || hiddenFromCaller) throw notFound("thread", clientThreadId);
  return thread;
}

function agentNamed(request: FastifyRequest, name: string): boolean {
  const allowed = request.caller.agentIds;
  if (!allowed) return true;
  return request.server.deps.registry
    .list()
    .some((agent) => agent.name === name && allowed.has(agent.agentId));
}

/** Messages in the shape CopilotKit's runtime lists them (tool calls as `{id, name, args}`). */
export async function threadMessages(
  threads: ThreadService,
  request: FastifyRequest,
  clientThreadId: string,
): Promise<Record<string, unknown>[]> {
  const thread = await readableThread(threads, request, clientThreadId);
  const out: Record<string, unknown>[] = [];
  for (const stored of thread.messages ?? []) {
    let message: Record<string, unknown>;
    try {
      message = acpToAguiMessage(stored) as unknown as Record<string, unknown>;
    } catch {
      continue; // written through ACP in a shape AG-UI has no form for
    }
    const shown: Record<string, unknown> = { id: message.id, role: message.role };
    if (message.content !== undefined) shown.content = message.content;
    const calls = message.toolCalls as
      | Array<{ id: string; function: { name: string; arguments: string } }>
      | undefined;
    if (calls && calls.length > 0) {
      shown.toolCalls = calls.map((call) => ({
        id: call.id,
        name: call.function.name,
        args: call.function.arguments,
      }));
    }
    if (message.role === "tool") shown.toolCallId = message.toolCallId;
    out.push(shown);
  }
  return out;
}

export async function threadState(
  threads: ThreadService,
  request: FastifyRequest,
  clientThreadId: string,
): Promise<unknown> {
  const thread = await readableThread(threads, request, clientThreadId);
  const values = thread.values;
  if (values === null || values === undefined) return null;
  const keys = typeof values === "object" && !Array.isArray(values) ? Object.keys(values) : [];
  // Non-object AG-UI state is stored wrapped (see acp-mapping.ts).
  if (keys.length === 1 && keys[0] === "$state") return (values as { $state: unknown }).$state;
  return values;
}

/** The thread's history as the events `connect` replays, without following a run in progress. */
export async function threadEvents(
  threads: ThreadService,
  runs: RunService,
  request: FastifyRequest,
  clientThreadId: string,
): Promise<Record<string, unknown>[]> {
  const thread = await readableThread(threads, request, clientThreadId);
  const events: Record<string, unknown>[] = [];
  for await (const event of replayThread(runs, {
    clientThreadId,
    threadId: thread.thread_id,
    who: request.caller,
    // Already over: what is stored is read, nothing live is waited for.
    signal: AbortSignal.abort(),
    ending: "close-then-end",
  })) {
    events.push(event);
  }
  return events;
}
