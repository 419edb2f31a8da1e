import type { Message, SendMessageRequest, StreamResponse } from "@a2a-js/sdk";
import { Role } from "@a2a-js/sdk";
import type { AgentCapabilities, RunAgentInput } from "@ag-ui/core";
import type { Logger } from "pino";
import { v4 as uuidv4 } from "uuid";
import { type AgentBounds, agentBounds } from "../config/agent-bounds.js";
import { DEFAULT_LIMITS } from "../config/settings.js";
import type { AgentSelfDescription } from "../config/specs.js";
import {
  type CardClient,
  type CardSummary,
  connect,
  describeCard,
  summarizeCard,
  UnusableCard,
} from "./a2a-card.js";
import { describe, dropped, failed, limitError, redact } from "./a2a-errors.js";
import { boundedFetch, UpstreamFault } from "./a2a-fetch.js";
import {
  A2aEventMapper,
  contextFromHistory,
  endingOf,
  interruptIdFor,
  type TaskEnding,
  taskOfInterrupt,
} from "./a2a-map.js";
import { answerParts, userParts } from "./a2a-message.js";
import type { A2aAdapterConfig } from "./a2a-options.js";
import { type AdapterRunContext, type AgentAdapter, sleep } from "./types.js";

type Payload = StreamResponse["payload"];
type Event = Record<string, unknown> & { type: string };

/** Stream drops in a row, with nothing new shown in between, before the run gives up. */
const MAX_RESUBSCRIBES = 3;

/**
 * A remote A2A agent (docs/agents.md, "A2A agents"), driven with the official `@a2a-js/sdk`
 * client. One run segment sends one A2A message: a run's first segment starts a task (in the
 * thread's A2A context), a resumed segment answers the task's `input-required` on the same
 * task. The agent card is read at start-up and every `cardRefreshSeconds`; it decides the
 * binding, streaming or polling, and what the descriptor and the AG-UI face say of the agent.
 *
 * Every failure throws an `Error` naming the agent's URL; the engine turns it into run status
 * `error`. A run the engine aborts cancels its task (CancelTask) and ends quietly.
 */
export class A2aAdapter implements AgentAdapter {
  private readonly fetchImpl: typeof fetch;
  private current:
    | (CardClient & { summary: CardSummary; description: AgentSelfDescription })
    | undefined;
  private refreshing: Promise<CardClient> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private readonly agent: string;

  constructor(
    private readonly config: A2aAdapterConfig,
    /** What the agent may send (its own limits, else the server's); without, the defaults. */
    bounds: AgentBounds = agentBounds(DEFAULT_LIMITS),
  ) {
    this.fetchImpl = boundedFetch({
      ...config,
      maxEventBytes: bounds.maxEventBytes,
      maxEventDepth: bounds.maxEventDepth,
      keys: bounds.keys,
    });
    this.agent = `the A2A agent at ${redact(config.url)}`;
  }

  /**
   * Reads the card once before the server serves, then every `cardRefreshSeconds`. A card that
   * cannot be read is a warning, not a failed start: runs try again and fail with the reason.
   */
  async start(logger?: Logger): Promise<void> {
    try {
      await this.refresh();
    } catch (err) {
      logger?.warn({ url: redact(this.config.url) }, `a2a: ${this.cardProblem(err)}`);
    }
    if (this.config.cardRefreshSeconds > 0) {
      this.timer = setInterval(() => {
        this.refresh().catch((err: unknown) =>
          logger?.warn(
            { url: redact(this.config.url) },
            `a2a: ${this.cardProblem(err)}; keeping the card read before`,
          ),
        );
      }, this.config.cardRefreshSeconds * 1000);
      this.timer.unref();
    }
  }

  /** The card as the descriptor and the AG-UI face show it; undefined until it was read. */
  card(): CardSummary | undefined {
    return this.current?.summary;
  }

  describe(): AgentSelfDescription | undefined {
    return this.current?.description;
  }

  capabilities(): Partial<AgentCapabilities> {
    const card = this.card();
    return {
      transport: { streaming: true },
      humanInTheLoop: { supported: true, interrupts: true },
      ...(card ? { custom: { a2a: card } } : {}),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
  }

  private refresh(): Promise<CardClient> {
    this.refreshing ??= connect(this.config, this.fetchImpl)
      .then((connected) => {
        const summary = summarizeCard(connected.card, this.config.url);
        // Kept as it is until the next refresh: the registry rebuilds the descriptor on change.
        this.current = { ...connected, summary, description: describeCard(summary) };
        return connected;
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  private async connection(): Promise<CardClient> {
    if (this.current) return this.current;
    try {
      return await this.refresh();
    } catch (err) {
      throw new Error(this.cardProblem(err));
    }
  }

  private cardProblem(err: unknown): string {
    if (err instanceof UnusableCard) return `${this.agent}: ${err.message}`;
    return `${this.agent}: its agent card could not be read: ${describe(err)}`;
  }

  async *run(input: RunAgentInput, context: AdapterRunContext): AsyncIterable<unknown> {
    const { signal, logger } = context;
    if (signal.aborted) return;
    const { client, streaming } = await this.connection();
    const { threadId, runId } = input;

    const resume = input.resume?.[0];
    const target = resume ? taskOfInterrupt(resume.interruptId) : undefined;
    if (resume && !target) {
      throw new Error(
        `${this.agent}: the resume answers interrupt ${JSON.stringify(resume.interruptId)}, which this adapter did not raise`,
      );
    }
    const contextId = target?.contextId ?? contextFromHistory(input.messages) ?? threadId;
    const mapper = new A2aEventMapper(input.state, contextId);
    // A resumed task is first reported as it was: still asking the question just answered.
    const asked = target?.statusMessageId;
    if (asked) mapper.seen(asked);
    let taskId = target?.taskId;
    let ending: TaskEnding | undefined;

    /** An update must be of the run's task; a status update may be the first to name it. */
    const ofTask = (updated: string, what: string, mayName: boolean): string | undefined => {
      if (!updated || updated === taskId) return taskId ?? (updated || undefined);
      if (taskId === undefined && mayName) return updated;
      throw new UpstreamFault(
        taskId === undefined
          ? `sent ${what} of task ${JSON.stringify(updated)} before naming the run's task`
          : `sent ${what} of task ${JSON.stringify(updated)}, not of the run's task ${JSON.stringify(taskId)}`,
      );
    };
    const apply = (payload: Payload): Event[] => {
      switch (payload?.$case) {
        case "message":
          if (payload.value.contextId) mapper.contextId = payload.value.contextId;
          ending = { kind: "finished" };
          return mapper.message(payload.value);
        case "task": {
          const task = payload.value;
          taskId = task.id;
          if (task.contextId) mapper.contextId = task.contextId;
          const events = mapper.task(task);
          const stale = asked !== undefined && task.status?.message?.messageId === asked;
          ending = stale ? undefined : endingOf(task.status?.state, task.status?.message);
          return events;
        }
        case "statusUpdate": {
          const { status } = payload.value;
          taskId = ofTask(payload.value.taskId, "a status update", true);
          const events = mapper.message(status?.message);
          const stale = asked !== undefined && status?.message?.messageId === asked;
          ending = stale ? undefined : endingOf(status?.state, status?.message);
          return events;
        }
        case "artifactUpdate":
          ofTask(
            payload.value.taskId,
            `artifact ${JSON.stringify(payload.value.artifact?.artifactId)}`,
            false,
          );
          return mapper.artifactUpdate(payload.value);
        default:
          return [];
      }
    };

    yield { type: "RUN_STARTED", threadId, runId };
    try {
      if (resume?.status === "cancelled") {
        // The user declined to answer: the task has nothing left to do.
        ending = { kind: "finished" };
        await this.cancel(client, taskId!, logger);
        yield { type: "RUN_FINISHED", threadId, runId };
        return;
      }
      let request = this.request(input, mapper.contextId, taskId);
      // The thread's id is only a proposal: an agent that refuses contexts it did not issue
      // gets the message again without one, and the context it issues is kept from then on.
      let proposed = target === undefined && contextFromHistory(input.messages) === undefined;
      const refused = (err: unknown): boolean => {
        if (!proposed || taskId !== undefined || !/context/i.test(describe(err))) return false;
        proposed = false;
        logger.warn(
          { url: redact(this.config.url) },
          `a2a: the agent refused the thread's id as its context (${describe(err)}); sending without one`,
        );
        request = this.request(input, "", undefined);
        return true;
      };
      if (streaming) {
        // A run stopped before the agent named its task keeps listening (for connectTimeoutMs)
        // until it does, so that the task can be canceled rather than left running.
        const listening = new AbortController();
        const stop = () => {
          if (taskId) return listening.abort(signal.reason);
          const grace = this.config.connectTimeoutMs || 10_000;
          setTimeout(() => listening.abort(signal.reason), grace).unref();
        };
        signal.addEventListener("abort", stop, { once: true });
        if (signal.aborted) stop();
        let stream = client.sendMessageStream(request, { signal: listening.signal });
        let drops = 0;
        for (;;) {
          let lastProblem = "the stream ended before the task did";
          try {
            for await (const response of stream) {
              const events = apply(response.payload);
              // Only progress counts: an agent that answers its task as it was, then drops
              // again, is not let loop until the run's timeout.
              if (events.length > 0) drops = 0;
              if (signal.aborted) break;
              yield* events;
              if (ending) break;
            }
          } catch (err) {
            if (signal.aborted) return;
            if (refused(err)) {
              stream = client.sendMessageStream(request, { signal: listening.signal });
              continue;
            }
            // Only a lost connection is a drop: a broken answer fails the run.
            if (!taskId || !dropped(err)) throw err;
            lastProblem = describe(err);
          }
          if (signal.aborted) return;
          if (ending) break;
          if (!taskId) throw new Error("closed the stream before naming a task");
          if (++drops > MAX_RESUBSCRIBES) {
            throw new Error(
              `dropped the stream of task ${taskId} ${MAX_RESUBSCRIBES + 1} times in a row (${lastProblem})`,
            );
          }
          logger.warn(
            { url: redact(this.config.url), taskId },
            `a2a: the stream of task ${taskId} dropped (${lastProblem}); subscribing to it again`,
          );
          // The task may have moved on, or ended, while nobody listened.
          yield* apply({
            $case: "task",
            value: await client.getTask({ tenant: "", id: taskId }, { signal }),
          });
          if (ending) break;
          stream = client.resubscribeTask({ tenant: "", id: taskId }, { signal });
        }
      } else {
        const send = () => client.sendMessage(request, { signal });
        const result = await send().catch((err: unknown) => {
          if (refused(err)) return send();
          throw err;
        });
        yield* apply(
          "messageId" in result
            ? { $case: "message", value: result }
            : { $case: "task", value: result },
        );
        while (!ending) {
          await sleep(this.config.pollIntervalMs, signal);
          const task = await client.getTask({ tenant: "", id: taskId! }, { signal });
          yield* apply({ $case: "task", value: task });
        }
      }
      yield* mapper.closeAll();
      yield* this.ending(ending!, input, mapper.contextId, taskId);
    } catch (err) {
      if (signal.aborted) return;
      throw new Error(`${this.agent} ${limitError(err)?.message ?? failed(err)}`);
    } finally {
      // Stopped before the task ended or paused (cancel, timeout, shutdown, a failure here):
      // the agent is told, rather than left working for nobody.
      if (taskId && !ending) await this.cancel(client, taskId, logger);
    }
  }

  private *ending(
    ending: TaskEnding,
    input: RunAgentInput,
    contextId: string,
    taskId: string | undefined,
  ): Iterable<Event> {
    const { threadId, runId } = input;
    if (ending.kind === "finished") {
      yield { type: "RUN_FINISHED", threadId, runId };
    } else if (ending.kind === "interrupted") {
      const interrupt = {
        id: interruptIdFor(contextId, taskId ?? "", ending.statusMessageId),
        reason: ending.reason,
        ...(ending.message ? { message: ending.message } : {}),
        metadata: { a2a: { taskId, contextId } },
      };
      yield {
        type: "RUN_FINISHED",
        threadId,
        runId,
        outcome: { type: "interrupt", interrupts: [interrupt] },
      };
    } else {
      yield {
        type: "RUN_ERROR",
        message: ending.message || `${this.agent}: task ${taskId} ended as ${ending.state}`,
        code: `a2a_${ending.state}`,
      };
    }
  }

  /** The A2A message of a run segment: its new user messages, or the answer to an interrupt. */
  private request(
    input: RunAgentInput,
    contextId: string,
    taskId: string | undefined,
  ): SendMessageRequest {
    const resume = input.resume?.[0];
    const parts = resume ? answerParts(resume.payload) : userParts(input.messages);
    if (parts.length === 0) {
      throw new Error(`${this.agent}: the run has no new user message to send`);
    }
    const message: Message = {
      messageId: uuidv4(),
      role: Role.ROLE_USER,
      parts,
      contextId,
      taskId: taskId ?? "",
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    };
    return { tenant: "", message, configuration: undefined, metadata: undefined };
  }

  private async cancel(client: CardClient["client"], taskId: string, logger: Logger) {
    try {
      const signal = AbortSignal.timeout(this.config.connectTimeoutMs || 10_000);
      await client.cancelTask({ tenant: "", id: taskId, metadata: undefined }, { signal });
    } catch (err) {
      logger.warn(
        { url: redact(this.config.url), taskId },
        `a2a: task ${taskId} could not be canceled: ${describe(err)}`,
      );
    }
  }
}
