import { McpError } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Principal } from "../../auth/principal.js";
import { META, type ModernRequest } from "../../bridge/mcp/index.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { RunRecord } from "../../storage/types.js";
import { findTask, grantedTtlOf, type ModernTaskContext, modernTaskOf } from "./modern-tasks.js";
import { taskChanges } from "./task-changes.js";
import { RPC } from "./tool-calls.js";
import type { ToolScope } from "./tool-scope.js";

/** Tasks one subscription may follow. */
const MAX_TASKS = 100;

/**
 * `subscriptions/listen` (2026-07-28) for the tasks extension: the client names its tasks in
 * `notifications.taskIds`; the answer is an SSE stream that acknowledges the ones that are the
 * caller's (`notifications/subscriptions/acknowledged`, first), then sends
 * `notifications/tasks` with the whole task as it is when it is settled, then each time its
 * status changes (working, input_required, its end), and ends the subscription gracefully (its JSON-RPC result) once every task it
 * follows is done. Other notification types are not offered and so not acknowledged.
 */
export async function listenToTasks(
  context: ModernTaskContext,
  modern: ModernRequest,
  who: Principal,
  scope: ToolScope,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const filter = modern.params.notifications;
  if (typeof filter !== "object" || filter === null || Array.isArray(filter)) {
    throw new McpError(RPC.invalidParams, "params.notifications must be an object");
  }
  const asked = (filter as { taskIds?: unknown }).taskIds;
  const ids = Array.isArray(asked)
    ? [...new Set(asked.filter((id): id is string => typeof id === "string"))].slice(0, MAX_TASKS)
    : [];
  // Another caller's task, or none, is left out of the acknowledgment (and never told of).
  const followed: Array<{ run: RunRecord; agent: RegisteredAgent }> = [];
  for (const taskId of ids) {
    const found = await findTask(context, { taskId }, who, scope).catch(() => undefined);
    if (found) followed.push(found);
  }
  const subscription = { [META.subscriptionId]: modern.id };
  const gone = new AbortController();
  // The client closing the stream ends it (Cancellation), as does the server ending it at
  // shutdown (the stream is a long request, ended by the drain).
  request.raw.on("close", () => gone.abort());
  reply.raw.on("close", () => gone.abort());
  reply.hijack();
  reply.raw.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    connection: "keep-alive",
  });
  const send = (message: Record<string, unknown>) => {
    if (!gone.signal.aborted && !reply.raw.writableEnded)
      reply.raw.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
  };
  send({
    jsonrpc: "2.0",
    method: "notifications/subscriptions/acknowledged",
    params: {
      _meta: subscription,
      notifications: { taskIds: followed.map(({ run }) => run.run_id) },
    },
  });
  await Promise.all(
    followed.map(async ({ run, agent }) => {
      const grantedTtl = await grantedTtlOf(context, run);
      return followTask(
        context,
        run,
        (fresh) =>
          send({
            jsonrpc: "2.0",
            method: "notifications/tasks",
            params: {
              ...modernTaskOf(context, fresh, agent, modern.clientCapabilities, grantedTtl),
              _meta: subscription,
            },
          }),
        gone.signal,
      );
    }),
  ).catch(() => undefined);
  send({ jsonrpc: "2.0", id: modern.id, result: { resultType: "complete", _meta: subscription } });
  if (!reply.raw.writableEnded) reply.raw.end();
}

/**
 * Tells a task's state when it is settled (waiting for input, or done) as the subscription
 * begins, then each change of it as it happens (see task-changes.ts), until it is done or the
 * subscriber goes away.
 */
async function followTask(
  context: ModernTaskContext,
  first: RunRecord,
  tell: (run: RunRecord) => void,
  signal: AbortSignal,
): Promise<void> {
  if (first.status !== "pending") tell(first);
  for await (const changed of taskChanges(context.runs, first, signal)) tell(changed);
}
