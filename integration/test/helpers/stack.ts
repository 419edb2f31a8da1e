import type { AcpClient } from "./acp.js";

/** One way of running an agent behind our server, as the shared flows see it. */
export interface Stack {
  /** How test names call it, e.g. "LangGraph in-process (module adapter)". */
  title: string;
  /** Our server and the agent's id there; valid once the test file's beforeAll has run. */
  server(): { acp: AcpClient; agentId: string; agentName: string };
  /** The ACP interrupt type (the AG-UI interrupt `reason`) this stack's approval arrives as. */
  interruptType: string;
  /** Whether the approval's interrupt carries the answer's JSON Schema (`responseSchema`). */
  approvalHasSchema: boolean;
  upstream: {
    /**
     * After a cancel: resolves once the agent upstream shows it was stopped (its run ended
     * cancelled, its model's stream was aborted); throws saying what it saw instead.
     */
    sawStop(threadId: string): Promise<void>;
    /** The agent's own copy of a thread's messages, for stacks that keep one. */
    threadMessages?(threadId: string): Promise<Array<{ role: string; text: string }>>;
  };
}
