import type { Interrupt } from "@ag-ui/core";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { ElicitResultSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  answerOf,
  elicitationMessageOf,
  expectedSchemaOf,
  requestedSchemaOf,
  resumeEntryOf,
} from "../../bridge/mcp/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { RunRecord } from "../../storage/types.js";
import type { AskCaller } from "./tool-calls.js";

/** How long a person has to answer one question before the call gives up asking. */
const ANSWER_TIMEOUT_MS = 30 * 60 * 1000;

type SendRequest = (
  request: { method: "elicitation/create"; params: Record<string, unknown> },
  schema: typeof ElicitResultSchema,
  options: { timeout: number; signal: AbortSignal },
) => Promise<{ action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> }>;

/**
 * Asks the caller's client each of an interrupted run's questions with `elicitation/create`
 * (form mode), on the call's own stream, when the client declared it can be asked
 * (2025-11-25, Elicitation). Accept answers with the form's content; decline answers the
 * interrupt as cancelled (the agent goes on knowing it was refused); cancel (the person
 * dismissed the question) leaves the run interrupted, and the call says how to answer it later.
 */
export function elicitingAsker(
  server: Server,
  agent: RegisteredAgent,
  sendRequest: SendRequest,
  signal: AbortSignal,
): AskCaller | undefined {
  const elicitation = server.getClientCapabilities()?.elicitation;
  if (!elicitation) return undefined;
  // A client that names modes must name form; one that names none does form (2025-11-25).
  const modes = Object.keys(elicitation);
  if (modes.length > 0 && !("form" in elicitation)) return undefined;
  const declared = agent.descriptor.specs.interrupts ?? [];
  return async (_run: RunRecord, interrupts: Interrupt[]) => {
    const resume = [];
    for (const interrupt of interrupts) {
      const { schema, freeForm } = requestedSchemaOf(expectedSchemaOf(interrupt, declared));
      const result = await sendRequest(
        {
          method: "elicitation/create",
          params: {
            mode: "form",
            message: elicitationMessageOf(agent.name, interrupt),
            requestedSchema: schema,
          },
        },
        ElicitResultSchema,
        { timeout: ANSWER_TIMEOUT_MS, signal },
      );
      if (result.action === "cancel") return undefined;
      resume.push(
        resumeEntryOf(
          interrupt,
          result.action === "accept"
            ? { accepted: true, payload: answerOf(result.content, freeForm) }
            : { accepted: false },
        ) as unknown as Record<string, unknown>,
      );
    }
    return { resume };
  };
}
