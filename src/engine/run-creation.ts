/**
 * Creating a run: the command checked against the agent's descriptor, the thread it goes on (and
 * created with it when asked), the multitask strategy applied, the queue checked, then the insert
 * (claimed by this replica when it has room, held for a `wait`) and the launch.
 */
import { ownerOf, type Principal, reaches } from "../auth/principal.js";
import { acpToAguiMessages } from "../bridge/acp/messages.js";
import { configurableOf, type FaceRunCommand } from "../bridge/acp/run-command.js";
import type {
  CreateThreadInput,
  HeldInsert,
  InsertClaim,
  InsertRunOptions,
  NewRun,
  RunKind,
  RunRecord,
  ThreadRecord,
} from "../storage/types.js";
import { invalid, notFound } from "../util/errors.js";
import { newId } from "../util/ids.js";
import { StopReason } from "./executor.js";
import type { QueueRoom } from "./queue-room.js";
import type { EndFrames } from "./run-engine/end-waiters.js";
import type { CreatedRun, RunnableAgent, RunServiceOptions } from "./run-types.js";
import { traceContextForNewRun } from "./segment-tracing.js";

/** 9999-12-31T23:59:59.999Z: the latest start a 4-digit ISO year can express. */
const LATEST_START_MS = 253_402_300_799_999;

export class RunCreation {
  constructor(
    private readonly options: RunServiceOptions,
    private readonly queueRoom: QueueRoom,
    /** The multitask strategies' stop of a thread's pending runs (RunService's). */
    private readonly stopPendingRuns: (
      threadId: string,
      kind: "cancel" | "rollback",
    ) => Promise<void>,
  ) {}

  /** The storage behind the runs. */
  private get storage() {
    return this.options.engine.storage;
  }

  async create(
    who: Principal,
    kind: RunKind,
    command: FaceRunCommand,
    threadId: string | undefined,
    toWait: boolean,
    newThreadMetadata: Record<string, unknown> = {},
    knownThread?: ThreadRecord | null,
    /**
     * The thread id was made by the server for this run and nobody else knows it yet (a new
     * A2A context): its insert may be held with the thread's (`insertRunOnNewThreadHeld`).
     */
    freshThread = false,
  ): Promise<CreatedRun> {
    const agent = this.resolveAgent(command.agentId);
    const inputProblem = agent.validateInput(command.input.value);
    if (inputProblem) throw invalid(inputProblem);
    // Refuse now (422) what could not become AG-UI messages, rather than fail the run later.
    if (command.input.messages) acpToAguiMessages(command.input.messages);
    const configurable = configurableOf(command);
    if (configurable !== undefined) {
      const configProblem = agent.validateConfig(configurable);
      if (configProblem) throw invalid(configProblem);
    }
    checkStreamModes(agent, command.streamMode);
    if (command.webhook !== undefined) await this.options.checkWebhook(command.webhook);
    // A stateless run's queue check can go with its insert (one step, one round trip): it has
    // no thread to look up or runs to stop first, which a full queue would otherwise precede.
    // Not for a run whose insert may be held (`wait`): a held insert is written without a read,
    // so its queue is counted first, as a stateful run's is.
    const mayHold = toWait && kind === "stateless" && this.storage.insertRunHeld !== undefined;
    const queueLimit = await this.queueRoom.check(agent, kind === "stateless" && !mayHold);
    const afterSeconds = command.afterSeconds !== undefined ? Math.max(0, command.afterSeconds) : 0;
    const startAfter = Date.now() + afterSeconds * 1000;
    // Beyond year 9999 the ISO timestamp gets a sign and 6 digits, which sorts before any
    // 4-digit year (the run would start at once), and far beyond it Date throws.
    if (!(startAfter <= LATEST_START_MS)) {
      throw invalid(
        `after_seconds ${command.afterSeconds} is too large: the start would be after the year 9999`,
      );
    }

    // A stateless run's hidden thread is created with the run, in one write.
    const target =
      kind === "stateful"
        ? await this.statefulThread(who, threadId!, command, newThreadMetadata, knownThread)
        : { threadId: newId(), principal: ownerOf(who) };
    const targetThread = target.threadId;
    const strategy = command.multitaskStrategy;
    // A thread still to be created has no runs to stop.
    if (
      kind === "stateful" &&
      !target.create &&
      (strategy === "interrupt" || strategy === "rollback")
    ) {
      await this.stopPendingRuns(targetThread, strategy === "rollback" ? "rollback" : "cancel");
    }

    const { engine } = this.options;
    // A run that can start at once is claimed by its own insert when this replica has room
    // for it: its creation is then the only write before it executes.
    const claim = engine.offerClaim(agent.agentId);
    const newRun: NewRun = {
      run_id: newId(),
      thread_id: targetThread,
      agent_id: agent.agentId,
      kind,
      creation: command.creation,
      metadata: command.metadata,
      start_after: new Date(startAfter).toISOString(),
      principal: target.principal,
      trace_context: traceContextForNewRun(),
      face: command.face,
    };
    const insertOptions: InsertRunOptions = {
      reject_if_busy: kind === "stateful" && strategy === "reject",
      create_hidden_thread: kind === "stateless",
      // A hidden thread is created busy already (it exists for this run only).
      mark_thread_busy: kind === "stateful",
      claim,
      queue_limit: queueLimit,
    };
    if (target.create) {
      let heldNew: HeldInsert | undefined;
      try {
        heldNew =
          toWait && claim && freshThread
            ? this.storage.insertRunOnNewThreadHeld?.(target.create, newRun, insertOptions)
            : undefined;
      } catch (err) {
        if (claim) engine.releaseClaim(agent.agentId);
        throw err;
      }
      if (heldNew && claim) return this.launchHeld(heldNew, claim);
      let inserted: RunRecord | null;
      try {
        inserted = await this.storage.insertRunOnNewThread!(target.create, newRun, insertOptions);
      } catch (err) {
        if (claim) engine.releaseClaim(agent.agentId);
        throw err;
      }
      if (inserted === null) {
        // Created meanwhile: the run goes on it as on any thread that exists (or is refused).
        if (claim) engine.releaseClaim(agent.agentId);
        return this.create(who, kind, command, threadId, toWait, newThreadMetadata);
      }
      return this.launched(inserted, claim);
    }
    let held: HeldInsert | undefined;
    try {
      held = toWait && claim ? this.storage.insertRunHeld?.(newRun, insertOptions) : undefined;
    } catch (err) {
      if (claim) engine.releaseClaim(agent.agentId);
      throw err;
    }
    // From here the slot is the execution's.
    if (held && claim) return this.launchHeld(held, claim);
    let run: RunRecord;
    try {
      run = await this.storage.insertRun(newRun, insertOptions);
    } catch (err) {
      if (claim) engine.releaseClaim(agent.agentId);
      throw err;
    }
    return this.launched(run, claim);
  }

  private launched(run: RunRecord, claim: InsertClaim | undefined): CreatedRun {
    const { engine } = this.options;
    engine.notify(run);
    // Claimed here: no replica needs to look for it.
    if (!(claim && engine.launchInserted(run, claim))) engine.workAvailable();
    return { run };
  }

  /**
   * Executes a run whose insert is held, at once: its end, if it comes before the insert is
   * written, is written with it. Resolves once the insert is committed.
   */
  private async launchHeld(held: HeldInsert, claim: InsertClaim): Promise<CreatedRun> {
    const { engine } = this.options;
    const { run } = held;
    // The thread its insert creates: the execution cannot read it before the commit.
    engine.launchInserted(run, claim, held.thread);
    // Asked now: a short run's end is recorded as soon as its insert commits.
    const endFrames: EndFrames = {};
    const ended = engine.endOf(run.run_id, endFrames);
    try {
      await held.committed;
    } catch (err) {
      // Nothing was written (the insert failed as `insertRun` would): the execution stops, and
      // its own writes are refused (there is no such run).
      void engine.abortLocal(run.run_id, new StopReason("cancel", "the run could not be created"));
      throw err;
    }
    engine.notify(run);
    return { run, ended, endFrames };
  }

  private resolveAgent(agentId: string | undefined) {
    const { catalog } = this.options;
    if (typeof agentId === "string") {
      const agent = catalog.get(agentId);
      if (!agent) throw notFound("agent", agentId);
      return agent;
    }
    const agent = catalog.defaultAgent();
    if (!agent) throw invalid("agent_id is required: this server has more than one agent");
    return agent;
  }

  /**
   * The thread a stateful run goes on, and so the run's owner: the thread's. A missing thread
   * the run creates is left to the run's insert (`create`) when the storage can write both at
   * once (`insertRunOnNewThread`): the run's first event then waits for one commit, not two.
   */
  private async statefulThread(
    who: Principal,
    threadId: string,
    command: FaceRunCommand,
    metadata: Record<string, unknown>,
    known: ThreadRecord | null | undefined,
  ): Promise<{ threadId: string; principal: string | null; create?: CreateThreadInput }> {
    const thread = known !== undefined ? known : await this.storage.getThread(threadId);
    if (thread && !thread.hidden && reaches(who, thread.principal)) {
      return { threadId, principal: thread.principal };
    }
    // Hidden, someone else's, or missing without if_not_exists: no such thread for the caller.
    if (thread || command.ifNotExists !== "create") throw notFound("thread", threadId);
    const input: CreateThreadInput = {
      thread_id: threadId,
      metadata,
      if_exists: "do_nothing",
      principal: ownerOf(who),
    };
    if (this.storage.insertRunOnNewThread) {
      return { threadId, principal: input.principal ?? null, create: input };
    }
    const { thread: created } = await this.storage.createThread(input);
    // Created meanwhile by someone else (a race on the same id): still not the caller's.
    if (created.hidden || !reaches(who, created.principal)) throw notFound("thread", threadId);
    return { threadId, principal: created.principal };
  }
}

/** ACP: a requested stream mode must be one the agent's descriptor declares. */
function checkStreamModes(agent: RunnableAgent, requested: string[] | undefined): void {
  if (!agent.streamModes || requested === undefined) return;
  for (const mode of requested) {
    if (!agent.streamModes.has(mode)) {
      throw invalid(
        `stream_mode "${mode}" is not supported by agent ${agent.agentId} (its descriptor's specs.capabilities.streaming)`,
      );
    }
  }
}
