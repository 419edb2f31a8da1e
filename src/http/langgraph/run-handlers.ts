import type { FastifyReply, FastifyRequest } from "fastify";
import { type Principal, SYSTEM } from "../../auth/principal.js";
import { parseRunCommand } from "../../bridge/acp/run-command.js";
import { type ParsedRunBody, parseRunBody, runOptionsOf } from "../../bridge/langgraph/run-body.js";
import { waitResult } from "../../bridge/langgraph/stream-events.js";
import { resumeBodyOf } from "../../bridge/langgraph/values.js";
import type { AgentRegistry, RegisteredAgent } from "../../config/registry.js";
import { LazyAbortController } from "../../engine/run-engine/lazy-abort.js";
import type { RunService } from "../../engine/run-service.js";
import type { ThreadService } from "../../engine/thread-service.js";
import type { RunKind, RunRecord, ThreadRecord } from "../../storage/types.js";
import { conflict, invalid, notFound } from "../../util/errors.js";
import { clientGone, disconnectSignal } from "../streaming/client-gone.js";
import { lastEventId } from "../streaming/last-event-id.js";
import { locationOf, toRun } from "./records.js";
import { streamRun } from "./run-stream.js";

/** The agent an assistant id names (its name, or its agent id) that the caller may use; else 404. */
export function assistantAgent(
  registry: AgentRegistry,
  who: Principal,
  assistantId: string,
): RegisteredAgent {
  const agent = registry.getByName(assistantId) ?? registry.get(assistantId);
  if (!agent || (who.agentIds && !who.agentIds.has(agent.agentId))) {
    throw notFound("assistant", assistantId);
  }
  return agent;
}

/** The run operations of the thread-run and stateless-run routes, which only declare paths. */
export class LangGraphRuns {
  constructor(
    private readonly deps: {
      runs: RunService;
      threads: ThreadService;
      registry: AgentRegistry;
      keepAliveSeconds: number;
    },
  ) {}

  /** The agent a run belongs to, by name (a run whose agent left the config: its id). */
  agentName(run: RunRecord): string {
    return this.deps.registry.get(run.agent_id)?.name ?? run.agent_id;
  }

  toRun(run: RunRecord) {
    return toRun(run, this.agentName(run));
  }

  /** The thread's interrupted run, the one an answer resumes; a 409 `nothingToAnswer` if none. */
  async interruptedRun(who: Principal, threadId: string, nothingToAnswer: string) {
    const { runs, threads } = this.deps;
    await threads.get(who, threadId);
    const [interrupted] = await runs.search(who, {
      thread_id: threadId,
      status: "interrupted",
      limit: 1,
      offset: 0,
    });
    if (!interrupted) throw conflict(nothingToAnswer);
    return interrupted;
  }

  /** POST …/runs: a background run (or the resume of the thread's interrupted run). */
  async create(who: Principal, kind: RunKind, body: unknown, threadId?: string) {
    const { parsed } = this.parse(who, kind, body);
    const { run } = await this.start(who, kind, parsed, threadId);
    return this.toRun(run);
  }

  /** POST …/runs/stream: create (or resume), then stream from the run's first new frame. */
  async createAndStream(
    request: FastifyRequest,
    reply: FastifyReply,
    kind: RunKind,
    body: unknown,
    threadId?: string,
  ): Promise<void> {
    const { parsed, agent } = this.parse(request.caller, kind, body);
    const { run, afterSeq } = await this.start(request.caller, kind, parsed, threadId);
    await streamRun(this.deps.runs, request, reply, run, {
      modes: parsed.options.stream_mode,
      resumable: parsed.options.stream_resumable,
      afterSeq,
      metadataFirst: true,
      cancelOnDisconnect: parsed.acp.on_disconnect === "cancel",
      agentName: agent.name,
      keepAliveSeconds: this.deps.keepAliveSeconds,
    });
  }

  /** POST …/runs/wait: create (or resume), then answer the run's final values. */
  async createAndWait(
    who: Principal,
    reply: FastifyReply,
    kind: RunKind,
    body: unknown,
    threadId?: string,
  ) {
    const { parsed } = this.parse(who, kind, body);
    const { run, ended } = await this.start(who, kind, parsed, threadId, true);
    reply.header("content-location", locationOf(run));
    const gone = new LazyAbortController();
    reply.raw.once("close", () => {
      if (clientGone(reply.raw)) gone.abort(new Error("client disconnected"));
    });
    const stopWatching =
      parsed.acp.on_disconnect === "cancel"
        ? gone.onAbort(
            () =>
              void this.deps.runs
                .cancel(SYSTEM, run.run_id, kind, { action: "interrupt", wait: false })
                .catch(() => undefined),
          )
        : undefined;
    try {
      return await this.result(await this.deps.runs.waitFor(run, gone, ended));
    } finally {
      stopWatching?.();
    }
  }

  /** GET …/runs/{run_id}/join: the run's final values once it stops. */
  async join(who: Principal, reply: FastifyReply, kind: RunKind, runId: string, threadId?: string) {
    const signal = disconnectSignal(reply.raw);
    return this.result(await this.deps.runs.wait(who, runId, kind, signal, threadId));
  }

  /**
   * GET …/runs/{run_id}/stream: join a run. A resumable run's stream replays what follows
   * `Last-Event-ID`; without it (or for a run that is not resumable) the join gets the events
   * from now on, and a stopped run's last values.
   */
  async joinStream(
    request: FastifyRequest,
    reply: FastifyReply,
    kind: RunKind,
    runId: string,
    threadId?: string,
  ): Promise<void> {
    const run = await this.deps.runs.get(request.caller, runId, kind, threadId);
    const agentName = this.agentName(run);
    const options = runOptionsOf(run.creation, agentName);
    const query = request.query as { stream_mode?: unknown; cancel_on_disconnect?: unknown };
    const header = request.headers["last-event-id"];
    const resumeFrom = lastEventId(request);
    if (header !== undefined && resumeFrom === undefined && header !== "-1") {
      throw invalid("Last-Event-ID must be the id of an event of this run's stream");
    }
    const replay = options.stream_resumable && resumeFrom !== undefined;
    const afterSeq = replay
      ? resumeFrom
      : run.status === "pending"
        ? run.last_seq
        : Math.max(0, run.last_seq - 1);
    await streamRun(this.deps.runs, request, reply, run, {
      modes: options.stream_mode,
      resumable: options.stream_resumable,
      afterSeq: options.stream_resumable && header === "-1" ? 0 : afterSeq,
      metadataFirst: !replay,
      cancelOnDisconnect:
        query.cancel_on_disconnect === "1" || query.cancel_on_disconnect === "true",
      agentName,
      keepAliveSeconds: this.deps.keepAliveSeconds,
    });
  }

  /** The body as a run command for the agent it names (by its id: names may repeat over versions). */
  private parse(who: Principal, kind: RunKind, body: unknown) {
    const parsed = parseRunBody(body, kind === "stateless");
    const agent = assistantAgent(this.deps.registry, who, parsed.assistantId);
    parsed.acp.agent_id = agent.agentId;
    return { parsed, agent };
  }

  /** Creates the run, or resumes the thread's interrupted run for `command.resume`. */
  private async start(
    who: Principal,
    kind: RunKind,
    parsed: ParsedRunBody,
    threadId: string | undefined,
    toWait = false,
  ): Promise<{ run: RunRecord; afterSeq: number; ended?: Promise<RunRecord | undefined> }> {
    const { runs, threads } = this.deps;
    if (parsed.resume) {
      const interrupted = await this.interruptedRun(
        who,
        threadId!,
        `thread ${threadId} has no interrupted run for command.resume to answer`,
      );
      const body = resumeBodyOf(parsed.resume.value, interrupted.interrupts);
      const run = await runs.resume(who, interrupted.run_id, "stateful", body, threadId);
      return { run, afterSeq: interrupted.last_seq };
    }
    // Read once here, so that the run's creation need not read it again.
    const thread =
      kind === "stateful" ? ((await threads.findReachable(who, threadId!)) ?? null) : undefined;
    if (thread) withoutKnownMessages(parsed, thread);
    const command = parseRunCommand(parsed.acp, "langgraph");
    if (toWait) {
      const { run, ended } = await runs.createToWait(who, kind, command, threadId);
      return { run, afterSeq: 0, ended };
    }
    const run = await runs.create(who, kind, command, threadId, undefined, thread);
    return { run, afterSeq: 0 };
  }

  /** A stopped run's values as `wait` and `join` answer them. */
  private async result(run: RunRecord) {
    const thread =
      run.thread_id !== null && run.output?.type !== "result"
        ? await this.deps.threads.findReachable(SYSTEM, run.thread_id)
        : undefined;
    return waitResult({
      status: run.status,
      output: run.output,
      interrupts: run.interrupts,
      values: thread?.values ?? null,
      messages: thread?.messages ?? null,
    });
  }
}

/**
 * LangGraph adds input messages by id: a client may send the whole conversation again
 * (`@ag-ui/langgraph` does), and the messages the thread has already are not added twice.
 */
function withoutKnownMessages(parsed: ParsedRunBody, thread: ThreadRecord): void {
  const input = parsed.acp.input as { messages?: Array<{ id?: unknown }> } | undefined;
  if (!input?.messages || !thread.messages) return;
  const known = new Set(thread.messages.map((message) => message.id));
  input.messages = input.messages.filter(
    (message) => typeof message.id !== "string" || !known.has(message.id),
  );
}
