/**
 * A real HTTP server on 127.0.0.1 (port 0) that speaks A2A 1.0 and misbehaves, one way per case,
 * over either binding: `${url}/<case>/card.json` is the case's agent card naming the JSON-RPC
 * endpoint `${url}/<case>/rpc`, `${url}/<case>/rest-card.json` one naming the HTTP+JSON
 * interface `${url}/<case>/rest` (valid cards, except for the card cases), and the calls to that
 * endpoint are answered as the case says, in the binding's own framing (a JSON-RPC response in
 * each SSE event, or the bare stream event; errors as JSON-RPC error objects, or an HTTP status
 * with a `google.rpc.Status`). Big answers are made as they are written (never held whole
 * here), with backpressure, so `written` tells how much a client read before it closed the
 * connection.
 *
 * A streamed case first answers its task (`t-1`, working), so that what fails the run is the
 * misbehaviour itself; GetTask and CancelTask answer that task properly.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { sleep, Writer } from "./hostile-upstream.js";

export const A2A_CASES = [
  "huge-event",
  "huge-answer",
  "trickle",
  "endless",
  "malformed-json",
  "rpc-error",
  "html-error",
  "wrong-content-type",
  "cut-mid-event",
  "flood",
  "artifact-of-another-task",
  "status-of-unknown-task",
  "deep-data",
  "slow-headers",
  "huge-card",
  "malformed-card",
] as const;
export type A2aCase = (typeof A2A_CASES)[number];

/** The cases that misbehave in the calls themselves (not in the card), for either binding. */
export const A2A_CALL_CASES = A2A_CASES.filter((c) => c !== "huge-card" && c !== "malformed-card");

export type A2aBinding = "jsonrpc" | "http-json";

/** Cases whose agent does not stream: runs send, then poll. */
const BLOCKING = new Set<A2aCase>(["huge-answer"]);

const CHUNK = 64 * 1024;
const HUGE = 300 * 1024 * 1024;
const TASK = { id: "t-1", contextId: "c-1" };

export class HostileA2a {
  /** Bytes written per request path, for as long as the client kept reading. */
  readonly written = new Map<string, number>();
  /** The methods each case was called with, in order (JSON-RPC names, whatever the binding). */
  readonly calls = new Map<string, string[]>();
  private readonly open = new Set<http.ServerResponse>();

  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(): Promise<HostileA2a> {
    let self: HostileA2a | undefined;
    const server = http.createServer((req, res) => {
      void self!.handle(req, res).catch(() => res.destroy());
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    self = new HostileA2a(server, `http://127.0.0.1:${port}`);
    return self;
  }

  /** A card URL nothing listens on: a port that was free a moment ago. */
  static async unreachableUrl(): Promise<string> {
    const server = http.createServer();
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return `http://127.0.0.1:${port}/card.json`;
  }

  cardUrl(name: A2aCase, binding: A2aBinding = "jsonrpc"): string {
    return `${this.url}/${name}/${binding === "jsonrpc" ? "card.json" : "rest-card.json"}`;
  }

  /** Connections a client has not closed yet (each run should close its own). */
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
    const path = req.url ?? "";
    this.open.add(res);
    res.on("close", () => this.open.delete(res));
    const out = new Writer(res, (n) => this.written.set(path, (this.written.get(path) ?? 0) + n));
    const [, name, what, rest] =
      /^\/([^/]+)\/(card\.json|rest-card\.json|rpc|rest)(\/.*)?$/.exec(path) ?? [];
    const kase = name as A2aCase;
    if (what === "card.json" && rest === undefined) {
      return card(kase, { url: `${this.url}/${name}/rpc`, binding: "JSONRPC" }, out);
    }
    if (what === "rest-card.json" && rest === undefined) {
      return card(kase, { url: `${this.url}/${name}/rest`, binding: "HTTP+JSON" }, out);
    }
    const call =
      what === "rpc" && rest === undefined
        ? jsonRpcCall(text, out)
        : what === "rest" && rest !== undefined
          ? restCall(req.method ?? "GET", rest, out)
          : undefined;
    if (call === undefined) {
      out.head(404, "text/plain");
      return out.end(`no such path: ${req.method} ${path}`);
    }
    this.calls.set(kase, [...(this.calls.get(kase) ?? []), call.method]);
    return answer(kase, call, out);
  }
}

/** How one call is answered in its binding's framing. */
interface Call {
  method: string;
  /** An SSE event carrying `result` (a stream response). */
  frame(result: unknown): string;
  /** What an SSE event's data starts with before its result, and ends with after it. */
  open: string;
  close: string;
  /** A whole answer to a call that does not stream. */
  answer(result: unknown): void;
  /** The call failed on the agent's side with `message`. */
  fail(message: string): void;
}

function jsonRpcCall(text: string, out: Writer): Call {
  const { method, id } = JSON.parse(text) as { method: string; id: unknown };
  const open = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`;
  return {
    method,
    open,
    close: "}",
    frame: (result) => `data: ${open}${JSON.stringify(result)}}\n\n`,
    answer(result) {
      out.head(200, "application/json");
      out.end(`${open}${JSON.stringify(result)}}`);
    },
    fail(message) {
      out.head(200, "application/json");
      out.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message } }));
    },
  };
}

/** The HTTP+JSON routes, named by the JSON-RPC method they stand for. */
const REST_ROUTES: [string, RegExp, string][] = [
  ["POST", /^\/message:send$/, "SendMessage"],
  ["POST", /^\/message:stream$/, "SendStreamingMessage"],
  ["POST", /^\/tasks\/[^/:]+:cancel$/, "CancelTask"],
  ["POST", /^\/tasks\/[^/:]+:subscribe$/, "SubscribeToTask"],
  ["GET", /^\/tasks\/[^/:?]+(\?.*)?$/, "GetTask"],
];

function restCall(verb: string, path: string, out: Writer): Call | undefined {
  const route = REST_ROUTES.find(([v, pattern]) => v === verb && pattern.test(path));
  if (route === undefined) return undefined;
  return {
    method: route[2],
    open: "",
    close: "",
    frame: (result) => `data: ${JSON.stringify(result)}\n\n`,
    answer(result) {
      out.head(200, "application/json");
      out.end(JSON.stringify(result));
    },
    fail(message) {
      out.head(500, "application/json");
      out.end(JSON.stringify({ error: { code: 500, status: "INTERNAL", message } }));
    },
  };
}

async function card(
  name: A2aCase,
  endpoint: { url: string; binding: "JSONRPC" | "HTTP+JSON" },
  out: Writer,
) {
  out.head(200, "application/json");
  if (name === "malformed-card") return out.end('{"name": "half a card", "skills": [');
  const body = JSON.stringify({
    name,
    description: `misbehaves: ${name}`,
    version: "1.0.0",
    supportedInterfaces: [
      { url: endpoint.url, protocolBinding: endpoint.binding, protocolVersion: "1.0" },
    ],
    capabilities: { streaming: !BLOCKING.has(name) },
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [],
  });
  if (name !== "huge-card") return out.end(body);
  // The valid card's fields, then a description that goes on for 300 MB.
  await out.write(`${body.slice(0, -1)},"x-notes":"`);
  const filler = "x".repeat(CHUNK);
  for (let sent = 0; sent < HUGE; sent += CHUNK) if (!(await out.write(filler))) return;
  return out.end('"}');
}

const working = (message?: unknown) => ({
  ...TASK,
  status: { state: "TASK_STATE_WORKING", ...(message ? { message } : {}) },
});
/** A status update of the run's task. */
const update = (message?: unknown) => ({ taskId: "t-1", ...working(message), id: undefined });
const agentMessage = (messageId: string, parts: unknown[]) => ({
  messageId,
  role: "ROLE_AGENT",
  parts,
});

async function answer(name: A2aCase, call: Call, out: Writer) {
  const { method, frame } = call;
  if (method === "CancelTask") {
    return call.answer({ ...TASK, status: { state: "TASK_STATE_CANCELED" } });
  }
  if (method === "GetTask") return call.answer(working());
  if (name === "slow-headers") {
    await sleep(3_000);
    if (out.gone) return;
  }
  if (name === "huge-answer") {
    // A blocking agent's whole answer, far too large.
    out.head(200, "application/json");
    await out.write(`${call.open}{"task":{"id":"t-1","contextId":"c-1","metadata":{"notes":"`);
    const filler = "x".repeat(CHUNK);
    for (let sent = 0; sent < HUGE; sent += CHUNK) if (!(await out.write(filler))) return;
    return out.end(`"}}}${call.close}`);
  }
  if (name === "rpc-error") return call.fail("model overloaded");
  if (name === "html-error") {
    out.head(502, "text/html");
    return out.end("<html><body><h1>502 Bad Gateway</h1></body></html>");
  }
  if (name === "wrong-content-type") {
    out.head(200, "text/html");
    return out.end("<html><body><h1>Welcome to nginx!</h1></body></html>");
  }

  out.head(200, "text/event-stream");
  await out.write(frame({ task: working() }));
  switch (name) {
    case "huge-event": {
      const whole = frame({ statusUpdate: update(agentMessage("m-1", [{ text: "" }])) });
      // The event's JSON up to the text part's value, then a value of 300 MB.
      const at = whole.indexOf('"text":"') + 8;
      await out.write(whole.slice(0, at));
      const filler = "x".repeat(CHUNK);
      for (let sent = 0; sent < HUGE; sent += CHUNK) if (!(await out.write(filler))) return;
      return out.end(whole.slice(at));
    }
    case "trickle": {
      // Bytes keep coming, an event never completes.
      await out.write(`data: ${call.open}{"statusUpdate":`);
      while (await out.write(" ")) await sleep(50);
      return;
    }
    case "endless":
      // The task works on and on: updates that say nothing new, forever.
      for (;;) {
        if (!(await out.write(frame({ statusUpdate: update() })))) return;
        await sleep(20);
      }
    case "flood":
      for (let i = 0; ; i++) {
        const message = agentMessage(`m-${i}`, [{ text: `tick ${i}` }]);
        if (!(await out.write(frame({ statusUpdate: update(message) })))) {
          return;
        }
      }
    case "malformed-json":
      await out.write("data: {not json at all\n\n");
      return out.end();
    case "cut-mid-event":
      await out.write(`data: ${call.open}{"statu`);
      await sleep(20);
      out.res.destroy();
      return;
    case "artifact-of-another-task": {
      const artifact = { artifactId: "a-1", parts: [{ text: "not yours" }] };
      const update = { taskId: "t-2", contextId: "c-1", artifact, append: false, lastChunk: true };
      await out.write(frame({ artifactUpdate: update }));
      return out.end();
    }
    case "status-of-unknown-task":
      await out.write(
        frame({
          statusUpdate: {
            taskId: "t-9",
            contextId: "c-1",
            status: { state: "TASK_STATE_COMPLETED" },
          },
        }),
      );
      return out.end();
    case "deep-data": {
      // A data part nested 20 000 levels deep, in an event of a few dozen KB.
      const depth = 20_000;
      const data = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
      const head = frame({ statusUpdate: update(agentMessage("m-1", [{ data: 0 }])) });
      const at = head.indexOf('"data":0') + 7;
      await out.write(`${head.slice(0, at)}${data}${head.slice(at + 1)}`);
      return out.end();
    }
    default:
      await out.write(
        frame({ statusUpdate: { ...update(), status: { state: "TASK_STATE_COMPLETED" } } }),
      );
      return out.end();
  }
}
