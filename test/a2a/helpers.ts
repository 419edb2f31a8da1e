import { randomUUID } from "node:crypto";
import { Message, type StreamResponse, type Task } from "@a2a-js/sdk";
import {
  type Client,
  ClientFactory,
  JsonRpcTransportFactory,
  RestTransportFactory,
} from "@a2a-js/sdk/client";

export type Binding = "JSONRPC" | "HTTP+JSON";
export const BINDINGS: Binding[] = ["JSONRPC", "HTTP+JSON"];

/** The official A2A client for an agent of the face, over one binding, as `headers` allow. */
export async function a2aClient(
  base: string,
  agent: string,
  binding: Binding,
  headers: Record<string, string> = {},
): Promise<Client> {
  const fetchImpl: typeof fetch = (input, init) =>
    fetch(input, {
      ...init,
      headers: { ...(init?.headers as Record<string, string>), ...headers },
    });
  const factory = new ClientFactory({
    transports: [
      new JsonRpcTransportFactory({ fetchImpl }),
      new RestTransportFactory({ fetchImpl }),
    ],
    preferredTransports: [binding],
    cardResolver: undefined,
  });
  // The card sits under the agent's own base, which a bare origin would not reach.
  return factory.createFromUrl(`${base}/a2a/${agent}/.well-known/agent-card.json`, "");
}

/** A user message in the SDK's own form, from its ProtoJSON. */
export function userMessage(
  text: string,
  extra: { contextId?: string; taskId?: string; data?: unknown } = {},
): Message {
  const parts: unknown[] = [{ text }];
  if (extra.data !== undefined) parts.push({ data: extra.data });
  return Message.fromJSON({
    messageId: randomUUID(),
    role: "ROLE_USER",
    parts,
    ...(extra.contextId ? { contextId: extra.contextId } : {}),
    ...(extra.taskId ? { taskId: extra.taskId } : {}),
  });
}

export function asTask(result: unknown): Task {
  if (!result || typeof result !== "object" || !("status" in result)) {
    throw new Error(`expected a Task, got ${JSON.stringify(result)}`);
  }
  return result as Task;
}

/** The text parts of a task's artifacts named `response`, joined. */
export function responseText(task: Task): string {
  return task.artifacts
    .filter((artifact) => artifact.name === "response")
    .flatMap((artifact) => artifact.parts)
    .map((part) => (part.content?.$case === "text" ? part.content.value : ""))
    .join("");
}

/** Every event of a stream, collected. */
export async function collect(stream: AsyncGenerator<StreamResponse>): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const event of stream) events.push(event);
  return events;
}
