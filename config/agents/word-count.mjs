// A sample in-process agent for the `module` adapter: an async generator that receives the
// AG-UI RunAgentInput and yields AG-UI events. It counts the words of the last user message,
// reports the count through a state snapshot, and keeps a running total across runs.
import { randomUUID } from "node:crypto";

export default async function* wordCount(input) {
  const { threadId, runId } = input;
  yield { type: "RUN_STARTED", threadId, runId };

  const last = [...input.messages].reverse().find((message) => message.role === "user");
  const text = typeof last?.content === "string" ? last.content : "";
  const words = text.split(/\s+/).filter(Boolean).length;
  const total = (input.state?.total_words ?? 0) + words;

  const messageId = randomUUID();
  yield { type: "TEXT_MESSAGE_START", messageId, role: "assistant" };
  yield { type: "TEXT_MESSAGE_CONTENT", messageId, delta: `${words} words (${total} so far).` };
  yield { type: "TEXT_MESSAGE_END", messageId };
  yield { type: "STATE_SNAPSHOT", snapshot: { last_count: words, total_words: total } };
  yield { type: "RUN_FINISHED", threadId, runId, result: { words } };
}
