/**
 * Trace context on the MCP face, with tracing on (exporting to a real OTLP receiver): a call's
 * run joins the caller's trace, named by the request's `traceparent` header or, as MCP carries
 * it in a message, by `_meta.traceparent` (which wins).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { build, type TestApp } from "../helpers/app.js";
import { OtlpReceiver } from "../helpers/otlp-receiver.js";
import { listen } from "../runs/helpers.js";
import { mcpClient, runIdOf } from "./helpers.js";

const HEADER_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const META_TRACE = "5bf92f3577b34da6a3ce929d0e0e4737";
const traceparent = (traceId: string) => `00-${traceId}-00f067aa0ba902b7-01`;
const OTEL_ENV = ["OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_BSP_SCHEDULE_DELAY"] as const;

describe("MCP calls in the caller's trace", () => {
  let receiver: OtlpReceiver;
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    receiver = await OtlpReceiver.start();
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = receiver.url;
    process.env.OTEL_BSP_SCHEDULE_DELAY = "50";
    t = await build({
      settings: { telemetry: { ...DEFAULT_SETTINGS.telemetry } },
      unchecked: true,
    });
    base = await listen(t);
  });
  afterAll(async () => {
    await t?.close();
    for (const name of OTEL_ENV) delete process.env[name];
    await receiver?.close();
  });

  const traceOfRun = async (runId: string) =>
    (await t.storage.getRun(runId))?.trace_context?.split("-")[1];

  it("the traceparent header puts the run in the caller's trace", async () => {
    const client = await mcpClient(`${base}/mcp`, {
      headers: { traceparent: traceparent(HEADER_TRACE) },
    });
    const result = await client.callTool({ name: "echo", arguments: { message: "hi" } });
    expect(await traceOfRun(runIdOf(result))).toBe(HEADER_TRACE);
    await client.close();
  });

  it("_meta.traceparent puts the run in the trace it names", async () => {
    const client = await mcpClient(`${base}/mcp`, {
      headers: { traceparent: traceparent(HEADER_TRACE) },
    });
    const result = await client.callTool({
      name: "echo",
      arguments: { message: "hi" },
      _meta: { traceparent: traceparent(META_TRACE) },
    });
    expect(await traceOfRun(runIdOf(result))).toBe(META_TRACE);
    const bad = await client.callTool({
      name: "echo",
      arguments: { message: "hi" },
      _meta: { traceparent: "not-a-traceparent" },
    });
    expect(await traceOfRun(runIdOf(bad))).toBe(HEADER_TRACE);
    await client.close();
  });
});
