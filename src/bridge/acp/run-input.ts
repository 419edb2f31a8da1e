import type { RunAgentInput } from "@ag-ui/core";
import { AGUI_PROTOCOL_VERSION } from "../../pipeline/version.js";
import type { AcpMessage } from "../../validation/acp-types.js";
import { acpToAguiMessages } from "./messages.js";
import type { RunCommand } from "./run-command.js";
import { threadStateForAgent } from "./values.js";

/** The thread a segment runs on, as far as its AG-UI input needs it. */
export interface RunInputThread {
  thread_id: string;
  messages: AcpMessage[] | null;
  values: unknown;
}

export interface RunInputSegment {
  /** The AG-UI runId of this segment. */
  aguiRunId: string;
  /** The first segment adds the command's input messages; a resume adds none. */
  first: boolean;
  /** The resume entries answering the interrupts (a resume only). */
  resume?: readonly unknown[] | null;
}

/** The bridge page's table "ACP run → AG-UI run input". */
export function buildRunInput(
  command: RunCommand,
  thread: RunInputThread,
  segment: RunInputSegment,
): RunAgentInput {
  const { input, config } = command;
  const history = acpToAguiMessages(thread.messages ?? []);
  const added = segment.first && input.messages ? acpToAguiMessages(input.messages) : [];

  const result: RunAgentInput = {
    threadId: thread.thread_id,
    runId: segment.aguiRunId,
    protocolVersion: AGUI_PROTOCOL_VERSION,
    messages: [...history, ...added],

    tools: (input.tools ?? []) as RunAgentInput["tools"],
    context: (input.context ?? []) as RunAgentInput["context"],
    forwardedProps: {
      ...(input.forwardedProps ?? {}),
      ...(config ? { acp: { config } } : {}),
    },
  };
  // AG-UI forbids a null state; a thread whose state is null sends none.
  const state = ownsState(command) ? input.state : threadStateForAgent(thread.values, input.state);
  if (state !== null && state !== undefined) result.state = state;
  if (segment.resume && segment.resume.length > 0)
    result.resume = segment.resume as RunAgentInput["resume"];
  return result;
}

/**
 * Whether the run starts from the state its client sent: an AG-UI client (the AG-UI face's)
 * owns its state, so what it sends wins over the thread's.
 */
export function ownsState(command: RunCommand): boolean {
  return command.agui !== undefined && command.input.state !== undefined;
}
