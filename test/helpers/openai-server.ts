/**
 * A scripted OpenAI-compatible chat-completions server on 127.0.0.1 (port 0) for adapter
 * tests. Each test queues the responses it wants with {@link OpenAiTestServer.reply}; every
 * request is recorded (method, path, headers, parsed JSON body) along with a promise that
 * settles when the client goes away, so a test can see a cancel reach the socket.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

/** One step of a streamed response. */
export type Step =
  /** `data: <json>\n\n` */
  | { chunk: unknown }
  /** Written verbatim (for hand-made SSE such as comments or `event:` lines). */
  | { raw: string }
  /** `data: [DONE]\n\n` */
  | { done: true }
  | { delayMs: number }
  /** Destroys the socket mid-response: a dropped connection. */
  | { drop: true }
  /** Never ends the response (until the client goes away). */
  | { hang: true };

export type Reply =
  | { stream: Step[] }
  | { status: number; json: unknown }
  | { status: number; text: string; contentType?: string };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: Record<string, unknown>;
  /** Settles when the client closes the connection or the response ends. */
  closed: Promise<void>;
  /** True once the client went away before the response ended. */
  clientAborted: boolean;
}

export class OpenAiTestServer {
  readonly requests: RecordedRequest[] = [];
  private readonly replies: Reply[] = [];

  private constructor(
    private readonly server: http.Server,
    /** The `baseUrl` to configure: `http://127.0.0.1:<port>/v1`. */
    readonly baseUrl: string,
  ) {}

  static async start(): Promise<OpenAiTestServer> {
    let self: OpenAiTestServer | undefined;
    const server = http.createServer((req, res) => {
      void self!.handle(req, res);
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    self = new OpenAiTestServer(server, `http://127.0.0.1:${port}/v1`);
    return self;
  }

  /** Queues the response to the next request. */
  reply(reply: Reply): this {
    this.replies.push(reply);
    return this;
  }

  /** The request recorded last (throws when there is none). */
  get last(): RecordedRequest {
    const request = this.requests[this.requests.length - 1];
    if (!request) throw new Error("the test server has received no request");
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
      body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
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

    const reply = this.replies.shift();
    if (!reply) {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message: "no reply scripted for this request" } }));
      return;
    }
    if ("json" in reply) {
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(JSON.stringify(reply.json));
      return;
    }
    if ("text" in reply) {
      res.writeHead(reply.status, { "content-type": reply.contentType ?? "text/plain" });
      res.end(reply.text);
      return;
    }
    res.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive",
    });
    res.flushHeaders();
    for (const step of reply.stream) {
      if (res.destroyed) return;
      if ("chunk" in step) res.write(`data: ${JSON.stringify(step.chunk)}\n\n`);
      else if ("raw" in step) res.write(step.raw);
      else if ("done" in step) res.write("data: [DONE]\n\n");
      else if ("delayMs" in step) await new Promise((r) => setTimeout(r, step.delayMs));
      else if ("drop" in step) {
        // Let what was written reach the client before the socket goes.
        await new Promise((r) => setTimeout(r, 20));
        res.socket?.destroy();
        return;
      } else if ("hang" in step) return;
    }
    res.end();
  }
}

const base = {
  id: "chatcmpl-test",
  object: "chat.completion.chunk",
  created: 1,
  model: "test-model",
};

/** A chunk whose first choice carries `delta` (and `finish_reason` when given). */
export function chunk(delta: Record<string, unknown>, finishReason: string | null = null): Step {
  return { chunk: { ...base, choices: [{ index: 0, delta, finish_reason: finishReason }] } };
}

/** The final usage chunk of `stream_options.include_usage` (empty `choices`). */
export function usageChunk(usage: Record<string, unknown>): Step {
  return { chunk: { ...base, choices: [], usage } };
}

/** A whole text answer streamed word by word, finished and DONE. */
export function textStream(text: string): Step[] {
  const words = text.split(/(?<=\s)/);
  return [
    chunk({ role: "assistant", content: "" }),
    ...words.map((word) => chunk({ content: word })),
    chunk({}, "stop"),
    { done: true },
  ];
}
