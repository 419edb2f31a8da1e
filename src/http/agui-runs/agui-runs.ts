import type { RunAgentInput } from "@ag-ui/core";
import type { FastifyReply, FastifyRequest } from "fastify";
import { type Principal, SYSTEM } from "../../auth/principal.js";
import type { RunFace } from "../../bridge/acp/run-command.js";
import { aguiRunCommand } from "../../bridge/agui/run-command.js";
import type { RegisteredAgent } from "../../config/registry.js";
import type { RunService } from "../../engine/run-service.js";
import type { ThreadService } from "../../engine/thread-service.js";
import { AGUI_PROTOCOL_VERSION } from "../../pipeline/index.js";
import type { RunRecord, ThreadRecord } from "../../storage/types.js";
import { conflict, invalid } from "../../util/errors.js";
import { openAguiStream } from "../streaming/agui-stream.js";
import { runEventBatches, runEvents, type ServerEnding, StoredEventJson } from "./run-events.js";
import { callerThreadId } from "./thread-ids.js";
import { replayThread } from "./thread-replay.js";

export { AGUI_THREAD_NAMESPACE, aclThreadId, callerThreadId } from "./thread-ids.js";

/** A batch of events goes out in pieces of about this many characters (the socket buffers 16 KiB). */
const WRITE_AT_CHARS = 16 * 1024;
/** The events that name their run (AG-UI 1.0's RUN_ERROR carries no ids). */
const NAMES_ITS_RUN = new Set(["RUN_STARTED", "RUN_FINISHED"]);

/**
 * Refuses a client of another major AG-UI version before the stream opens. A client that
 * declares no version is served the current protocol.
 */
export function checkClientVersion(declared: string | undefined): void {
  if (declared === undefined) return;
  const ours = AGUI_PROTOCOL_VERSION.split(".")[0];
  const major = /^\s*v?(\d+)(?:\.|$)/.exec(declared)?.[1];
  if (major === undefined) {
    throw invalid(
      `protocolVersion "${declared}" is not a version this server can interpret (it speaks ${AGUI_PROTOCOL_VERSION})`,
    );
  }
  if (major !== ours) {
    throw invalid(
      `protocolVersion ${declared} is AG-UI major version ${major}; this server speaks ${AGUI_PROTOCOL_VERSION}`,
    );
  }
}

export interface ServeOptions {
  /**
   * What the client closing its request does to the run (ACP `on_disconnect`). The AG-UI face
   * cancels (an AG-UI client aborts a run by closing its request); CopilotKit's runtime lets the
   * run go on, for a reloaded page to reconnect to.
   */
  onDisconnect?: "cancel" | "continue";
  /** How the stream ends a run the server ended (see run-events). */
  ending?: ServerEnding;
  /** The thread as the caller just read it (null: none it may reach), so not read again. */
  thread?: ThreadRecord | null;
  /** The metadata of the thread a new run creates (CopilotKit's tags), in the run's write. */
  newThreadMetadata?: Record<string, unknown>;
}

/** The AG-UI `connect` body: the thread to rejoin (the rest of a RunAgentInput is not needed). */
export interface ConnectInput {
  threadId: string;
  protocolVersion?: string;
}

/**
 * An AG-UI run served as an ACP run: a new run on the thread behind the AG-UI threadId, or —
 * when the input carries `resume` — the resume of that thread's interrupted run. The events
 * the client receives are the run's stored custom frames, with the ids of RUN_STARTED and
 * RUN_FINISHED set back to the client's own threadId and runId.
 */
export class AguiRuns {
  private readonly runs: RunService;
  private readonly threads: ThreadService;
  /** Seconds between keep-alives on the face's SSE streams (`server.keepAliveSeconds`). */
  private readonly keepAliveSeconds: number;
  /** The face serving these runs, kept with each run it creates. */
  private readonly face: RunFace;

  constructor(options: {
    runs: RunService;
    threads: ThreadService;
    keepAliveSeconds: number;
    face: RunFace;
  }) {
    this.runs = options.runs;
    this.threads = options.threads;
    this.keepAliveSeconds = options.keepAliveSeconds;
    this.face = options.face;
  }

  async serve(
    request: FastifyRequest,
    reply: FastifyReply,
    agent: RegisteredAgent,
    input: RunAgentInput,
    options: ServeOptions = {},
  ) {
    checkClientVersion(input.protocolVersion);
    const threadId = await callerThreadId(this.threads, request.caller, input.threadId);
    const onDisconnect = options.onDisconnect ?? "cancel";
    const { run, afterSeq } =
      input.resume && input.resume.length > 0
        ? await this.resume(request.caller, threadId, input)
        : {
            run: await this.create(request.caller, agent, threadId, input, onDisconnect, options),
            afterSeq: 0,
          };
    await this.stream(request, reply, run, afterSeq, input, {
      onDisconnect,
      ending: options.ending ?? "run-error",
    });
  }

  /**
   * Rejoins a thread: its history compacted, then the runs in progress from their start and
   * live until they end (see thread-replay). Any replica answers: what is stored is read from
   * storage, what is still being produced comes over the frame bus.
   */
  async connect(
    request: FastifyRequest,
    reply: FastifyReply,
    input: ConnectInput,
    ending: ServerEnding = "run-error",
  ): Promise<void> {
    checkClientVersion(input.protocolVersion);
    const sink = await openAguiStream(request, reply, { keepAliveSeconds: this.keepAliveSeconds });
    try {
      for await (const event of replayThread(this.runs, {
        clientThreadId: input.threadId,
        who: request.caller,
        threadId: await callerThreadId(this.threads, request.caller, input.threadId),
        signal: sink.closed,
        ending,
      })) {
        if (event.type === "RUN_STARTED") event.protocolVersion = AGUI_PROTOCOL_VERSION;
        await sink.write(event);
      }
    } finally {
      sink.end();
    }
  }

  private async create(
    who: Principal,
    agent: RegisteredAgent,
    threadId: string,
    input: RunAgentInput,
    onDisconnect: "cancel" | "continue",
    options: ServeOptions,
  ): Promise<RunRecord> {
    // Someone else's thread: run creation below answers 404 for it.
    const thread =
      options.thread !== undefined
        ? options.thread
        : await this.threads.findReachable(who, threadId);
    // AG-UI clients send the whole conversation every time; the thread keeps what it has seen.
    const known = new Set(
      (thread?.messages ?? []).map((m) => m.id).filter((id) => typeof id === "string"),
    );
    const command = aguiRunCommand(input, {
      agentId: agent.agentId,
      knownMessageIds: known,
      onDisconnect,
      face: this.face,
    });
    // Read just now: the run's creation need not read it again (null: none the caller reaches).
    return this.runs.create(
      who,
      "stateful",
      command,
      threadId,
      options.newThreadMetadata,
      thread ?? null,
    );
  }

  private async resume(who: Principal, threadId: string, input: RunAgentInput) {
    const wanted = new Set(input.resume!.map((entry) => entry.interruptId));
    const interrupted = await this.runs.search(who, {
      thread_id: threadId,
      status: "interrupted",
      limit: 100,
      offset: 0,
    });
    const target = interrupted.find((run) =>
      run.interrupts.some((interrupt) => wanted.has((interrupt as { id?: string }).id ?? "")),
    );
    if (!target) {
      throw conflict(
        `thread ${input.threadId} has no interrupted run waiting for ${[...wanted].map((id) => `"${id}"`).join(", ")}`,
      );
    }
    const afterSeq = target.last_seq;
    const run = await this.runs.resume(
      who,
      target.run_id,
      target.kind,
      { resume: input.resume },
      target.thread_id ?? undefined,
    );
    return { run, afterSeq };
  }

  private async stream(
    request: FastifyRequest,
    reply: FastifyReply,
    run: RunRecord,
    afterSeq: number,
    input: RunAgentInput,
    options: Required<Pick<ServeOptions, "onDisconnect" | "ending">>,
  ): Promise<void> {
    const sink = await openAguiStream(request, reply, {
      keepAliveSeconds: this.keepAliveSeconds,
      headers: { "x-acp-run-id": run.run_id },
    });
    if (options.onDisconnect === "cancel") {
      sink.closed.addEventListener(
        "abort",
        () => {
          // The client closing its request cancels; the server ending streams at shutdown not.
          if (!sink.clientWentAway) return;
          void this.runs
            .cancel(SYSTEM, run.run_id, run.kind, { action: "interrupt", wait: false })
            .catch(() => undefined);
        },
        { once: true },
      );
    }
    const withClientIds = (event: Record<string, unknown>) => {
      if (NAMES_ITS_RUN.has(event.type as string)) {
        event.threadId = input.threadId;
        event.runId = input.runId;
        if (event.type === "RUN_STARTED") event.protocolVersion = AGUI_PROTOCOL_VERSION;
      }
      return event;
    };
    const { sseText, writeSse } = sink;
    const events = { afterSeq, signal: sink.closed, ending: options.ending };
    try {
      if (sseText && writeSse) {
        // SSE: each batch of events in one write; content events go out as the JSON they were
        // stored as, never parsed here.
        for await (const batch of runEventBatches(this.runs, run, {
          ...events,
          storedJson: true,
        })) {
          let text = "";
          for (const event of batch) {
            text +=
              event instanceof StoredEventJson
                ? `data: ${event.json}\n\n`
                : sseText(withClientIds(event));
            // A long page of history goes out in pieces, each waiting for a slow client.
            if (text.length >= WRITE_AT_CHARS) {
              await writeSse(text);
              text = "";
            }
          }
          if (text.length > 0) await writeSse(text);
        }
      } else {
        for await (const event of runEvents(this.runs, run, events)) {
          await sink.write(withClientIds(event));
        }
      }
    } finally {
      sink.end();
    }
  }
}
