import { useState } from "preact/hooks";
import { Empty } from "../components/common";
import { JsonView } from "../components/json-view";
import type { AcpMessage } from "../lib/types";

/**
 * Messages as a conversation: user and assistant text, tool calls with their arguments and
 * the result that answered each, reasoning (folded), activities as their structured content.
 */
export function Conversation(props: {
  messages: AcpMessage[];
  /** Subagent run id → name, to label what a subagent said. */
  lanes?: Map<string, string>;
}) {
  const { messages, lanes } = props;
  if (messages.length === 0) return <Empty>No messages yet.</Empty>;
  const results = new Map<string, AcpMessage>();
  for (const m of messages) {
    if (m.role === "tool" && typeof m.toolCallId === "string") results.set(m.toolCallId, m);
  }
  return (
    <div class="conversation" data-testid="conversation">
      {messages.map((message, index) => {
        // A tool result is shown under the call it answers, when that call is here.
        if (message.role === "tool" && typeof message.toolCallId === "string") {
          const answered = messages.some((m) =>
            toolCalls(m).some((call) => call.id === message.toolCallId),
          );
          if (answered) return null;
        }
        return (
          <MessageView
            key={message.id ?? index}
            message={message}
            results={results}
            lanes={lanes}
          />
        );
      })}
    </div>
  );
}

interface ToolCall {
  id: string;
  function?: { name?: string; arguments?: string };
  name?: string;
}

function toolCalls(message: AcpMessage): ToolCall[] {
  return Array.isArray(message.toolCalls) ? (message.toolCalls as ToolCall[]) : [];
}

function MessageView({
  message,
  results,
  lanes,
}: {
  message: AcpMessage;
  results: Map<string, AcpMessage>;
  lanes?: Map<string, string>;
}) {
  const role = message.role;
  const text = textOf(message.content);
  const lane = typeof message.subagentRunId === "string" ? message.subagentRunId : null;
  if (role === "reasoning") return <Reasoning text={text} />;
  if (role === "activity") {
    const content = Array.isArray(message.content)
      ? message.content.find((b) => b.type === "activity")?.content
      : message.content;
    return (
      <div class="msg activity" data-role="activity">
        <div class="msg-role">activity · {String(message.activityType ?? "")}</div>
        <JsonView value={content} open={2} />
      </div>
    );
  }
  return (
    <div class={`msg ${role}`} data-role={role}>
      <div class="msg-role">
        {role}
        {typeof message.name === "string" && ` · ${message.name}`}
        {lane && <span class="tag lane">subagent {lanes?.get(lane) ?? lane.slice(-8)}</span>}
      </div>
      {text !== "" && <div class="msg-text">{text}</div>}
      {Array.isArray(message.content) && message.content.some((b) => b.type !== "text") && (
        <JsonView value={message.content.filter((b) => b.type !== "text")} open={1} />
      )}
      {toolCalls(message).map((call) => (
        <ToolCallView key={call.id} call={call} result={results.get(call.id)} />
      ))}
      {role === "tool" && typeof message.toolCallId === "string" && (
        <div class="muted small">answers {message.toolCallId}</div>
      )}
    </div>
  );
}

function ToolCallView({ call, result }: { call: ToolCall; result?: AcpMessage }) {
  const name = call.function?.name ?? call.name ?? "tool";
  const args = parseMaybe(call.function?.arguments);
  return (
    <div class="tool-call" data-tool={name}>
      <div class="tool-head">
        <span class="tool-icon">ƒ</span>
        <code>{name}</code>
        <span class="muted small">{call.id}</span>
      </div>
      <div class="tool-part">
        <span class="muted small">arguments</span>
        {typeof args === "string" ? (
          <pre class="code small">{args}</pre>
        ) : (
          <JsonView value={args} open={2} />
        )}
      </div>
      <div class="tool-part">
        <span class="muted small">result</span>
        {result ? (
          (() => {
            const content = parseMaybe(textOf(result.content));
            return typeof content === "string" ? (
              <pre class="code small">{content}</pre>
            ) : (
              <JsonView value={content} open={2} />
            );
          })()
        ) : (
          <span class="muted small"> pending</span>
        )}
      </div>
    </div>
  );
}

function Reasoning({ text }: { text: string }) {
  const [open, setOpen] = useState(false);
  return (
    <div class="msg reasoning" data-role="reasoning">
      <button type="button" class="link small" onClick={() => setOpen(!open)}>
        {open ? "▾" : "▸"} reasoning ({text.length} characters)
      </button>
      {open && <div class="msg-text">{text}</div>}
    </div>
  );
}

function textOf(content: AcpMessage["content"] | undefined): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter((b) => b.type === "text")
    .map((b) => String(b.text ?? ""))
    .join("");
}

function parseMaybe(text: string | undefined): unknown {
  if (text === undefined) return "";
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
