/**
 * A run as an MCP `CallToolResult`: what the agent said as text content, its result or state as
 * `structuredContent`, and a failed run as `isError: true` with the agent's own message (MCP
 * 2025-11-25, "Error Handling": tool execution errors are results, not protocol errors).
 */
import type { Interrupt } from "@ag-ui/core";
import type { AcpMessage } from "../acp/messages.js";
import { isObject } from "../acp/values.js";

export interface McpCallToolResult {
  content: Array<{ type: "text"; text: string }>;
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
  [key: string]: unknown;
}

/** What of a stored run (storage's RunRecord) its result is made of. */
export interface RunRecord {
  run_id: string;
  status: string;
  output: unknown;
}

/** The text of a message's content (its text parts, in order). */
function textOf(message: AcpMessage): string {
  if (typeof message.content === "string") return message.content;
  if (!Array.isArray(message.content)) return "";
  return message.content
    .map((block) => (block.type === "text" && typeof block.text === "string" ? block.text : ""))
    .join("");
}

/**
 * What the agent said in this call: the assistant messages after the last user message (the
 * one this call sent), so that a call continuing a conversation answers only its own reply.
 */
export function replyTextOf(messages: readonly unknown[]): string {
  const list = messages.filter(isObject) as AcpMessage[];
  let from = 0;
  list.forEach((message, index) => {
    if (message.role === "user") from = index + 1;
  });
  return list
    .slice(from)
    .filter((message) => message.role === "assistant")
    .map(textOf)
    .filter((text) => text !== "")
    .join("\n\n");
}

/** The `related run` meta every result carries: the run behind the call, for other faces. */
export const RUN_META_KEY = "io.github.acp-agui/run";

/** A finished run (success, error, timeout, cancelled) as the call's result. */
export function callResultOf(run: RunRecord, withStructured: boolean): McpCallToolResult {
  const meta = { [RUN_META_KEY]: { runId: run.run_id, status: run.status } };
  const output = (run.output ?? {}) as Record<string, unknown>;
  if (output.type === "result") {
    const values = isObject(output.values) ? output.values : {};
    const structured = isObject(output.result) ? output.result : values;
    const text = replyTextOf(Array.isArray(output.messages) ? output.messages : []);
    const hasStructured = Object.keys(structured).length > 0;
    return {
      content: [
        {
          type: "text",
          text: text || (hasStructured ? JSON.stringify(structured) : "(the agent said nothing)"),
        },
      ],
      ...(withStructured || hasStructured ? { structuredContent: structured } : {}),
      _meta: meta,
    };
  }
  const description =
    typeof output.description === "string" && output.description !== ""
      ? output.description
      : `the run ended ${run.status}`;
  return {
    content: [{ type: "text", text: `The agent's run ${run.status}: ${description}` }],
    isError: true,
    _meta: meta,
  };
}

/**
 * An interrupted run for a caller that cannot be asked (no elicitation, or it dismissed the
 * question): what the agent asks, and how to answer it over ACP, where the run waits.
 */
export function pendingResultOf(
  run: RunRecord,
  interrupts: readonly Interrupt[],
): McpCallToolResult {
  const asks = interrupts
    .map((interrupt) => interrupt.message || interrupt.reason || "input")
    .join("; ");
  return {
    content: [
      {
        type: "text",
        text:
          `The agent is waiting for an answer: ${asks}. Its run ${run.run_id} stays interrupted: ` +
          `resume it with POST /runs/${run.run_id} (ACP) or call this tool from a client that ` +
          "supports elicitation.",
      },
    ],
    isError: true,
    _meta: { [RUN_META_KEY]: { runId: run.run_id, status: run.status } },
  };
}
