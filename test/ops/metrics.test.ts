import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { agentIdFor } from "../../src/config/registry.js";
import type { TestApp } from "../helpers/app.js";
import { slowScript, until } from "../runs/helpers.js";
import { buildServing, echoAgent } from "../security/helpers.js";

const garbage = resolve(import.meta.dirname, "../fixtures/misbehaving/garbage.mjs");
const KEY = "metrics-key-0123456789ab";

/** Parses the Prometheus text format into `name{labels}` → value. */
async function scrape(
  t: TestApp,
  headers: Record<string, string> = {},
): Promise<Map<string, number>> {
  const res = await t.app.inject({ method: "GET", url: "/metrics", headers });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers["content-type"]).toContain("text/plain");
  const samples = new Map<string, number>();
  for (const line of res.body.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const space = line.lastIndexOf(" ");
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

const agents = [
  echoAgent("echo"),
  {
    name: "slow",
    version: "1.0.0",
    description: "slow",
    adapter: { type: "scripted", script: slowScript(30), delayMs: 20 },
    limits: { maxConcurrentRuns: 1 },
  },
  {
    name: "sprinkled",
    version: "1.0.0",
    description: "drops garbage",
    adapter: { type: "module", path: garbage, export: "sprinkled" },
  },
  {
    name: "malformed",
    version: "1.0.0",
    description: "breaks the schema",
    adapter: { type: "module", path: garbage, export: "malformed" },
  },
];
const id = (name: string) => agentIdFor(name, "1.0.0");
const say = { messages: [{ role: "user", content: "count me" }] };

describe("GET /metrics", () => {
  it("exposes runs by agent and status, run durations, events processed and rejected, HTTP latency and process metrics", async () => {
    const t = await buildServing({ agents });
    try {
      for (let i = 0; i < 2; i++) {
        await t.call("POST", "/runs/wait", { agent_id: id("echo"), input: say });
      }
      await t.call("POST", "/runs/wait", { agent_id: id("sprinkled"), input: say });
      await t.call("POST", "/runs/wait", { agent_id: id("malformed"), input: say });
      await t.call("GET", `/threads/${"0".repeat(8)}-0000-4000-8000-${"0".repeat(12)}`);

      const m = await scrape(t);
      // Status changes are reported asynchronously after each run ends.
      await until(
        async () => (await scrape(t)).get('acp_runs_total{agent="malformed",status="error"}'),
        (v) => v === 1,
      );
      const after = await scrape(t);
      expect(after.get('acp_runs_created_total{agent="echo"}')).toBe(2);
      expect(after.get('acp_runs_total{agent="echo",status="success"}')).toBe(2);
      expect(after.get('acp_runs_total{agent="sprinkled",status="success"}')).toBe(1);
      expect(after.get('acp_run_duration_seconds_count{agent="echo",status="success"}')).toBe(2);
      expect(
        after.get('acp_run_duration_seconds_bucket{le="+Inf",agent="echo",status="success"}'),
      ).toBe(2);

      // sprinkled: 6 events, 3 of them garbage dropped; malformed: 4 events, 2 dropped, then 1 invalid.
      expect(after.get('acp_agui_events_total{agent="sprinkled"}')).toBe(6);
      expect(after.get('acp_agui_events_rejected_total{agent="sprinkled",reason="dropped"}')).toBe(
        3,
      );
      expect(after.get('acp_agui_events_rejected_total{agent="malformed",reason="dropped"}')).toBe(
        2,
      );
      expect(after.get('acp_agui_events_rejected_total{agent="malformed",reason="invalid"}')).toBe(
        1,
      );

      expect(
        m.get(
          'acp_http_request_duration_seconds_count{method="POST",route="/runs/wait",status="200"}',
        ),
      ).toBe(4);
      expect(
        m.get(
          'acp_http_request_duration_seconds_count{method="GET",route="/threads/:thread_id",status="404"}',
        ),
      ).toBe(1);
      expect(m.get("acp_open_streams")).toBe(0);
      expect(m.get('acp_webhook_deliveries_total{result="delivered"}')).toBe(0);
      expect(m.has("process_cpu_user_seconds_total")).toBe(true);
      expect(m.has("nodejs_heap_size_used_bytes")).toBe(true);
    } finally {
      await t.close();
    }
  });

  it("shows the queue: pending runs per agent and those executing, and open streams", async () => {
    const t = await buildServing({ agents });
    try {
      const stream = t.app.inject({
        method: "POST",
        url: "/runs/stream",
        payload: { agent_id: id("slow") },
      });
      for (let i = 0; i < 2; i++) await t.call("POST", "/runs", { agent_id: id("slow") });
      await until(
        () => scrape(t),
        (m) => m.get('acp_runs_executing{agent="slow"}') === 1,
      );
      const m = await scrape(t);
      expect(m.get('acp_runs_pending{agent="slow"}')).toBe(3);
      expect(m.get('acp_runs_executing{agent="slow"}')).toBe(1);
      expect(m.get('acp_runs_pending{agent="echo"}')).toBe(0);
      expect(m.get("acp_open_streams")).toBe(1);
      await stream;
      expect((await scrape(t)).get("acp_open_streams")).toBe(0);
    } finally {
      await t.close();
    }
  });

  it("counts webhook deliveries", async () => {
    const received: string[] = [];
    const receiver: Server = createServer((req, res) => {
      received.push(String(req.headers["x-acp-event"]));
      req.resume();
      res.end();
    });
    await new Promise<void>((done) => receiver.listen(0, "127.0.0.1", done));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const t = await buildServing({ server: { webhooks: { allowPrivateTargets: true } }, agents });
    try {
      await t.call("POST", "/runs/wait", { agent_id: id("echo"), input: say, webhook: url });
      const m = await until(
        () => scrape(t),
        (s) => s.get('acp_webhook_deliveries_total{result="delivered"}') === 2,
      );
      expect(m.get('acp_webhook_deliveries_total{result="failed"}')).toBe(0);
      expect(received).toHaveLength(2);
    } finally {
      await t.close();
      receiver.close();
    }
  });

  it("keeps each app's counters to itself (one registry per app)", async () => {
    const a = await buildServing({ agents });
    const b = await buildServing({ agents });
    try {
      await a.call("POST", "/runs/wait", { agent_id: id("echo"), input: say });
      await until(
        () => scrape(a),
        (m) => m.get('acp_runs_total{agent="echo",status="success"}') === 1,
      );
      expect(
        (await scrape(b)).get('acp_runs_total{agent="echo",status="success"}'),
      ).toBeUndefined();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("is public when server.metrics.public, even with API keys; absent when disabled", async () => {
    const open = await buildServing({
      server: { auth: { keys: [{ key: KEY, name: "k" }] }, metrics: { public: true } },
      agents: [echoAgent()],
    });
    const off = await buildServing({
      server: { metrics: { enabled: false } },
      agents: [echoAgent()],
    });
    try {
      expect((await open.app.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(200);
      expect(
        (await open.app.inject({ method: "POST", url: "/threads", payload: {} })).statusCode,
      ).toBe(401);
      expect((await off.app.inject({ method: "GET", url: "/metrics" })).statusCode).toBe(404);
    } finally {
      await open.close();
      await off.close();
    }
  });
});
