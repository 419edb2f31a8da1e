import type { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { FastifyBaseLogger } from "fastify";
import type { RegisteredAgent } from "../../config/registry.js";
import type { RunService } from "../../engine/run-service.js";
import type { McpSessionStore, RunRecord } from "../../storage/types.js";
import { elicitingAsker } from "./elicit.js";
import { eventLogOf } from "./event-log.js";
import { followProgress, ProgressOfEvents } from "./progress.js";
import { streamOfRequest } from "./sdk-internals.js";
import type { CallHooks } from "./tool-calls.js";
import type { HandlerExtra } from "./tool-server.js";

type ToolServer = Parameters<typeof elicitingAsker>[0];

/**
 * What a session's call of `agent` does besides waiting for its run: asks the caller
 * (elicitation), tells progress for `progressToken`, and, for a tools/call answered on its own
 * stream (`resumable`), records that stream once the run exists, so that its event ids name the
 * run from then on and any replica can resume it (resume.ts).
 */
export function callHooks(
  context: { runs: RunService; store: McpSessionStore; log: FastifyBaseLogger },
  call: {
    server: ToolServer;
    extra: HandlerExtra;
    agent: RegisteredAgent;
    progressToken: unknown;
    resumable: boolean;
  },
): Omit<CallHooks, "signal"> {
  const { server, extra, agent, progressToken } = call;
  const hasToken = typeof progressToken === "string" || typeof progressToken === "number";
  const stream = call.resumable ? streamOf(server, extra) : undefined;
  const position = stream && { stream, recorded: Promise.resolve() as Promise<unknown> };
  const record = (run: RunRecord) => {
    if (!position || !extra.sessionId) return;
    position.recorded = context.store
      .putCallStream({
        stream_key: position.stream.key,
        session_id: extra.sessionId,
        run_id: run.run_id,
        request_id: JSON.stringify(extra.requestId),
        progress_token: hasToken ? JSON.stringify(progressToken) : null,
      })
      // Resuming on another replica is what is lost; the call goes on.
      .catch((err: unknown) => context.log.warn({ err }, "an MCP call stream was not recorded"));
  };
  const progress = hasToken
    ? followProgress(
        context.runs,
        new ProgressOfEvents(),
        progressToken,
        (notification) => extra.sendNotification(notification),
        extra.signal,
        position,
      )
    : undefined;
  return {
    ask: elicitingAsker(server, agent, extra.sendRequest as never, extra.signal),
    following: (run: RunRecord, afterSeq: number) => {
      if (afterSeq === 0) record(run);
      progress?.(run, afterSeq);
    },
  };
}

/** Where the call's own SSE stream stands (its event ids), in its session's event log. */
function streamOf(server: ToolServer, extra: HandlerExtra) {
  const transport = server.transport as StreamableHTTPServerTransport | undefined;
  const events = transport && eventLogOf.get(transport);
  const streamId = transport && streamOfRequest(transport, extra.requestId);
  return streamId && events ? events.positionOf(streamId) : undefined;
}
