import type { Logger } from "pino";

/** How often the repeats of deviations already warned about are summed up in the log. */
const SUMMARY_EVERY_MS = 60_000;
/** Kinds remembered per engine; past this, a new kind is warned about every time. */
const MAX_KINDS = 1_000;

/**
 * The log of agents' deviations the server has handled (an unknown field stripped, a legacy
 * event converted, a stream left open after the run's end): warned about once per agent and
 * kind, then counted, and the count logged every minute and when the engine stops. A popular
 * agent with a known quirk would otherwise log the same line on every run (CopilotKit's
 * BuiltInAgent puts `finishReason` on RUN_FINISHED), drowning what matters.
 *
 * A warning is a deviation when its context names one: `{ deviation: "<kind>" }`, the kind
 * saying what happened without what varies from run to run. Other warnings pass untouched.
 */
export class AgentDeviations {
  private readonly seen = new Map<string, { agent: string; kind: string; repeats: number }>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly summaryEveryMs = SUMMARY_EVERY_MS,
    /** Told of every deviation, the first and the repeats alike (metrics). */
    private readonly onDeviation?: (agent: string) => void,
  ) {}

  /**
   * Makes the logger of one run of `agent` (a child logger of its own) count a deviation
   * already warned about for the agent instead of logging it. Its own children log every
   * warning: pino gives each child its own level methods.
   */
  watch(agent: string, runLogger: Logger): Logger {
    const warn = runLogger.warn;
    runLogger.warn = ((...args: Parameters<Logger["warn"]>) => {
      const kind = deviationOf(args[0]);
      if (kind !== undefined) {
        this.onDeviation?.(agent);
        if (this.repeated(agent, kind)) return;
      }
      warn.apply(runLogger, args);
    }) as Logger["warn"];
    return runLogger;
  }

  /** Sums up repeats every `summaryEveryMs` (on an unref'd timer) until `stop`. */
  start(): void {
    this.timer ??= setInterval(() => this.summarize(), this.summaryEveryMs);
    this.timer.unref();
  }

  /** Stops the timer and logs the repeats not summed up yet. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.summarize();
  }

  /** Logs, per agent and kind, the repeats since the last summary, and starts counting anew. */
  summarize(): void {
    for (const entry of this.seen.values()) {
      if (entry.repeats === 0) continue;
      this.logger.warn(
        { agent: entry.agent, deviation: entry.kind, repeats: entry.repeats },
        `agent ${entry.agent}: ${entry.kind} — seen ${entry.repeats} more ${entry.repeats === 1 ? "time" : "times"}`,
      );
      entry.repeats = 0;
    }
  }

  /** Whether the deviation was warned about already (then it is counted). */
  private repeated(agent: string, kind: string): boolean {
    const key = `${agent}\u0000${kind}`;
    const entry = this.seen.get(key);
    if (entry) {
      entry.repeats++;
      return true;
    }
    if (this.seen.size < MAX_KINDS) this.seen.set(key, { agent, kind, repeats: 0 });
    return false;
  }
}

function deviationOf(context: unknown): string | undefined {
  if (typeof context !== "object" || context === null) return undefined;
  const kind = (context as { deviation?: unknown }).deviation;
  return typeof kind === "string" ? kind : undefined;
}
