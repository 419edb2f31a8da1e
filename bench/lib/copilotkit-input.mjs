// The body of a CopilotKit run on a new thread, as the conversation workloads send it: a
// RunAgentInput with fresh thread, run and message ids, one user message.
import { randomUUID } from "node:crypto";

export function newThreadRunBody() {
  return JSON.stringify({
    threadId: randomUUID(),
    runId: randomUUID(),
    messages: [{ id: randomUUID(), role: "user", content: "hello from the benchmark" }],
    state: {},
    tools: [],
    context: [],
    forwardedProps: {},
  });
}
