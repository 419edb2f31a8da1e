import type { AgentCapabilities, RunAgentInput } from "@ag-ui/core";
import type { Agent, request as undiciRequest } from "undici";
import type { AgentBounds } from "../config/agent-bounds.js";
import { DEFAULT_LIMITS } from "../config/settings.js";
import { AGUI_PROTOCOL_VERSION } from "../pipeline/index.js";
import { injectTraceHeaders } from "../telemetry/index.js";
import {
  AGUI_MEDIA_TYPE,
  type EventDecoder,
  SSE_MEDIA_TYPE,
  SseDecoder,
  StreamFault,
} from "./agui-http-decode.js";
import type { AguiHttpAdapterConfig } from "./agui-http-options.js";
import type { ProtoDecoder } from "./agui-http-proto.js";
import { stopRemoteRun } from "./agui-http-stop.js";
import { boundedEvents, StreamBoundError } from "./stream-bounds.js";
import type { AdapterRunContext, AgentAdapter } from "./types.js";

type ResponseBody = Awaited<ReturnType<typeof undiciRequest>>["body"];
interface HttpClient {
  request: typeof undiciRequest;
  dispatcher: Agent;
}
type Event = Record<string, unknown> & { type?: unknown };

const TERMINAL = new Set(["RUN_FINISHED", "RUN_ERROR"]);

type EventBound = Pick<AgentBounds, "maxEventBytes" | "maxEventDepth"> & {
  keys: Pick<AgentBounds["keys"], "maxEventBytes" | "maxEventDepth">;
};
const DEFAULT_EVENT_BOUND: EventBound = {
  maxEventBytes: DEFAULT_LIMITS.maxEventBytes,
  maxEventDepth: DEFAULT_LIMITS.maxEventDepth,
  keys: {
    maxEventBytes: "server.limits.maxEventBytes",
    maxEventDepth: "server.limits.maxEventDepth",
  },
};

/** How much of an error body is read, and how much of it a message quotes. */
const ERROR_BODY_LIMIT = 8 * 1024;
const QUOTE_LIMIT = 200;

/** Why our own controller aborted the request (as opposed to the engine's signal). */
class Timeout extends Error {
  override readonly name = "Timeout";
}

/**
 * A remote AG-UI agent served over HTTP (LangGraph, Mastra, CrewAI, Pydantic AI and the rest):
 * each run POSTs the `RunAgentInput` as JSON to `url` and relays the events of the streamed
 * answer, `text/event-stream` or AG-UI protobuf, whichever the remote sends.
 *
 * The ACP run `config` reaches the remote inside the input: the engine puts it at
 * `forwardedProps.acp.config` (`{configurable, tags, recursion_limit}`), so this adapter sends
 * the input as it is.
 *
 * Every failure (an HTTP error status, an unreachable host, a wrong content type, malformed
 * data, a timeout, a stream that ends without RUN_FINISHED or RUN_ERROR, an incompatible
 * protocol version) throws an `Error` whose message names the agent's URL; the engine turns it
 * into run status `error`. A run the engine aborts ends quietly, and the HTTP request with it.
 */
export class AguiHttpAdapter implements AgentAdapter {
  /** Made by the first run: undici is about 2 MB of heap, which an idle server need not hold. */
  private client: Promise<HttpClient> | undefined;
  /** The URL as messages show it: without credentials. */
  private readonly shownUrl: string;

  constructor(
    private readonly config: AguiHttpAdapterConfig,
    /** The most one event may weigh; without, the server's defaults. */
    private readonly bounds: EventBound = DEFAULT_EVENT_BOUND,
  ) {
    this.shownUrl = redact(config.url);
  }

  private http(): Promise<HttpClient> {
    this.client ??= import("undici").then(({ Agent, request }) => ({
      request,
      // Our own timers bound the wait for headers and each silence; undici's defaults (300 s
      // each) would otherwise cut a stream that `idleTimeoutMs: 0` says may be silent forever.
      dispatcher: new Agent({
        connect: { timeout: this.config.connectTimeoutMs },
        headersTimeout: 0,
        bodyTimeout: 0,
      }),
    }));
    return this.client;
  }

  capabilities(): Partial<AgentCapabilities> {
    return {
      transport: {
        streaming: true,
        ...(this.config.protocol === "proto" ? { httpBinary: true } : {}),
      },
    };
  }

  async close(): Promise<void> {
    if (this.client) await (await this.client).dispatcher.destroy();
  }

  async *run(ourInput: RunAgentInput, context: AdapterRunContext): AsyncIterable<unknown> {
    const { signal, logger } = context;
    // The thread as the remote knows it (see `threadIdPrefix`); the pipeline maps the ids of
    // what comes back to the run's own, as for any remote that names things its own way.
    const { threadIdPrefix } = this.config;
    const input = threadIdPrefix
      ? { ...ourInput, threadId: `${threadIdPrefix}${ourInput.threadId}` }
      : ourInput;
    if (signal.aborted) return;
    const { request, dispatcher } = await this.http();
    if (signal.aborted) return;
    const { url, connectTimeoutMs, idleTimeoutMs } = this.config;
    const agent = `the AG-UI agent at ${this.shownUrl}`;

    // One controller for the request: the run's signal and both timeouts abort it, and its
    // reason tells which one did (a cancel must end quietly, a timeout must say so).
    const controller = new AbortController();
    const onAbort = () => controller.abort(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    let timer: NodeJS.Timeout | undefined;
    const arm = (ms: number, what: string) => {
      if (ms > 0) timer = setTimeout(() => controller.abort(new Timeout(what)), ms);
    };
    const disarm = () => {
      clearTimeout(timer);
      // A cleared timer still holds its callback (and through it the controller) for as long
      // as this variable does: the whole run.
      timer = undefined;
    };
    let body: ResponseBody | undefined;
    /** The remote ended the run (a terminal event), or broke it: nothing is left to stop. */
    let remoteDone = false;
    /** What an exception means: undefined when the engine aborted the run. */
    const failure = (err: unknown): Error | undefined => {
      if (signal.aborted) return undefined;
      const reason: unknown = controller.signal.reason;
      if (err instanceof StreamBoundError) return new Error(`${agent} ${err.message}`);
      if (controller.signal.aborted && reason instanceof Timeout) {
        return new Error(`${agent} ${reason.message}`);
      }
      if (err instanceof StreamFault) return new Error(`${agent} ${err.message}`);
      return err instanceof Error && err.message.startsWith(agent)
        ? err
        : new Error(`${agent} ${describeNetworkError(err, connectTimeoutMs, body !== undefined)}`);
    };

    try {
      arm(connectTimeoutMs, `did not answer within ${connectTimeoutMs} ms (connectTimeoutMs)`);
      const response = await request(url, {
        method: "POST",
        dispatcher,
        headers: this.headers(),
        body: requestBody(input),
        signal: controller.signal,
      });
      body = response.body;

      if (response.statusCode < 200 || response.statusCode >= 300) {
        // Still under the connect timeout: an error page that trickles costs no more than that.
        const text = await readText(body, ERROR_BODY_LIMIT);
        disarm();
        const detail = text.trim() === "" ? "" : `: ${quote(text)}`;
        throw new Error(
          `${agent} answered HTTP ${response.statusCode} before the stream opened${detail}`,
        );
      }
      disarm();

      const contentType = mediaType(response.headers["content-type"]);
      let decoder: EventDecoder;
      let proto: ProtoDecoder | undefined;
      const { maxEventBytes } = this.bounds;
      if (contentType === SSE_MEDIA_TYPE) {
        const { maxEventDepth, keys } = this.bounds;
        decoder = new SseDecoder({ maxDepth: maxEventDepth, key: keys.maxEventDepth });
      } else if (contentType === AGUI_MEDIA_TYPE) {
        // Imported here, not at start-up: @ag-ui/proto costs several MB of heap (see the module).
        const { ProtoDecoder } = await import("./agui-http-proto.js");
        proto = new ProtoDecoder(() =>
          logger.warn(
            { url: this.shownUrl, deviation: "a protobuf event of an unknown type" },
            "agui-http: dropped a protobuf event of a type this build does not know",
          ),
        );
        decoder = proto;
      } else {
        throw new Error(
          `${agent} answered with content type ${JSON.stringify(contentType || "(none)")}, not ${this.expectedTypes()}`,
        );
      }
      // Every byte passes the bounds before a decoder holds it: one event at most, and a wait
      // for the next complete event of at most idleTimeoutMs (a trickle that never completes
      // one is silence).
      const chunks = boundedEvents(body as AsyncIterable<Uint8Array>, {
        maxEventBytes,
        idleTimeoutMs,
        framing: proto ? "length-prefixed" : "sse",
        keys: { maxEventBytes: this.bounds.keys.maxEventBytes, idleTimeoutMs: "idleTimeoutMs" },
      });
      const next = async (): Promise<Uint8Array | undefined> => {
        try {
          const { value, done } = await chunks.next();
          return done ? undefined : value;
        } catch (err) {
          // A frame too large, in protobuf's words (and text said to be text, not a huge frame).
          if (proto && err instanceof StreamBoundError && err.head) {
            const { oversizedFrame } = await import("./agui-http-proto.js");
            throw new StreamFault(oversizedFrame(err.head, err.limit, err.configKey));
          }
          throw err;
        }
      };

      let versionChecked = false;
      for (;;) {
        let chunk = await next();
        const ended = chunk === undefined;
        let events: unknown[] | undefined = ended ? decoder.end() : decoder.push(chunk!);
        // A suspended generator keeps whatever its variables last held: the chunk and its events
        // are let go before the wait for the next chunk, not kept until it arrives.
        chunk = undefined;
        // Ids that differ from the input's (servers that mint their own runId) are the event
        // pipeline's to map, as for every adapter.
        for (let i = 0; i < events.length; i++) {
          const event = events[i];
          if (!versionChecked && typeOf(event) === "RUN_STARTED") {
            versionChecked = true;
            this.checkVersion(event as Event, input, context);
          }
          if (TERMINAL.has(typeOf(event) ?? "")) remoteDone = true;
          yield event;
          if (signal.aborted || remoteDone) return;
        }
        events = undefined;
        if (ended) break;
      }
      const leftover =
        proto && proto.pending > 0 ? ` (${proto.pending} bytes of an unfinished frame left)` : "";
      throw new Error(`${agent} closed the stream without RUN_FINISHED or RUN_ERROR${leftover}`);
    } catch (err) {
      const error = failure(err);
      // A timeout gives up on a run the remote may still be running; any other failure is
      // the remote's own (an error status, a broken stream): it has no run left to stop.
      // A bound the stream broke gives up on it too.
      const gaveUp = controller.signal.reason instanceof Timeout || err instanceof StreamBoundError;
      if (error && !gaveUp) remoteDone = true;
      if (error) throw error;
    } finally {
      disarm();
      signal.removeEventListener("abort", onAbort);
      if (this.config.stopUrl && !remoteDone) await this.stopRemote(input, context, dispatcher);
      // Returning early (terminal event, engine stopped iterating, failure) must not leave the
      // remote streaming into a socket nobody reads: destroying the body closes the connection.
      if (body && !body.destroyed) {
        // undici's body errors when destroyed before its end; nobody is left to hear that.
        body.on("error", () => {});
        body.destroy();
      }
    }
  }

  private async stopRemote(
    input: RunAgentInput,
    context: AdapterRunContext,
    dispatcher: Agent,
  ): Promise<void> {
    const target = {
      stopUrl: this.config.stopUrl!,
      headers: this.headers(),
      connectTimeoutMs: this.config.connectTimeoutMs,
      dispatcher,
    };
    const problem = await stopRemoteRun(target, input.threadId, input.runId);
    if (problem) {
      context.logger.warn(
        { url: redact(target.stopUrl) },
        `agui-http: the remote agent was not told to stop run ${input.runId}: ${problem}`,
      );
    }
  }

  private headers(): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(this.config.headers ?? {})) {
      headers[name.toLowerCase()] = value;
    }
    headers["content-type"] = "application/json";
    headers.accept = this.config.protocol === "proto" ? AGUI_MEDIA_TYPE : SSE_MEDIA_TYPE;
    // The agent's own spans join the run's trace (traceparent), when tracing is on.
    return injectTraceHeaders(headers);
  }

  private expectedTypes(): string {
    return this.config.protocol === "proto"
      ? `${AGUI_MEDIA_TYPE} or ${SSE_MEDIA_TYPE}`
      : SSE_MEDIA_TYPE;
  }

  /**
   * The remote states its AG-UI version in RUN_STARTED. Another major version cannot be
   * trusted to mean the same events; a newer minor of ours only adds what the pipeline strips.
   */
  private checkVersion(event: Event, input: RunAgentInput, context: AdapterRunContext): void {
    const declared = event.protocolVersion;
    if (declared === undefined) return;
    const ours = input.protocolVersion ?? AGUI_PROTOCOL_VERSION;
    const theirs = /^(\d+)\.(\d+)$/.exec(String(declared));
    const mine = /^(\d+)\.(\d+)$/.exec(ours);
    if (!theirs || !mine) {
      context.logger.warn(
        { url: this.shownUrl, declared, spoken: ours, deviation: "an incomparable AG-UI version" },
        `agui-http: the remote agent declared protocol version ${JSON.stringify(declared)}, which cannot be compared with ${ours}; proceeding`,
      );
      return;
    }
    if (theirs[1] !== mine[1]) {
      throw new Error(
        `the AG-UI agent at ${this.shownUrl} speaks AG-UI ${declared}, but this server speaks ${ours}: major versions differ`,
      );
    }
    if (Number(theirs[2]) > Number(mine[2])) {
      context.logger.warn(
        { url: this.shownUrl, declared, spoken: ours, deviation: "a newer AG-UI minor version" },
        `agui-http: the remote agent speaks AG-UI ${declared}, newer than this server's ${ours}; what this server does not recognise is stripped`,
      );
    }
  }
}

const utf8 = new TextEncoder();

/**
 * The input as JSON bytes in a buffer of their own. undici keeps a run's request body until the
 * response ends, and a string body becomes a slice of Node's shared 8 KB buffer pool: the one
 * slice held for the whole run keeps the whole slab resident (heap snapshots of 100 open runs
 * showed about a third of an 8 KB slab per run).
 */
function requestBody(input: RunAgentInput): Uint8Array {
  return utf8.encode(JSON.stringify(input));
}

/** Up to `limit` bytes of an error body, as text (the rest is never read). */
async function readText(body: ResponseBody, limit: number): Promise<string> {
  const decoder = new TextDecoder("utf-8");
  let text = "";
  let read = 0;
  for await (const chunk of body as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk.subarray(0, limit - read), { stream: true });
    read += chunk.length;
    if (read >= limit) break;
  }
  return text + decoder.decode();
}

function typeOf(event: unknown): string | undefined {
  if (typeof event !== "object" || event === null) return undefined;
  const type = (event as Event).type;
  return typeof type === "string" ? type : undefined;
}

function mediaType(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return (value ?? "").split(";")[0]!.trim().toLowerCase();
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > QUOTE_LIMIT ? `${flat.slice(0, QUOTE_LIMIT)}…` : flat);
}

/** Credentials in the URL stay out of error messages and logs. */
function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === "" && parsed.password === "") return url;
    parsed.username = "";
    parsed.password = "";
    return parsed.toString();
  } catch {
    return url;
  }
}

/** A connection-level error from undici or the OS, in words. */
function describeNetworkError(err: unknown, connectTimeoutMs: number, streaming: boolean): string {
  const code = errorCode(err);
  const message = err instanceof Error ? err.message : String(err);
  switch (code) {
    case "ECONNREFUSED":
      return "refused the connection (ECONNREFUSED)";
    case "ENOTFOUND":
    case "EAI_AGAIN":
    case "EAI_NONAME":
    case "EAI_FAIL": {
      const host = (err as { hostname?: unknown }).hostname ?? findHostname(err);
      return `cannot be reached: DNS lookup${host ? ` of ${JSON.stringify(host)}` : ""} failed (${code})`;
    }
    case "UND_ERR_CONNECT_TIMEOUT":
      return `did not answer within ${connectTimeoutMs} ms (connectTimeoutMs)`;
    case "ECONNRESET":
    case "EPIPE":
    case "UND_ERR_SOCKET":
    case "UND_ERR_CLOSED":
      return `broke the connection${streaming ? " mid-stream" : ""} (${message || code})`;
    default: {
      const what = `${message || String(code ?? "unknown error")}${code && !message.includes(code) ? ` (${code})` : ""}`;
      return streaming ? `failed mid-stream: ${what}` : `cannot be reached: ${what}`;
    }
  }
}

/** The error code, looking through undici's wrappers and Node's happy-eyeballs AggregateError. */
function errorCode(err: unknown): string | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [err];
  while (queue.length > 0) {
    const current = queue.shift();
    if (typeof current !== "object" || current === null || seen.has(current)) continue;
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    queue.push((current as { cause?: unknown }).cause);
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors)) queue.push(...errors);
  }
  return undefined;
}

function findHostname(err: unknown): string | undefined {
  let current: unknown = err;
  for (let depth = 0; depth < 5 && typeof current === "object" && current !== null; depth++) {
    const hostname = (current as { hostname?: unknown }).hostname;
    if (typeof hostname === "string") return hostname;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
