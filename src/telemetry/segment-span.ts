/**
 * One run segment as spans: `invoke_agent {agent}` for the segment, and an `execute_tool
 * {tool}` child for each tool call the agent makes in it (from TOOL_CALL_START to its
 * TOOL_CALL_RESULT, or to the segment's end when the result comes later: a tool the client
 * runs answers in the next segment). Loaded only with the SDK (see ./sdk.ts).
 */
import {
  type Attributes,
  type Context,
  context,
  type Link,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { ACP, ERROR_TYPE, EXECUTE_TOOL, GEN_AI, INVOKE_AGENT } from "./genai.js";
import type { SegmentInfo, SegmentResult, SegmentSpan } from "./types.js";

interface ToolSpan {
  span: Span;
  args: string;
}

interface TokenUsage {
  model?: string;
  provider?: string;
  inputTokens?: number;
  outputTokens?: number;
  cachedInputTokens?: number;
  reasoningTokens?: number;
}

export class GenAiSegmentSpan implements SegmentSpan {
  private readonly span: Span;
  private readonly context: Context;
  private readonly tracer: Tracer;
  private readonly tools = new Map<string, ToolSpan>();
  /** The assistant's text, by message id (only with `captureContent`). */
  private readonly texts = new Map<string, string>();

  constructor(
    tracer: Tracer,
    info: SegmentInfo,
    parent: Context,
    links: Link[],
    private readonly captureContent: boolean,
  ) {
    const attributes: Attributes = {
      [GEN_AI.operationName]: INVOKE_AGENT,
      [GEN_AI.agentName]: info.agentName,
      [GEN_AI.agentId]: info.agentId,
      [ACP.runId]: info.runId,
      [ACP.runSegment]: info.segment,
    };
    if (info.threadId) attributes[GEN_AI.conversationId] = info.threadId;
    this.span = tracer.startSpan(
      `${INVOKE_AGENT} ${info.agentName}`,
      { kind: SpanKind.INTERNAL, attributes, links },
      parent,
    );
    this.context = trace.setSpan(parent, this.span);
    this.tracer = tracer;
  }

  within<T>(fn: () => Promise<T>): Promise<T> {
    return context.with(this.context, fn);
  }

  input(messages: unknown): void {
    if (!this.captureContent || !Array.isArray(messages)) return;
    this.span.setAttribute(GEN_AI.inputMessages, JSON.stringify(messages.map(toGenAiMessage)));
  }

  event(event: { type: string } & Record<string, unknown>): void {
    switch (event.type) {
      case "TOOL_CALL_START": {
        const id = String(event.toolCallId);
        const name = String(event.toolCallName);
        const span = this.tracer.startSpan(
          `${EXECUTE_TOOL} ${name}`,
          {
            kind: SpanKind.INTERNAL,
            attributes: {
              [GEN_AI.operationName]: EXECUTE_TOOL,
              [GEN_AI.toolName]: name,
              [GEN_AI.toolCallId]: id,
              [GEN_AI.toolType]: "function",
            },
          },
          this.context,
        );
        this.tools.get(id)?.span.end();
        this.tools.set(id, { span, args: "" });
        return;
      }
      case "TOOL_CALL_ARGS": {
        const tool = this.tools.get(String(event.toolCallId));
        if (tool && this.captureContent) tool.args += String(event.delta ?? "");
        return;
      }
      case "TOOL_CALL_RESULT": {
        const id = String(event.toolCallId);
        const tool = this.tools.get(id);
        if (!tool) return;
        if (this.captureContent) {
          tool.span.setAttribute(GEN_AI.toolCallResult, String(event.content ?? ""));
        }
        this.endTool(tool);
        this.tools.delete(id);
        return;
      }
      case "TEXT_MESSAGE_CONTENT": {
        if (!this.captureContent) return;
        const id = String(event.messageId);
        this.texts.set(id, (this.texts.get(id) ?? "") + String(event.delta ?? ""));
        return;
      }
      case "RUN_FINISHED":
      case "RUN_ERROR":
        if (Array.isArray(event.usage)) this.usage(event.usage as TokenUsage[]);
        return;
    }
  }

  end(result: SegmentResult): void {
    for (const tool of this.tools.values()) this.endTool(tool);
    this.tools.clear();
    if (this.captureContent && this.texts.size > 0) {
      const output = [...this.texts.values()].map((content) => ({
        role: "assistant",
        parts: [{ type: "text", content }],
      }));
      this.span.setAttribute(GEN_AI.outputMessages, JSON.stringify(output));
    }
    this.span.setAttribute(ACP.runStatus, result.status);
    if (result.errorType !== undefined) {
      this.span.setAttribute(ERROR_TYPE, result.errorType);
      // The description names the fault (the server's words, or the agent's error message).
      this.span.setStatus({ code: SpanStatusCode.ERROR, message: result.description });
    }
    this.span.end();
  }

  private endTool(tool: ToolSpan): void {
    if (this.captureContent && tool.args !== "") {
      tool.span.setAttribute(GEN_AI.toolCallArguments, tool.args);
    }
    tool.span.end();
  }

  /** Token counts, summed over the models the agent reports. */
  private usage(usages: TokenUsage[]): void {
    const sums: Record<string, number> = {};
    const add = (key: string, value: unknown) => {
      if (typeof value === "number" && Number.isFinite(value)) sums[key] = (sums[key] ?? 0) + value;
    };
    const models = new Set<string>();
    for (const usage of usages) {
      if (typeof usage !== "object" || usage === null) continue;
      add(GEN_AI.inputTokens, usage.inputTokens);
      add(GEN_AI.outputTokens, usage.outputTokens);
      add(GEN_AI.cacheReadInputTokens, usage.cachedInputTokens);
      add(GEN_AI.reasoningOutputTokens, usage.reasoningTokens);
      if (typeof usage.model === "string") models.add(usage.model);
    }
    this.span.setAttributes(sums);
    if (models.size === 1) this.span.setAttribute(GEN_AI.responseModel, [...models][0]!);
  }
}

/** An AG-UI message in the conventions' message form (role and parts). */
function toGenAiMessage(message: Record<string, unknown>): Record<string, unknown> {
  const parts: Record<string, unknown>[] = [];
  if (typeof message.content === "string" && message.content !== "") {
    parts.push(
      message.role === "tool"
        ? { type: "tool_call_response", id: message.toolCallId, response: message.content }
        : { type: "text", content: message.content },
    );
  } else if (Array.isArray(message.content)) {
    for (const part of message.content as Record<string, unknown>[]) {
      if (part?.type === "text") parts.push({ type: "text", content: part.text });
    }
  }
  if (Array.isArray(message.toolCalls)) {
    for (const call of message.toolCalls as Array<Record<string, Record<string, unknown>>>) {
      parts.push({
        type: "tool_call",
        id: call.id,
        name: call.function?.name,
        arguments: call.function?.arguments,
      });
    }
  }
  return { role: message.role, parts };
}
