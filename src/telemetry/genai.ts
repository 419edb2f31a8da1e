/**
 * The GenAI semantic conventions' attribute names the spans use. They are still "incubating"
 * upstream, and OpenTelemetry advises copying incubating names rather than importing them (they
 * may be renamed between releases of the package): so they are spelled here, once.
 */
export const GEN_AI = {
  operationName: "gen_ai.operation.name",
  agentName: "gen_ai.agent.name",
  agentId: "gen_ai.agent.id",
  conversationId: "gen_ai.conversation.id",
  responseModel: "gen_ai.response.model",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  cacheReadInputTokens: "gen_ai.usage.cache_read.input_tokens",
  reasoningOutputTokens: "gen_ai.usage.reasoning.output_tokens",
  toolName: "gen_ai.tool.name",
  toolCallId: "gen_ai.tool.call.id",
  toolType: "gen_ai.tool.type",
  /** Content (only with `captureContent`). */
  inputMessages: "gen_ai.input.messages",
  outputMessages: "gen_ai.output.messages",
  toolCallArguments: "gen_ai.tool.call.arguments",
  toolCallResult: "gen_ai.tool.call.result",
} as const;

export const INVOKE_AGENT = "invoke_agent";
export const EXECUTE_TOOL = "execute_tool";

/** The server's own attributes: what the conventions have no name for. */
export const ACP = {
  runId: "acp.run.id",
  runSegment: "acp.run.segment",
  runStatus: "acp.run.status",
} as const;

export const ERROR_TYPE = "error.type";
