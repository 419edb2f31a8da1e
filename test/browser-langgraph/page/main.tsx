/**
 * A chat page as LangGraph frontends write one (agent-chat-ui's flows): `useStream` from
 * `@langchain/langgraph-sdk/react` pointed at an acp-agui server's LangGraph face, rejoining its
 * run after a reload (`reconnectOnMount`), and answering an interrupt with
 * `submit(undefined, { command: { resume } })`. The API URL, the assistant and the thread come
 * from the query string; a new thread's id is written back there, so a reload keeps it.
 */
import { useStream } from "@langchain/langgraph-sdk/react";
import { StrictMode, useState } from "react";
import { createRoot } from "react-dom/client";

const query = new URLSearchParams(window.location.search);
const apiUrl = query.get("api") ?? "";
const assistantId = query.get("assistant") ?? "echo";

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((block) => (block as { text?: string }).text ?? "").join("");
  }
  return "";
}

function Chat() {
  const [threadId, setThreadId] = useState<string | null>(query.get("thread"));
  const [draft, setDraft] = useState("");
  const thread = useStream<{ messages: Array<{ type: string; content: unknown; id?: string }> }>({
    apiUrl,
    assistantId,
    messagesKey: "messages",
    threadId,
    reconnectOnMount: true,
    onThreadId: (id) => {
      setThreadId(id);
      const url = new URL(window.location.href);
      url.searchParams.set("thread", id);
      window.history.replaceState(null, "", url);
    },
  });
  const interrupt = thread.interrupt as { id?: string; value?: { message?: string } } | undefined;
  return (
    <main>
      <ol id="messages">
        {thread.messages.map((message, index) => (
          <li key={message.id ?? index} data-type={message.type}>
            {textOf(message.content)}
          </li>
        ))}
      </ol>
      <p id="status">{thread.isLoading ? "loading" : "idle"}</p>
      {thread.error ? <p id="error">{String(thread.error)}</p> : null}
      {interrupt?.value ? (
        <section id="interrupt">
          <p id="interrupt-message">{interrupt.value.message}</p>
          <button
            id="approve"
            type="button"
            onClick={() => thread.submit(undefined, { command: { resume: { approved: true } } })}
          >
            Approve
          </button>
        </section>
      ) : null}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          thread.submit({ messages: [{ type: "human", content: draft }] });
          setDraft("");
        }}
      >
        <input id="draft" value={draft} onChange={(event) => setDraft(event.target.value)} />
        <button id="send" type="submit">
          Send
        </button>
      </form>
    </main>
  );
}

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <Chat />
  </StrictMode>,
);
