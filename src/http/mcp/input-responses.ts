import type { Interrupt } from "@ag-ui/core";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import {
  answerOf,
  expectedSchemaOf,
  inputKeyOf,
  requestedSchemaOf,
  resumeEntryOf,
} from "../../bridge/mcp/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import { RPC } from "./tool-calls.js";

const ACTIONS = new Set(["accept", "decline", "cancel"]);

/**
 * A retry's `inputResponses` (ElicitResults keyed as the InputRequiredResult asked) as the
 * run's resume: accept answers with the form's content, decline answers the interrupt as
 * cancelled. "missing" when a question has no answer (the client is asked again, as
 * 2026-07-28 MRTR says); "dismissed" when the person cancelled one (the run stays waiting).
 * Answers to questions never asked are ignored; a malformed answer is InvalidParams.
 */
export function resumeOfInputResponses(
  agent: RegisteredAgent,
  interrupts: readonly Interrupt[],
  responses: unknown,
): { resume: Array<Record<string, unknown>> } | "missing" | "dismissed" {
  if (responses === undefined) return "missing";
  if (typeof responses !== "object" || responses === null || Array.isArray(responses)) {
    throw new McpError(RPC.invalidParams, "params.inputResponses must be an object");
  }
  const declared = agent.descriptor.specs.interrupts ?? [];
  const resume: Array<Record<string, unknown>> = [];
  for (const interrupt of interrupts) {
    const key = inputKeyOf(interrupt);
    const response = (responses as Record<string, unknown>)[key];
    if (response === undefined) return "missing";
    const action = (response as { action?: unknown } | null)?.action;
    const content = (response as { content?: unknown }).content;
    if (typeof action !== "string" || !ACTIONS.has(action)) {
      throw new McpError(
        RPC.invalidParams,
        `inputResponses.${key}.action must be accept, decline or cancel`,
      );
    }
    if (
      content !== undefined &&
      (typeof content !== "object" || content === null || Array.isArray(content))
    ) {
      throw new McpError(RPC.invalidParams, `inputResponses.${key}.content must be an object`);
    }
    if (action === "cancel") return "dismissed";
    const { freeForm } = requestedSchemaOf(expectedSchemaOf(interrupt, declared));
    resume.push(
      resumeEntryOf(
        interrupt,
        action === "accept"
          ? { accepted: true, payload: answerOf(content as Record<string, unknown>, freeForm) }
          : { accepted: false },
      ) as unknown as Record<string, unknown>,
    );
  }
  return { resume };
}
