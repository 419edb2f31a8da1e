import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";

export interface Received {
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

/** A receiver on 127.0.0.1 that records every notification and answers 204. */
export async function receiver() {
  const received: Received[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => (body += chunk));
    req.on("end", () => {
      received.push({ headers: req.headers, body: JSON.parse(body) as Record<string, unknown> });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/a2a-hook`;
  return { url, received, close: () => new Promise((resolve) => server.close(resolve)) };
}

export const until = async (check: () => boolean | Promise<boolean>, what: string) => {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/** The task state a notification's status update carries, if it is one. */
export const stateOf = (r: Received) =>
  (r.body.statusUpdate as { status?: { state?: string } } | undefined)?.status?.state;

/** The notifications about one task. */
export const ofTask = (received: Received[], taskId: string) =>
  received.filter(
    (r) =>
      (r.body.statusUpdate as { taskId?: string } | undefined)?.taskId === taskId ||
      (r.body.artifactUpdate as { taskId?: string } | undefined)?.taskId === taskId,
  );

/** An artifact update as a notification carries it. */
export interface ArtifactChunk {
  artifact: { artifactId: string; name?: string; parts: { text?: string }[] };
  append?: boolean;
  lastChunk?: boolean;
}

/**
 * The chunks of the task's last answer: the `response` artifact updates after the last working
 * status (a task run again after a restart answers again, from the start).
 */
export function lastAnswer(received: Received[]): ArtifactChunk[] {
  const lastWorking = received.findLastIndex((r) => stateOf(r) === "TASK_STATE_WORKING");
  return received
    .slice(lastWorking + 1)
    .map((r) => r.body.artifactUpdate as ArtifactChunk | undefined)
    .filter((update): update is ArtifactChunk => update?.artifact?.name === "response");
}

/**
 * Checks that chunks make one whole answer: one artifact, the first chunk not appended, the
 * rest appended, the last marked `lastChunk`, the texts joined the full text.
 */
export function expectWholeAnswer(chunks: ArtifactChunk[], text: string): void {
  expect(chunks.length).toBeGreaterThan(1);
  expect(new Set(chunks.map((c) => c.artifact.artifactId)).size).toBe(1);
  expect(chunks.map((c) => c.append ?? false)).toEqual(chunks.map((_, i) => i > 0));
  expect(chunks.map((c) => c.lastChunk ?? false)).toEqual(
    chunks.map((_, i) => i === chunks.length - 1),
  );
  expect(chunks.flatMap((c) => c.artifact.parts.map((p) => p.text ?? "")).join("")).toBe(text);
}
