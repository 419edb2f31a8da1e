import type { RunAgentInput } from "@ag-ui/core";
import type { AgUiMessage } from "../../pipeline/types.js";
import { acpToAguiMessage, aguiToAcpMessages } from "../acp/messages.js";
import {
  type FaceRunCommand,
  parseRunCommand,
  type RunCommand,
  type RunFace,
  withAguiOrigin,
} from "../acp/run-command.js";

export interface AguiRunOptions {
  agentId: string;
  /** Ids of the messages the thread has already: AG-UI clients send the whole conversation. */
  knownMessageIds: ReadonlySet<unknown>;
  /** What the client closing its request does to the run (ACP `on_disconnect`). */
  onDisconnect: "cancel" | "continue";
  /** The face serving the AG-UI client (the AG-UI face, CopilotKit's, …): kept with the run. */
  face: RunFace;
}

/**
 * An AG-UI `RunAgentInput` as a run command on the ACP thread behind it: the messages the thread
 * has not seen yet, the client's tools, context, state and forwarded props, streamed as AG-UI
 * events (the `custom` mode), and the client's own thread and run ids as the run's origin.
 */
export function aguiRunCommand(input: RunAgentInput, options: AguiRunOptions): FaceRunCommand {
  const fresh = input.messages.filter((m) => !options.knownMessageIds.has(m.id));
  const acpInput: Record<string, unknown> = {
    messages: aguiToAcpMessages(fresh as AgUiMessage[]),
    tools: input.tools ?? [],
    context: input.context ?? [],
  };
  if (input.state !== undefined && input.state !== null) acpInput.state = input.state;
  if (input.forwardedProps !== undefined) acpInput.forwardedProps = input.forwardedProps;
  const command = parseRunCommand(
    {
      agent_id: options.agentId,
      input: acpInput,
      if_not_exists: "create",
      on_disconnect: options.onDisconnect,
      stream_mode: ["custom"],
    },
    options.face,
  );
  return withAguiOrigin(command, { threadId: input.threadId, runId: input.runId });
}

/** The run's ids as the AG-UI client that made it gave them (runs made through an AG-UI face). */
export function clientIds(command: RunCommand): { threadId: string; runId: string } | undefined {
  const agui = command.agui;
  return agui?.threadId !== undefined && agui.runId !== undefined
    ? { threadId: agui.threadId, runId: agui.runId }
    : undefined;
}

/**
 * The run's RunAgentInput as a replayed RUN_STARTED carries it: the messages the run added to
 * the thread, with its tools, context, state and forwarded props.
 */
export function startedInput(
  command: RunCommand,
  ids: { threadId: string; runId: unknown },
): Record<string, unknown> {
  const { input } = command;
  return {
    threadId: ids.threadId,
    runId: ids.runId,
    messages: input.messages ? knownMessages(input.messages) : [],
    tools: input.tools ?? [],
    context: input.context ?? [],
    ...(input.state !== undefined && input.state !== null ? { state: input.state } : {}),
    forwardedProps: input.forwardedProps ?? {},
  };
}

/** ACP messages as AG-UI ones, leaving out those AG-UI has no form for (a client cannot show them). */
export function knownMessages(messages: readonly unknown[]): AgUiMessage[] {
  const out: AgUiMessage[] = [];
  for (const message of messages) {
    try {
      out.push(acpToAguiMessage(message));
    } catch {
      // Written through ACP in a shape AG-UI has no form for.
    }
  }
  return out;
}
