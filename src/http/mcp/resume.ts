import { setTimeout as sleep } from "node:timers/promises";
import type { Interrupt } from "@ag-ui/core";
import { SUPPORTED_PROTOCOL_VERSIONS } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Principal } from "../../auth/principal.js";
import {
  callResultOf,
  declaredOutputSchema,
  ProgressOfEvents,
  pendingResultOf,
} from "../../bridge/mcp/index.js";
import type { AgentRegistry } from "../../config/registry.js";
import { readUpdate } from "../../engine/frames/codec.js";
import type { RunService } from "../../engine/run-service.js";
import type { McpSessionRecord, McpSessionStore } from "../../storage/types.js";
import { type CallStream, eventIdOf, parseEventId } from "./call-streams.js";
import { REFUSAL_CODE, sendRpcRefusal } from "./refusals.js";

/** A comment line this often keeps proxies from closing a quiet stream (the SDK's default). */
const KEEP_ALIVE_MS = 15_000;

export interface ResumeContext {
  runs: RunService;
  registry: AgentRegistry;
  store: McpSessionStore;
}

/**
 * A tools/call's SSE stream resumed from its run (Streamable HTTP, "Resumability and
 * Redelivery"), on any replica: `GET` with the caller's session and `Last-Event-ID`. The event
 * id names the call (its recorded stream: the run, the JSON-RPC request id, the progress token)
 * and the run frame up to which the caller was told its progress. The rest is told from the
 * run's stored frames, then live as the run goes on, and the stream ends with the call's result
 * under the original request id. An interrupt is not asked again here (the replica that asked
 * waits for that answer): the result says what the agent asked and how to answer.
 */
export async function resumeFromRun(
  context: ResumeContext,
  request: FastifyRequest,
  reply: FastifyReply,
  session: McpSessionRecord,
  lastEventId: string,
  who: Principal,
): Promise<unknown> {
  if (!request.headers.accept?.includes("text/event-stream")) {
    return sendRpcRefusal(
      reply,
      406,
      REFUSAL_CODE.session,
      "Not Acceptable: Client must accept text/event-stream",
    );
  }
  const version = request.headers["mcp-protocol-version"];
  if (typeof version === "string" && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    return sendRpcRefusal(
      reply,
      400,
      REFUSAL_CODE.session,
      `unsupported protocol version ${JSON.stringify(version.slice(0, 50))}`,
    );
  }
  const at = parseEventId(lastEventId);
  if (!at) {
    return sendRpcRefusal(
      reply,
      400,
      REFUSAL_CODE.invalidRequest,
      "Last-Event-ID is not an event id this server sent: resume with the id of the last event received",
    );
  }
  const stream = await context.store.getCallStream(at.key);
  // Another session's stream, or another caller's run: answered as one that does not exist.
  const run =
    stream?.session_id === session.session_id
      ? await context.runs.findReachable(who, stream.run_id)
      : undefined;
  if (!stream || !run) {
    return sendRpcRefusal(
      reply,
      404,
      REFUSAL_CODE.notFound,
      "no stream of this session has that event: it cannot be resumed (call the tool again)",
    );
  }
  const agent = context.registry.get(run.agent_id);
  const withStructured = agent ? declaredOutputSchema(agent.descriptor) !== undefined : false;
  const progressToken =
    stream.progress_token === null
      ? undefined
      : (JSON.parse(stream.progress_token) as string | number);
  const requestId = JSON.parse(stream.request_id) as string | number;

  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
    "mcp-session-id": session.session_id,
  });
  const gone = new AbortController();
  raw.on("close", () => gone.abort());
  const keepAlive = setInterval(() => {
    if (!gone.signal.aborted) raw.write(": keepalive\n\n");
  }, KEEP_ALIVE_MS);
  const position: CallStream = { key: at.key, seq: at.seq };
  /** An event; the result's has no id: after it, nothing is left to resume. */
  const send = (message: Record<string, unknown>, withId = true) => {
    if (gone.signal.aborted) return;
    const id = withId ? `id: ${eventIdOf(position)}\n` : "";
    raw.write(`event: message\n${id}data: ${JSON.stringify(message)}\n\n`);
  };
  try {
    const progress = new ProgressOfEvents();
    // Without a token there is no progress to count: the stream goes on from where it was.
    let after = progressToken === undefined ? at.seq : 0;
    for (;;) {
      const from = after;
      for await (const batch of context.runs.followBatches(run.run_id, {
        afterSeq: after,
        signal: gone.signal,
        read: "events",
      })) {
        for (const frame of batch) {
          after = frame.seq;
          const event = frame.mode === "custom" ? readUpdate(frame) : undefined;
          // Frames up to the event's are counted again, as the caller was told them; each
          // later one that says something is told, with its own event id.
          if (!event || !progress.push(event) || frame.seq <= at.seq) continue;
          if (progressToken === undefined) continue;
          position.seq = frame.seq;
          send({
            jsonrpc: "2.0",
            method: "notifications/progress",
            params: { progressToken, ...progress.params },
          });
        }
      }
      if (gone.signal.aborted) return;
      const now = await context.runs.findReachable(who, run.run_id);
      // Resumed since its segment ended: follow the next one (a moment on, when its end was
      // read before the run's record said so).
      if (now?.status === "pending") {
        if (after === from)
          await sleep(50, undefined, { signal: gone.signal }).catch(() => undefined);
        continue;
      }
      const result = !now
        ? { error: { code: REFUSAL_CODE.invalidRequest, message: `run ${run.run_id} is gone` } }
        : {
            result:
              now.status === "interrupted"
                ? pendingResultOf(now, now.interrupts as unknown as Interrupt[])
                : callResultOf(now, withStructured),
          };
      send({ jsonrpc: "2.0", id: requestId, ...result }, false);
      return;
    }
  } catch (err) {
    request.log.warn({ err }, "resuming an MCP call stream failed");
  } finally {
    clearInterval(keepAlive);
    raw.end();
  }
}
