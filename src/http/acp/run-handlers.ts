import type { FastifyReply, FastifyRequest } from "fastify";
import { type Principal, SYSTEM } from "../../auth/principal.js";
import {
  deliveredModes,
  parseRunCommand,
  type RunCreateBody,
} from "../../bridge/acp/run-command.js";
import { toAcpRun } from "../../engine/acp-mapping.js";
import type { ReadFrame } from "../../engine/frames/codec.js";
import { LazyAbortController } from "../../engine/run-engine/lazy-abort.js";
import type { RunService } from "../../engine/run-service.js";
import type { RunKind, RunRecord } from "../../storage/types.js";
import { invalid } from "../../util/errors.js";
import type { AcpWaitResponse } from "../../validation/acp-types.js";
import { clientGone, disconnectSignal } from "../streaming/client-gone.js";
import { lastEventId } from "../streaming/last-event-id.js";
import { AcpSseStream } from "./sse.js";

/**
 * The run operations shared by the thread-run and stateless-run routes; the route files only
 * declare paths and schemas. `threadId` is set for thread runs.
 */
export class RunHandlers {
  constructor(
    private readonly runs: RunService,
    private readonly keepAliveSeconds: number,
  ) {}

  async create(who: Principal, kind: RunKind, body: RunCreateBody, threadId?: string) {
    return toAcpRun(await this.runs.create(who, kind, parseRunCommand(body, "acp"), threadId));
  }

  /** POST …/runs/stream: create, then stream from the first frame. */
  async createAndStream(
    request: FastifyRequest,
    reply: FastifyReply,
    kind: RunKind,
    body: RunCreateBody,
    threadId?: string,
  ): Promise<void> {
    const command = parseRunCommand(body, "acp");
    const run = await this.runs.create(request.caller, kind, command, threadId);
    await this.stream(request, reply, run, 0, deliveredModes(command, kind), {
      cancelOnDisconnect: command.onDisconnect === "cancel",
    });
  }

  /** POST …/runs/wait: create, then block until the run stops. */
  async createAndWait(
    who: Principal,
    reply: FastifyReply,
    kind: RunKind,
    body: RunCreateBody,
    threadId?: string,
  ) {
    const command = parseRunCommand(body, "acp");
    const { run, ended } = await this.runs.createToWait(who, kind, command, threadId);
    // Watched without an AbortSignal of its own unless the wait needs one (see LazyAbortController).
    const gone = new LazyAbortController();
    const response = reply.raw;
    response.once("close", () => {
      if (clientGone(response)) gone.abort(new Error("client disconnected"));
    });
    const stopWatching =
      command.onDisconnect === "cancel"
        ? gone.onAbort(
            () =>
              void this.runs
                .cancel(SYSTEM, run.run_id, kind, { action: "interrupt", wait: false })
                .catch(() => undefined),
          )
        : undefined;
    try {
      return waitResponse(await this.runs.waitFor(run, gone, ended));
    } finally {
      stopWatching?.();
    }
  }

  /** GET …/runs/{run_id}/stream: join a run, replaying from Last-Event-ID when given. */
  async join(
    request: FastifyRequest,
    reply: FastifyReply,
    kind: RunKind,
    runId: string,
    threadId?: string,
  ) {
    const run = await this.runs.get(request.caller, runId, kind, threadId);
    const header = request.headers["last-event-id"];
    const resumeFrom = lastEventId(request);
    if (header !== undefined && resumeFrom === undefined) {
      throw invalid(
        "Last-Event-ID must be a non-negative integer (the id of the last frame received)",
      );
    }
    // Without Last-Event-ID: a live run streams what comes next; a stopped run sends its final
    // frame (always its last) and closes.
    const afterSeq =
      resumeFrom ?? (run.status === "pending" ? run.last_seq : Math.max(0, run.last_seq - 1));
    const modes = deliveredModes(parseRunCommand(run.creation), run.kind);
    await this.stream(request, reply, run, afterSeq, modes, {
      cancelOnDisconnect: false,
    });
  }

  async wait(who: Principal, reply: FastifyReply, kind: RunKind, runId: string, threadId?: string) {
    return waitResponse(
      await this.runs.wait(who, runId, kind, disconnectSignal(reply.raw), threadId),
    );
  }

  private async stream(
    request: FastifyRequest,
    reply: FastifyReply,
    run: RunRecord,
    afterSeq: number,
    modes: Set<string>,
    options: { cancelOnDisconnect: boolean },
  ): Promise<void> {
    const location =
      run.kind === "stateful"
        ? `/threads/${run.thread_id}/runs/${run.run_id}`
        : `/runs/${run.run_id}`;
    const writer = new AcpSseStream(request, reply, {
      keepAliveSeconds: this.keepAliveSeconds,
      headers: { "content-location": location },
    });
    writer.open();
    const signal = writer.signal;
    if (options.cancelOnDisconnect) {
      signal.addEventListener(
        "abort",
        () =>
          void this.runs
            .cancel(SYSTEM, run.run_id, run.kind, { action: "interrupt", wait: false })
            .catch(() => undefined),
        { once: true },
      );
    }
    try {
      const read = modes.has("values") ? "all" : "without-values";
      const batches = this.runs.followBatches(run.run_id, {
        afterSeq,
        signal,
        read,
        lazyValues: true,
      });
      await sendFrames(batches, writer, modes);
    } finally {
      writer.end();
    }
  }
}

/**
 * The loop over a stream's frames, apart from the stream's setup: it never touches the
 * response's AbortSignal. On Node 20 every AbortSignal has a hidden class of its own, and
 * optimized code that touches one is thrown away when it meets the next stream's.
 */
async function sendFrames(
  batches: AsyncIterable<ReadFrame[]>,
  writer: AcpSseStream,
  modes: Set<string>,
): Promise<void> {
  for await (const frames of batches) {
    for (const frame of frames) {
      if (frame.mode !== "final" && !modes.has(frame.mode)) continue;
      // A values frame is superseded by the next one (and the final frame carries values), so
      // a client that cannot keep up skips it instead of growing our buffer. Skipped, it is
      // never rendered (values frames come lazily, one per batch, the last of it: rendered
      // when written here, piece by piece when long).
      if (frame.mode === "values" && writer.skipsValues(frame)) continue;
      if (frame.value !== undefined) await writer.writeWhole(frame);
      else writer.write(frame);
      if (writer.congested) await writer.drain();
    }
  }
}

function waitResponse(run: RunRecord): AcpWaitResponse {
  const response: AcpWaitResponse = { run: toAcpRun(run) };
  if (run.output) response.output = run.output as AcpWaitResponse["output"];
  return response;
}
