/**
 * A real HTTP server on 127.0.0.1 (port 0) that misbehaves as an agent, one way per path:
 * `${url}/<case>` answers an AG-UI run (POST of a RunAgentInput) as the case says, and
 * `${url}/openai/<case>/chat/completions` answers a chat completion. Big answers are made as
 * they are written (never held whole here either), respecting backpressure, so `written`
 * tells how much a client read before it closed the connection.
 *
 * An AG-UI case's first event is a proper RUN_STARTED with the request's ids, so that what
 * fails the run is the misbehaviour itself.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

export const AGUI_CASES = [
  "huge-event",
  "huge-line-no-newline",
  "trickle",
  "keepalive-only",
  "deep-patch",
  "deep-snapshot",
  "malformed-json",
  "out-of-order",
  "html-200",
  "html-502",
  "cut-mid-event",
  "flood",
  "proto-lying-length",
  "proto-short-frame",
  "endless",
  "json-content-type",
  "no-content-type",
  "slow-headers",
  "slow-error-page",
] as const;
export type AguiCase = (typeof AGUI_CASES)[number];

export const OPENAI_CASES = [
  "huge-event",
  "trickle-then-huge",
  "huge-completion",
  "malformed-chunk",
  "cut-mid-event",
  "html-200",
] as const;
export type OpenAiCase = (typeof OPENAI_CASES)[number];

const PROTO = "application/vnd.ag-ui.event+proto";
const CHUNK = 64 * 1024;

export class HostileUpstream {
  /** Bytes written per case path, for as long as the client kept reading. */
  readonly written = new Map<string, number>();
  /** Connections still open. */
  private readonly open = new Set<http.ServerResponse>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<HostileUpstream> {
    let self: HostileUpstream | undefined;
    const server = http.createServer((req, res) => {
      void self!.handle(req, res).catch(() => res.destroy());
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    self = new HostileUpstream(server, `http://127.0.0.1:${port}`);
    return self;
  }

  /** Connections a client has not closed yet (each case's reader should close its own). */
  get openConnections(): number {
    return this.open.size;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    let text = "";
    for await (const chunk of req) text += chunk;
    const input = (text ? JSON.parse(text) : {}) as Record<string, unknown>;
    const path = req.url ?? "";
    this.open.add(res);
    res.on("close", () => this.open.delete(res));
    const out = new Writer(res, (n) => this.written.set(path, (this.written.get(path) ?? 0) + n));
    const openai = /^\/openai\/([^/]+)\/chat\/completions$/.exec(path);
    if (openai) return openAiCase(openai[1] as OpenAiCase, out);
    return aguiCase(path.slice(1) as AguiCase, input, out);
  }
}

/** Writes with backpressure; resolves false once the client has gone away. */
export class Writer {
  private readonly closed: Promise<unknown>;

  constructor(
    readonly res: http.ServerResponse,
    private readonly count: (bytes: number) => void,
  ) {
    this.closed = once(res, "close");
  }

  get gone(): boolean {
    return this.res.destroyed;
  }

  head(status: number, contentType?: string): void {
    const headers: Record<string, string> = { "cache-control": "no-cache" };
    if (contentType !== undefined) headers["content-type"] = contentType;
    this.res.writeHead(status, headers);
    this.res.flushHeaders();
  }

  async write(data: string | Uint8Array): Promise<boolean> {
    if (this.gone) return false;
    const bytes = typeof data === "string" ? Buffer.from(data) : data;
    this.count(bytes.length);
    if (!this.res.write(bytes)) {
      await Promise.race([once(this.res, "drain"), this.closed]);
    }
    return !this.gone;
  }

  end(data?: string): void {
    if (!this.gone) this.res.end(data);
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sse = (event: unknown) => `data: ${JSON.stringify(event)}\n\n`;

async function aguiCase(name: AguiCase, input: Record<string, unknown>, out: Writer) {
  const started = sse({ type: "RUN_STARTED", threadId: input.threadId, runId: input.runId });
  const finished = sse({ type: "RUN_FINISHED", threadId: input.threadId, runId: input.runId });
  switch (name) {
    case "huge-event":
    case "huge-line-no-newline": {
      // One event of up to 300 MB: a data line that goes on (and on).
      out.head(200, "text/event-stream");
      await out.write(started);
      const prefix =
        name === "huge-event"
          ? `data: {"type":"CUSTOM","name":"big","value":"`
          : ": a comment line that never ends ";
      await out.write(prefix);
      const filler = "x".repeat(CHUNK);
      for (let sent = 0; sent < 300 * 1024 * 1024; sent += CHUNK) {
        if (!(await out.write(filler))) return;
      }
      await out.write(`"}\n\n${finished}`);
      return out.end();
    }
    case "trickle": {
      // Bytes keep coming, an event never completes.
      out.head(200, "text/event-stream");
      await out.write(started);
      await out.write('data: {"type":"CUSTOM","name":"slow","value":"');
      while (await out.write("x")) await sleep(50);
      return;
    }
    case "keepalive-only": {
      out.head(200, "text/event-stream");
      await out.write(started);
      while (await out.write(": keep-alive\n\n")) await sleep(50);
      return;
    }
    case "deep-patch": {
      // Each operation nests one level deeper than the last: a shallow event, a deep state.
      out.head(200, "text/event-stream");
      await out.write(started);
      const delta = [];
      let path = "";
      for (let i = 0; i < 700; i++) {
        path += "/a";
        delta.push({ op: "add", path, value: {} });
      }
      await out.write(sse({ type: "STATE_DELTA", delta }));
      await out.write(finished);
      return out.end();
    }
    case "deep-snapshot": {
      out.head(200, "text/event-stream");
      await out.write(started);
      const depth = 20_000;
      const deep = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
      await out.write(`data: {"type":"STATE_SNAPSHOT","snapshot":${deep}}\n\n`);
      await out.write(finished);
      return out.end();
    }
    case "malformed-json":
      out.head(200, "text/event-stream");
      await out.write(started);
      await out.write('data: {"type":"TEXT_MESSAGE_START", oops}\n\n');
      return out.end();
    case "out-of-order":
      out.head(200, "text/event-stream");
      await out.write(started);
      await out.write(sse({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "hi" }));
      await out.write(finished);
      return out.end();
    case "html-200":
      out.head(200, "text/html");
      return out.end("<html><body><h1>Welcome to nginx!</h1></body></html>");
    case "html-502":
      out.head(502, "text/html");
      return out.end("<html><body><h1>502 Bad Gateway</h1></body></html>");
    case "cut-mid-event":
      out.head(200, "text/event-stream");
      await out.write(started);
      await out.write('data: {"type":"TEXT_MESSAGE_START","messageId":"m1","ro');
      await sleep(20);
      out.res.destroy();
      return;
    case "flood": {
      out.head(200, "text/event-stream");
      await out.write(started);
      for (let i = 0; ; i++) {
        if (!(await out.write(sse({ type: "CUSTOM", name: "tick", value: i })))) return;
      }
    }
    case "proto-lying-length": {
      // A length prefix of 2 GB in front of a few bytes: nothing may wait for the rest.
      out.head(200, PROTO);
      await out.write(new Uint8Array([0x7f, 0xff, 0xff, 0xff, 1, 2, 3, 4]));
      while (await out.write(new Uint8Array(CHUNK))) await sleep(1);
      return;
    }
    case "proto-short-frame":
      // The prefix promises more than the stream holds, then the stream ends.
      out.head(200, PROTO);
      await out.write(new Uint8Array([0, 0, 0x10, 0, 1, 2, 3]));
      return out.end();
    case "endless":
      out.head(200, "text/event-stream");
      await out.write(started);
      for (let i = 0; ; i++) {
        if (!(await out.write(sse({ type: "CUSTOM", name: "tick", value: i })))) return;
        await sleep(20);
      }
    case "json-content-type":
      out.head(200, "application/json");
      return out.end(JSON.stringify({ type: "RUN_STARTED" }));
    case "no-content-type":
      out.head(200);
      return out.end(started);
    case "slow-headers":
      await sleep(3_000);
      if (out.gone) return;
      out.head(200, "text/event-stream");
      await out.write(started);
      await out.write(finished);
      return out.end();
    case "slow-error-page": {
      // An error page that trickles: reading it must not take longer than the connect timeout.
      out.head(503, "text/html");
      while (await out.write("<")) await sleep(50);
      return;
    }
    default:
      out.head(404, "text/plain");
      return out.end(`no such case: ${String(name)}`);
  }
}

async function openAiCase(name: OpenAiCase, out: Writer) {
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
    sse({ choices: [{ index: 0, delta, finish_reason: finish }] });
  const filler = "x".repeat(CHUNK);
  switch (name) {
    case "huge-event":
    case "trickle-then-huge": {
      out.head(200, "text/event-stream");
      await out.write(chunk({ role: "assistant", content: "Hello" }));
      if (name === "trickle-then-huge") {
        for (let i = 0; i < 5; i++) {
          await out.write(chunk({ content: "." }));
          await sleep(20);
        }
      }
      await out.write('data: {"choices":[{"index":0,"delta":{"content":"');
      for (let sent = 0; sent < 300 * 1024 * 1024; sent += CHUNK) {
        if (!(await out.write(filler))) return;
      }
      return out.end('"}}]}\n\ndata: [DONE]\n\n');
    }
    case "huge-completion": {
      // `stream: true` ignored: a whole completion in one JSON body, far too large.
      out.head(200, "application/json");
      await out.write('{"choices":[{"index":0,"message":{"role":"assistant","content":"');
      for (let sent = 0; sent < 300 * 1024 * 1024; sent += CHUNK) {
        if (!(await out.write(filler))) return;
      }
      return out.end('"},"finish_reason":"stop"}]}');
    }
    case "malformed-chunk":
      out.head(200, "text/event-stream");
      await out.write(chunk({ role: "assistant", content: "Hi" }));
      await out.write("data: {not json\n\n");
      return out.end();
    case "cut-mid-event":
      out.head(200, "text/event-stream");
      await out.write(chunk({ role: "assistant", content: "Hi" }));
      await out.write('data: {"choices":[{"index":0,"del');
      await sleep(20);
      out.res.destroy();
      return;
    case "html-200":
      out.head(200, "text/html");
      return out.end("<html><body>Welcome to nginx!</body></html>");
    default:
      out.head(404, "text/plain");
      return out.end(`no such case: ${String(name)}`);
  }
}
