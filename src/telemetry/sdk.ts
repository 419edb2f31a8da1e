/**
 * The OpenTelemetry SDK, set up from `server.telemetry` and the standard environment variables
 * (OTEL_EXPORTER_OTLP_*, OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER(_ARG),
 * OTEL_BSP_*, …). Imported by ./index.ts only when tracing is on: a server without tracing
 * never loads an OpenTelemetry package.
 */

import { FastifyOtelInstrumentation } from "@fastify/otel";
import {
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  trace,
} from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { detectResources, envDetector, resourceFromAttributes } from "@opentelemetry/resources";
import { BatchSpanProcessor, type SpanExporter } from "@opentelemetry/sdk-trace-base";
import { NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { GenAiSegmentSpan } from "./segment-span.js";
import type {
  SegmentInfo,
  SegmentSpan,
  StoredTraceContext,
  TelemetrySettings,
  Tracing,
} from "./types.js";

const TRACER_NAME = "acp-agui";

/** Requests not worth a span: probes, metrics scrapes, the inspector's files. */
const UNTRACED = /^\/(healthz|readyz|metrics)(\/|$|\?)/;

interface SdkLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

/** Starts the SDK (a global tracer provider, context manager and propagator) and returns it. */
export async function startSdk(
  settings: TelemetrySettings,
  env: NodeJS.ProcessEnv,
  logger: SdkLogger,
  onShutdown: () => void,
): Promise<Tracing> {
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
    env.OTEL_EXPORTER_OTLP_PROTOCOL ??
    "http/protobuf"
  ).trim();
  const exporter = await createExporter(protocol, logger);
  // The environment's resource (OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES) wins over the file.
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: settings.serviceName ?? "acp-agui",
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  // W3C trace context only: a client's `baggage` (anything it likes) is not passed on to agents.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  const tracer = provider.getTracer(TRACER_NAME);
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT;
  logger.info(
    {
      protocol,
      endpoint: endpoint ?? "http://localhost:4318",
      captureContent: settings.captureContent,
    },
    "tracing on: exporting spans over OTLP",
  );

  return {
    captureContent: settings.captureContent,
    activeContext: () => storeContext(context.active()),
    withParent: (carrier, fn) => context.with(propagation.extract(context.active(), carrier), fn),
    startSegment(info: SegmentInfo): SegmentSpan {
      // The run's own trace, whatever is active here: the request that resumed the run, or
      // nothing (a replica that claimed it). A resuming request of another trace is linked.
      const parent = info.parent === null ? ROOT_CONTEXT : loadContext(info.parent);
      const links: Link[] = [];
      const starter = info.linked ? loadContext(info.linked) : context.active();
      const activeSpan = trace.getSpan(starter)?.spanContext();
      const parentSpan = trace.getSpan(parent)?.spanContext();
      if (activeSpan && activeSpan.traceId !== parentSpan?.traceId) {
        links.push({ context: activeSpan });
      }
      return new GenAiSegmentSpan(tracer, info, parent, links, settings.captureContent);
    },
    inject: (headers) => propagation.inject(context.active(), headers),
    logFields(): Record<string, string> {
      const span = trace.getSpan(context.active())?.spanContext();
      if (span === undefined || !trace.isSpanContextValid(span)) return {};
      return { trace_id: span.traceId, span_id: span.spanId };
    },
    fastifyPlugin() {
      const instrumentation = new FastifyOtelInstrumentation({
        // The request's span and the handler's; not one per Fastify hook.
        instrumentHooks: false,
        ignorePaths: (route: { url?: string }) => UNTRACED.test(route.url ?? ""),
        // HTTP's convention: "METHOD route" rather than "request".
        requestHook: (span, request) => {
          const route = request.routeOptions.url;
          span.updateName(route ? `${request.method} ${route}` : request.method);
        },
      });
      instrumentation.setTracerProvider(provider);
      return instrumentation.plugin();
    },
    async shutdown() {
      onShutdown();
      try {
        await provider.shutdown();
      } finally {
        trace.disable();
        propagation.disable();
        context.disable();
      }
    },
  };
}

async function createExporter(protocol: string, logger: SdkLogger): Promise<SpanExporter> {
  if (protocol === "http/json") {
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter();
  }
  if (protocol !== "http/protobuf") {
    logger.warn(
      { protocol },
      "OTLP protocol not supported (http/protobuf and http/json are); exporting over http/protobuf",
    );
  }
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-proto");
  return new OTLPTraceExporter();
}

/** The span context of `ctx` as W3C headers in one string: traceparent, then tracestate. */
function storeContext(ctx: Context): StoredTraceContext | null {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  if (carrier.traceparent === undefined) return null;
  return carrier.tracestate ? `${carrier.traceparent}\n${carrier.tracestate}` : carrier.traceparent;
}

function loadContext(stored: StoredTraceContext): Context {
  const [traceparent, tracestate] = stored.split("\n");
  const carrier: Record<string, string> = { traceparent: traceparent ?? "" };
  if (tracestate) carrier.tracestate = tracestate;
  return propagation.extract(ROOT_CONTEXT, carrier);
}
