/**
 * A small real AG-UI agent server on 127.0.0.1 (port 0) for the agui-http adapter tests.
 * Each test queues what the next request gets with {@link AguiTestServer.reply}: a stream of
 * events (encoded by @ag-ui/encoder's `EventEncoder`, as SSE or protobuf by the request's
 * `accept`), raw bytes, pauses, a dropped connection, or an error status. Every request is
 * recorded (headers, the parsed `RunAgentInput`) with a promise that settles when the
 * connection goes away, so a test can see a cancel reach the remote.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { BaseEvent, RunAgentInput } from "@ag-ui/core";
import { AGUI_MEDIA_TYPE, EventEncoder } from "@ag-ui/encoder";

export type Event = Record<string, unknown> & { type: string };

/** One step of a streamed answer. */
export type Step =
  /** Encoded with EventEncoder: `data: <json>\n\n`, or a length-prefixed protobuf frame. */
  | { event: Event }
  /** Written verbatim (hand-made SSE: comments, CRLF, split lines). */
  | { raw: string | Uint8Array }
  | { delayMs: number }
  /** Waits for the promise: a test holds the run open until it lets it go on. */
  | { until: Promise<unknown> }
  /** Destroys the socket mid-response: a dropped connection. */
  | { drop: true }
  /** Never ends the response (until the client goes away). */
  | { hang: true };

export interface StreamReply {
  stream: Step[];
  /** Waits this long before sending the status line and headers. */
  headersDelayMs?: number;
  /** Overrides the content type EventEncoder picks for the request's `accept`. */
  contentType?: string;
}

export interface StatusReply {
  status: number;
  body: string;
  contentType?: string;
}

export type Reply = StreamReply | StatusReply;
/** A reply, or one made from the request's input (to echo its threadId and runId). */
export type ReplySource = Reply | ((input: RunAgentInput) => Reply);

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  input: RunAgentInput;
  /** Settles when the response ends or the client goes away, whichever comes first. */
  closed: Promise<void>;
  /** True once the client closed the connection before the response ended. */
  clientAborted: boolean;
}

export class AguiTestServer {
  readonly requests: RecordedRequest[] = [];
  private readonly replies: ReplySource[] = [];

  private constructor(
    private readonly server: http.Server,
    /** The agent's URL: `http://127.0.0.1:<port>/agent`. */
    readonly url: string,
  ) {}

  static async start(): Promise<AguiTestServer> {
    let self: AguiTestServer | undefined;
    const server = http.createServer((req, res) => {
      void self!.handle(req, res);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    self = new AguiTestServer(server, `http://127.0.0.1:${port}/agent`);
    return self;
  }

  /** Queues the answer to the next request. */
  reply(reply: ReplySource): this {
    this.replies.push(reply);
    return this;
  }

  /** The request recorded last (throws when there is none). */
  get last(): RecordedRequest {
    const request = this.requests[this.requests.length - 1];
    if (!request) throw new Error("the AG-UI test server has received no request");
    return request;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let text = "";
    for await (const chunk of req) text += chunk;
    let settle!: () => void;
    const recorded: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      input: (text ? JSON.parse(text) : {}) as RunAgentInput,
      closed: new Promise<void>((resolve) => {
        settle = resolve;
      }),
      clientAborted: false,
    };
    this.requests.push(recorded);
    res.on("close", () => {
      if (!res.writableFinished) recorded.clientAborted = true;
      settle();
    });

    const source = this.replies.shift();
    const reply = typeof source === "function" ? source(recorded.input) : source;
    if (!reply) {
      res.writeHead(500, { "content-type": "text/plain" });
      res.end("no reply scripted for this request");
      return;
    }
    if ("status" in reply) {
      res.writeHead(reply.status, { "content-type": reply.contentType ?? "text/plain" });
      res.end(reply.body);
      return;
    }

    if (reply.headersDelayMs) await sleep(reply.headersDelayMs);
    if (res.destroyed) return;
    const encoder = new EventEncoder({ accept: req.headers.accept ?? "" });
    const contentType = reply.contentType ?? encoder.getContentType();
    const encode = contentType.startsWith(AGUI_MEDIA_TYPE)
      ? (event: Event) => encoder.encodeProtobuf(event as BaseEvent)
      : (event: Event) => encoder.encodeSSE(event as BaseEvent);
    res.writeHead(200, {
      "content-type": contentType,
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    res.flushHeaders();
    for (const step of reply.stream) {
      if (res.destroyed) return;
      if ("event" in step) res.write(encode(step.event));
      else if ("raw" in step) res.write(step.raw);
      else if ("delayMs" in step) await sleep(step.delayMs);
      else if ("until" in step) await step.until;
      else if ("drop" in step) {
        // Let what was written reach the client before the socket goes.
        await sleep(20);
        res.socket?.destroy();
        return;
      } else if ("hang" in step) return;
    }
    res.end();
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Steps that send these events in order. */
export const send = (...events: Event[]): Step[] => events.map((event) => ({ event }));

export interface RunOptions {
  /** The assistant's answer (default "Hello from the remote"). */
  text?: string;
  messageId?: string;
  state?: unknown;
  /** RUN_STARTED/RUN_FINISHED `runId` (default: the input's). */
  runId?: string;
  threadId?: string;
  protocolVersion?: string;
  result?: unknown;
}

/** A whole, well-formed run answering `input`: started, a text message, a state, finished. */
export function runEvents(input: RunAgentInput, options: RunOptions = {}): Event[] {
  const threadId = options.threadId ?? input.threadId;
  const runId = options.runId ?? input.runId;
  const messageId = options.messageId ?? "remote-msg-1";
  const words = (options.text ?? "Hello from the remote").split(/(?<=\s)/);
  return [
    {
      type: "RUN_STARTED",
      threadId,
      runId,
      ...(options.protocolVersion !== undefined
        ? { protocolVersion: options.protocolVersion }
        : {}),
    },
    { type: "TEXT_MESSAGE_START", messageId, role: "assistant" },
    ...words.map((delta) => ({ type: "TEXT_MESSAGE_CONTENT", messageId, delta })),
    { type: "TEXT_MESSAGE_END", messageId },
    { type: "STATE_SNAPSHOT", snapshot: options.state ?? { answered: true } },
    {
      type: "RUN_FINISHED",
      threadId,
      runId,
      ...(options.result !== undefined ? { result: options.result } : {}),
    },
  ];
}
