import type { AgentCapabilities, RunAgentInput } from "@ag-ui/core";
import type { Logger } from "pino";
import type { AgentSelfDescription } from "../config/specs.js";

/** ACP run `config` (tags, recursion_limit, configurable), handed through untouched. */
export interface RunConfig {
  tags?: string[];
  recursion_limit?: number;
  configurable?: Record<string, unknown>;
}

export interface AdapterRunContext {
  /** Aborted on cancel, timeout, disconnect or shutdown; the adapter must stop promptly. */
  signal: AbortSignal;
  config: RunConfig;
  /** 0 for the first start of the ACP run, then 1, 2… for each resume. */
  segment: number;
  logger: Logger;
}

/**
 * The only thing that knows an agent. It receives an AG-UI `RunAgentInput` and yields AG-UI
 * events; everything ACP (threads, history, interrupts, streaming, persistence) is the
 * server's job. Yielded values are untrusted: the event pipeline validates each one.
 */
export interface AgentAdapter {
  run(input: RunAgentInput, context: AdapterRunContext): AsyncIterable<unknown>;
  /** What this adapter can do, refining the descriptor and the AG-UI capabilities answer. */
  capabilities?(): Partial<AgentCapabilities>;
  /**
   * What the agent says of itself (an A2A agent's card), refining its ACP descriptor; read on
   * every descriptor request, so it returns the same object until that changes.
   */
  describe?(): AgentSelfDescription | undefined;
  /** Releases resources at shutdown. */
  close?(): Promise<void>;
}

/** Resolves after `ms`, or rejects early when the signal aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

const abortedGetter = Object.getOwnPropertyDescriptor(AbortSignal.prototype, "aborted")!.get!;

/**
 * `signal.aborted`, for code that runs per event. On Node 20 every AbortSignal has a hidden
 * class of its own, so optimized code that reads `signal.aborted` is thrown away when it meets
 * the next run's signal, and compiled again. Calling the getter itself leaves the class check
 * to the getter's own code, which sees every signal of the process and soon stops checking.
 */
export function isAborted(signal: AbortSignal): boolean {
  return abortedGetter.call(signal) as boolean;
}
