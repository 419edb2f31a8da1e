/**
 * A real OTLP/HTTP trace receiver on 127.0.0.1 (port 0): what the server's OTLP exporter sends
 * to `<url>/v1/traces` is kept. OTLP/JSON bodies are decoded into spans (ids as hex, attributes
 * as plain values); protobuf bodies are kept as bytes (no decoder is in the tree: a test finds
 * ids in them as raw bytes). Answers 200 with an empty ExportTraceServiceResponse.
 */
import { once } from "node:events";
import http from "node:http";
import type { AddressInfo } from "node:net";

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** "" for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  attributes: Record<string, unknown>;
  links: Array<{ traceId: string; spanId: string }>;
  status: { code?: number; message?: string };
  resource: Record<string, unknown>;
}

export interface ReceivedBody {
  path: string;
  contentType: string;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly bodies: ReceivedBody[] = [];
  private waiters: Array<() => void> = [];

  private constructor(
    private readonly server: http.Server,
    /** The base endpoint: what OTEL_EXPORTER_OTLP_ENDPOINT is set to. */
    readonly url: string,
  ) {}

  static async start(): Promise<OtlpReceiver> {
    let self: OtlpReceiver | undefined;
    const server = http.createServer((req, res) => self!.handle(req, res));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    self = new OtlpReceiver(server, `http://127.0.0.1:${port}`);
    return self;
  }

  /** Resolves once a span matching `match` has arrived (the exporter batches: this waits). */
  async waitFor(match: (span: ReceivedSpan) => boolean, timeoutMs = 15_000): Promise<ReceivedSpan> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.spans.find(match);
      if (found) return found;
      if (Date.now() > deadline) {
        const names = this.spans.map((s) => s.name).join(", ");
        throw new Error(`no such span arrived within ${timeoutMs} ms; got: ${names || "none"}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 100);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    const contentType = String(req.headers["content-type"] ?? "");
    this.bodies.push({ path: req.url ?? "", contentType, headers: req.headers, body });
    if (contentType.includes("json")) {
      this.spans.push(...decodeJson(JSON.parse(body.toString("utf8")) as OtlpRequest));
      res.writeHead(200, { "content-type": "application/json" });
      res.end("{}");
    } else {
      res.writeHead(200, { "content-type": "application/x-protobuf" });
      res.end();
    }
    for (const wake of this.waiters.splice(0)) wake();
  }
}

/** The parts of OTLP/JSON's ExportTraceServiceRequest read here. */
interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
type OtlpAttributes = Array<{ key: string; value?: OtlpValue }>;
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttributes;
  links?: Array<{ traceId: string; spanId: string }>;
  status?: { code?: number; message?: string };
}
interface OtlpRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttributes };
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>;
  }>;
}

function decodeJson(request: OtlpRequest): ReceivedSpan[] {
  const spans: ReceivedSpan[] = [];
  for (const resourceSpans of request.resourceSpans ?? []) {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    for (const scopeSpans of resourceSpans.scopeSpans ?? []) {
      for (const span of scopeSpans.spans ?? []) {
        spans.push({
          traceId: hex(span.traceId),
          spanId: hex(span.spanId),
          parentSpanId: span.parentSpanId ? hex(span.parentSpanId) : "",
          name: span.name,
          kind: span.kind,
          attributes: attributesOf(span.attributes),
          links: (span.links ?? []).map((link) => ({
            traceId: hex(link.traceId),
            spanId: hex(link.spanId),
          })),
          status: span.status ?? {},
          resource,
        });
      }
    }
  }
  return spans;
}

/** OTLP/JSON ids are hex; base64 is accepted too (protobuf's JSON mapping). */
function hex(id: string): string {
  return /^[0-9a-f]+$/i.test(id) && (id.length === 32 || id.length === 16)
    ? id.toLowerCase()
    : Buffer.from(id, "base64").toString("hex");
}

function attributesOf(list: OtlpAttributes | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) out[key] = attributeValue(value);
  return out;
}

function attributeValue(value: OtlpValue | undefined): unknown {
  if (value === undefined || value === null) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(attributeValue);
  return undefined;
}
