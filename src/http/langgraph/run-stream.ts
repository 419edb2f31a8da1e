import type { FastifyReply, FastifyRequest } from "fastify";
import { SYSTEM } from "../../auth/principal.js";
import type { StreamMode } from "../../bridge/langgraph/run-body.js";
import {
  LangGraphStreamMapper,
  type LogItem,
  type StreamEvent,
} from "../../bridge/langgraph/stream-events.js";
import { readFinal, readUpdate } from "../../engine/frames/codec.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunFrame, RunRecord } from "../../storage/types.js";
import { SSE_KEEP_ALIVE } from "../streaming/sse-keep-alive.js";
import { StreamWriter } from "../streaming/stream-writer.js";
import { locationOf } from "./records.js";

export interface RunStreamOptions {
  modes: readonly StreamMode[];
  /** Events carry ids (frame sequence numbers) that `Last-Event-ID` resumes after. */
  resumable: boolean;
  /** Frames after this sequence number are sent. */
  afterSeq: number;
  /** Send the `metadata` event first (a new stream; not a stream resumed mid-way). */
  metadataFirst: boolean;
  cancelOnDisconnect: boolean;
  agentName: string;
  keepAliveSeconds: number;
}

/**
 * Streams a run as LangGraph SSE (`event: <mode>`, `data: <json>`): the run's frames from
 * `afterSeq`, mapped by the bridge, until the run stops. With `resumable`, the last event each
 * frame gives carries the frame's sequence number as its id, so `Last-Event-ID` replays exactly
 * the frames after it, on any replica. `Content-Location` names the run without the face's
 * prefix, since LangGraph's client appends it to its own base URL.
 */
export async function streamRun(
  runs: RunService,
  request: FastifyRequest,
  reply: FastifyReply,
  run: RunRecord,
  options: RunStreamOptions,
): Promise<void> {
  const writer = new StreamWriter(request, reply, {
    contentType: "text/event-stream; charset=utf-8",
    headers: { "content-location": locationOf(run), "cache-control": "no-store" },
    keepAliveSeconds: options.keepAliveSeconds,
    keepAlive: SSE_KEEP_ALIVE,
  });
  writer.open();
  if (options.cancelOnDisconnect) {
    writer.closed.addEventListener(
      "abort",
      () => {
        if (!writer.clientWentAway) return;
        void runs
          .cancel(SYSTEM, run.run_id, run.kind, { action: "interrupt", wait: false })
          .catch(() => undefined);
      },
      { once: true },
    );
  }
  const mapper = new LangGraphStreamMapper(options.modes, {
    runId: run.run_id,
    threadId: run.thread_id ?? "",
    agentName: options.agentName,
    runMetadata: run.metadata,
  });
  const wantsValues = options.modes.includes("values") || options.modes.includes("updates");
  try {
    if (options.metadataFirst) {
      await writer.send(sseText([LangGraphStreamMapper.metadataEvent(run.run_id)], undefined));
    }
    const batches = runs.followBatches(run.run_id, {
      afterSeq: options.afterSeq,
      signal: writer.closed,
      read: wantsValues ? "all" : "without-values",
    });
    for await (const frames of batches) {
      let text = "";
      for (const frame of frames) {
        const item = logItem(frame);
        if (!item) continue;
        const events = mapper.map(item);
        if (events.length > 0) text += sseText(events, options.resumable ? frame.seq : undefined);
      }
      if (text !== "") await writer.send(text);
    }
  } finally {
    writer.end();
  }
}

/** A frame as the bridge reads it; undefined for one it has no use for. */
export function logItem(frame: RunFrame): LogItem | undefined {
  switch (frame.mode) {
    case "custom": {
      const event = readUpdate(frame);
      return event ? { kind: "event", event } : undefined;
    }
    case "values": {
      const data = JSON.parse(frame.data) as { values?: unknown; messages?: unknown };
      return { kind: "values", values: data.values, messages: data.messages };
    }
    case "final": {
      const final = readFinal(frame);
      return final ? { kind: "final", status: final.status, output: final.output } : undefined;
    }
    default:
      // Subagents' frames: a LangGraph client reads only the agent's own.
      return undefined;
  }
}

/** Events as SSE text; the last one carries `id` when given. */
function sseText(events: StreamEvent[], id: number | undefined): string {
  let text = "";
  events.forEach((event, index) => {
    text += `event: ${event.event}\ndata: ${JSON.stringify(event.data)}\n`;
    if (id !== undefined && index === events.length - 1) text += `id: ${id}\n`;
    text += "\n";
  });
  return text;
}
