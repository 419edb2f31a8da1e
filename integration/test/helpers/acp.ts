import { assertSpecFrame, assertSpecResponse } from "../../../test/helpers/spec.js";
import { openSse, readSse, type SseConnection } from "../../../test/helpers/sse.js";

export type Json = Record<string, unknown>;
export interface Message extends Json {
  role: string;
  content?: unknown;
  id?: string;
  toolCalls?: Array<{ id: string; function: { name: string; arguments: string } }>;
  toolCallId?: string;
}
export interface Run extends Json {
  run_id: string;
  thread_id?: string;
  status: string;
}
export interface RunWait {
  run: Run;
  output: Json & { type: string; values?: Json; messages?: Message[]; interrupt?: Json };
}

/** An ACP client for the server under test; every answer is checked against the ACP spec. */
export class AcpClient {
  constructor(readonly base: string) {}

  async call<T = unknown>(method: string, path: string, body?: unknown) {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    const parsed = assertSpecResponse(
      method,
      path,
      res.status,
      res.headers.get("content-type") ?? undefined,
      text,
    );
    return { status: res.status, body: parsed as T };
  }

  /** Like `call`, but the answer must be a 2xx. */
  async ok<T = Json>(method: string, path: string, body?: unknown): Promise<T> {
    const reply = await this.call<T>(method, path, body);
    if (reply.status >= 300) {
      throw new Error(`${method} ${path} answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    }
    return reply.body;
  }

  async agentId(name: string): Promise<string> {
    const found = await this.ok<Array<{ agent_id: string }>>("POST", "/agents/search", { name });
    if (found.length !== 1) throw new Error(`agent ${name}: ${found.length} matches`);
    return found[0]!.agent_id;
  }

  async newThread(): Promise<string> {
    return (await this.ok<{ thread_id: string }>("POST", "/threads", {})).thread_id;
  }

  thread(threadId: string) {
    return this.ok<Json & { values?: Json; messages?: Message[]; status: string }>(
      "GET",
      `/threads/${threadId}`,
    );
  }

  /** A run on the thread, waited for. */
  waitRun(threadId: string, body: Json): Promise<RunWait> {
    return this.ok<RunWait>("POST", `/threads/${threadId}/runs/wait`, body);
  }

  /** A streamed run on the thread, read to its end; frames checked against the spec. */
  async streamRun(threadId: string, body: Json) {
    const connection = await readSse(this.base, `/threads/${threadId}/runs/stream`, {
      body,
    });
    return checkedFrames(connection);
  }

  /** A streamed run left open, for a test that acts while it runs. */
  openStream(threadId: string, body: Json): Promise<SseConnection> {
    return openSse(this.base, `/threads/${threadId}/runs/stream`, { body });
  }
}

export interface StreamFrame {
  type: "values" | "custom";
  run_id: string;
  status: string;
  update?: Json & { type: string };
  values?: Json;
  messages?: Message[];
  output?: Json;
}

export function checkedFrames(connection: SseConnection): StreamFrame[] {
  if (connection.status !== 200) {
    throw new Error(`stream answered ${connection.status}: ${connection.raw()}`);
  }
  for (const frame of connection.frames) assertSpecFrame(frame);
  return connection.frames.map((frame) => frame.data as StreamFrame);
}

/** The text a run streamed, from the AG-UI events of its custom frames. */
export function streamedText(frames: StreamFrame[]): string {
  return frames
    .filter((f) => f.type === "custom" && f.update?.type === "TEXT_MESSAGE_CONTENT")
    .map((f) => String(f.update?.delta ?? ""))
    .join("");
}

/** The text of a message, whether its content is a string or a list of blocks. */
export function textOf(message: Message | undefined): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content.map((block) => (block as { text?: string }).text ?? "").join("");
  }
  return "";
}

/**
 * The agent's last reply: the last assistant message with text. Not simply the last message:
 * `@ag-ui/langgraph` gives TOOL_CALL_RESULT a fresh message id, so when its MESSAGES_SNAPSHOT
 * arrives the tool message is new there and goes to the end (in @ag-ui/client as in our
 * thread), after the reply that used it.
 */
export function lastReply(messages: readonly unknown[] | undefined): string {
  const replies = (messages ?? [])
    .map((m) => m as Message)
    .filter((m) => m.role === "assistant" && textOf(m) !== "");
  return textOf(replies.at(-1));
}

export const userSays = (text: string): Message => ({ role: "user", content: text });
