/**
 * AG-UI run input → OpenAI chat-completions request body. Kept to what every
 * OpenAI-compatible server accepts (vLLM, Ollama, llama.cpp, LM Studio, hosted APIs):
 * plain-string content unless a part needs more, `system` for developer messages,
 * `max_tokens` rather than the newer `max_completion_tokens`.
 */
import type { RunAgentInput } from "@ag-ui/core";
import type { OpenAiAdapterConfig } from "./openai-options.js";

type Rec = Record<string, unknown>;

export type OpenAiContentPart =
  | { type: "text"; text: string }
  | { type: "image_url"; image_url: { url: string } };

export type OpenAiMessage =
  | { role: "system"; content: string; name?: string }
  | { role: "user"; content: string | OpenAiContentPart[]; name?: string }
  | {
      role: "assistant";
      content: string | null;
      name?: string;
      tool_calls?: OpenAiToolCall[];
    }
  | { role: "tool"; tool_call_id: string; content: string };

export interface OpenAiToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export interface OpenAiTool {
  type: "function";
  function: { name: string; description: string; parameters: unknown };
}

export interface ChatCompletionRequest {
  model: string;
  stream: true;
  stream_options: { include_usage: true };
  messages: OpenAiMessage[];
  tools?: OpenAiTool[];
  temperature?: number;
  top_p?: number;
  max_tokens?: number;
}

const isRecord = (value: unknown): value is Rec =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const str = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);

/** Builds the streaming request for one run. */
export function buildChatRequest(
  config: OpenAiAdapterConfig,
  input: RunAgentInput,
): ChatCompletionRequest {
  const body: ChatCompletionRequest = {
    model: config.model,
    stream: true,
    stream_options: { include_usage: true },
    messages: toOpenAiMessages(input, config.systemPrompt),
  };
  if (config.temperature !== undefined) body.temperature = config.temperature;
  if (config.topP !== undefined) body.top_p = config.topP;
  if (config.maxTokens !== undefined) body.max_tokens = config.maxTokens;
  const tools = toOpenAiTools(input.tools);
  if (tools.length > 0) body.tools = tools;
  return body;
}

/**
 * The conversation as the model sees it: the configured system prompt, then the AG-UI
 * `context` entries as one system message, then the messages in order. Reasoning and
 * activity messages are the agent's own by-products and are not sent back.
 */
export function toOpenAiMessages(input: RunAgentInput, systemPrompt?: string): OpenAiMessage[] {
  const out: OpenAiMessage[] = [];
  if (systemPrompt) out.push({ role: "system", content: systemPrompt });
  const context = contextMessage(input.context);
  if (context) out.push({ role: "system", content: context });
  for (const message of input.messages ?? []) {
    const converted = toOpenAiMessage(message as unknown as Rec);
    if (converted) out.push(converted);
  }
  return out;
}

function toOpenAiMessage(message: Rec): OpenAiMessage | undefined {
  const name = str(message.name);
  const named = name === undefined ? {} : { name };
  switch (message.role) {
    case "system":
    case "developer":
      return { role: "system", content: contentText(message.content), ...named };
    case "user":
      return { role: "user", content: userContent(message.content), ...named };
    case "assistant": {
      const calls = Array.isArray(message.toolCalls)
        ? message.toolCalls.filter(isRecord).map(toOpenAiToolCall)
        : [];
      const text = message.content === undefined ? "" : contentText(message.content);
      return {
        role: "assistant",
        content: text === "" && calls.length > 0 ? null : text,
        ...named,
        ...(calls.length > 0 && { tool_calls: calls }),
      };
    }
    case "tool": {
      const text = contentText(message.content);
      const error = str(message.error);
      return {
        role: "tool",
        tool_call_id: str(message.toolCallId) ?? "",
        content:
          error === undefined
            ? text
            : text === ""
              ? `Error: ${error}`
              : `${text}\n\nError: ${error}`,
      };
    }
    default:
      return undefined;
  }
}

function toOpenAiToolCall(call: Rec): OpenAiToolCall {
  const fn = isRecord(call.function) ? call.function : {};
  const args = fn.arguments;
  return {
    id: str(call.id) ?? "",
    type: "function",
    function: {
      name: str(fn.name) ?? "",
      arguments: typeof args === "string" ? args : JSON.stringify(args ?? {}),
    },
  };
}

/** A string when the content is all text (what every server accepts), else OpenAI parts. */
function userContent(content: unknown): string | OpenAiContentPart[] {
  if (!Array.isArray(content)) return contentText(content);
  const parts = content.filter(isRecord).map(toOpenAiPart);
  if (parts.every((part) => part.type === "text")) {
    return parts.map((part) => (part as { text: string }).text).join("");
  }
  return parts;
}

function toOpenAiPart(part: Rec): OpenAiContentPart {
  if (part.type === "text") return { type: "text", text: str(part.text) ?? "" };
  const source = isRecord(part.source) ? part.source : {};
  const value = str(source.value);
  const mimeType = str(source.mimeType);
  if (part.type === "image" && value !== undefined) {
    if (source.type === "url") return { type: "image_url", image_url: { url: value } };
    if (source.type === "data") {
      return {
        type: "image_url",
        image_url: { url: `data:${mimeType ?? "image/png"};base64,${value}` },
      };
    }
  }
  const what = [str(part.type) ?? "attachment", mimeType].filter(Boolean).join(" ");
  const where = source.type === "url" || source.type === "file" ? `: ${value}` : "";
  return { type: "text", text: `[${what}${where}]` };
}

/** Plain text of AG-UI content: a string, or the text parts of a part list. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .filter(isRecord)
      .map((part) => (part.type === "text" ? (str(part.text) ?? "") : ""))
      .join("");
  }
  if (content === undefined || content === null) return "";
  return JSON.stringify(content);
}

function contextMessage(context: RunAgentInput["context"]): string | undefined {
  if (!Array.isArray(context) || context.length === 0) return undefined;
  const lines = context.map((entry) => `- ${entry.description}: ${entry.value}`);
  return `Context:\n${lines.join("\n")}`;
}

/** AG-UI tools → OpenAI function tools; an absent schema means "no arguments". */
export function toOpenAiTools(tools: RunAgentInput["tools"]): OpenAiTool[] {
  if (!Array.isArray(tools)) return [];
  return tools.map((tool) => ({
    type: "function",
    function: {
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters ?? { type: "object", properties: {} },
    },
  }));
}
