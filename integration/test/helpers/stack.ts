import type { AcpClient } from "./acp.js";

export type Flow = "text" | "tool" | "state" | "history" | "interrupt" | "cancel";

/** One way of running an agent behind our server, as the shared flows see it. */
export interface Stack {
  /** How test names call it, e.g. "LangGraph in-process (module adapter, LangGraphAgent)". */
  title: string;
  /** Our server and the agent there; valid once the test file's beforeAll has run. */
  server(): { acp: AcpClient; agentId: string; agentName: string };
  /** The flows to run (all of them when absent): a variant of a stack runs only what differs. */
  flows?: Flow[];
  /** The ACP interrupt type (the AG-UI interrupt `reason`) this stack's approval arrives as. */
  interruptType: string;
  /** Whether the approval's interrupt carries the answer's JSON Schema (`responseSchema`). */
  approvalHasSchema: boolean;
  /**
   * Why a cancel cannot reach this agent, when it cannot. The cancel flows then check that our
   * run stops and that the agent runs on regardless, so a fixed upstream shows up as a failure.
   */
  cannotStop?: string;
  /**
   * Why the conversation cannot go on after an approval, when it cannot: the interrupt flows
   * then check that the next turn fails that way.
   */
  stuckAfterInterrupt?: { reason: string; error: RegExp };
  upstream: {
    /**
     * After a cancel: "stopped" once the agent upstream shows it was told to stop (its run ended
     * cancelled, its model's stream was aborted), else what it shows instead ("finished").
     */
    stopSeen(threadId: string): Promise<string>;
    /** The agent's own copy of a thread's messages, for stacks that keep one. */
    threadMessages?(threadId: string): Promise<Array<{ role: string; text: string }>>;
  };
}

/** Whether the stack runs this flow. */
export const runsFlow = (stack: Stack, flow: Flow): boolean =>
  !stack.flows || stack.flows.includes(flow);

/** The cancel flows' test name and their check of what the upstream saw. */
export function cancelExpectation(stack: Stack, title: string) {
  if (!stack.cannotStop) {
    return {
      title: `${title}, and the agent upstream is told to stop`,
      check: (seen: string) => {
        if (seen !== "stopped") throw new Error(`the agent upstream was not stopped: it ${seen}`);
      },
    };
  }
  return {
    title: `${title}; the agent upstream runs on (${stack.cannotStop})`,
    check: (seen: string) => {
      if (seen === "stopped") {
        throw new Error(
          `the agent upstream stopped after all: "${stack.cannotStop}" no longer holds`,
        );
      }
    },
  };
}
