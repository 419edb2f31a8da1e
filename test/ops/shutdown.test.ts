import { Agent, request } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { parseConfig } from "../../src/config/load.js";
import { AgentRegistry, agentIdFor } from "../../src/config/registry.js";
import { DEFAULT_SETTINGS } from "../../src/config/settings.js";
import { createStorage } from "../../src/storage/index.js";
import { progressScript, until } from "../runs/helpers.js";

describe("closing the app", () => {
  it("refuses new connections at once and lets a running run finish within the grace period", async () => {
    const config = await parseConfig(
      JSON.stringify({
        agents: [
          {
            name: "steady",
            version: "1.0.0",
            description: "about 0.6 s",
            adapter: { type: "scripted", script: progressScript(10), delayMs: 20 },
          },
        ],
      }),
      { filename: "shutdown.json" },
    );
    const storage = createStorage(":memory:");
    await storage.open();
    const app = await buildApp({
      settings: DEFAULT_SETTINGS,
      registry: new AgentRegistry(config),
      storage,
      shutdownGraceMs: 5_000,
    });
    const created = await app.inject({
      method: "POST",
      url: "/runs",
      payload: { agent_id: agentIdFor("steady", "1.0.0"), on_completion: "keep" },
    });
    const runId = JSON.parse(created.body).run_id as string;
    await until(
      () => storage.getRun(runId),
      (run) => (run?.segments.length ?? 0) > 0,
    );

    // A `wait` in flight when the close begins gets its answer; new connections are refused.
    await app.listen({ port: 0, host: "127.0.0.1" });
    const { port } = app.server.address() as AddressInfo;
    const agent = new Agent({ keepAlive: true });
    const waiting = get(port, agent, `/runs/${runId}/wait`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const closed = app.close();
    await new Promise((resolve) => setImmediate(resolve));
    await expect(get(port, new Agent(), "/healthz")).rejects.toThrow(/ECONNREFUSED/);

    const waited = await waiting;
    expect(waited.status).toBe(200);
    expect(JSON.parse(waited.body).run.status).toBe("success");
    agent.destroy();

    await closed;
    expect((await storage.getRun(runId))?.status).toBe("success");
    await storage.close();
  });
});

function get(
  port: number,
  agent: Agent,
  path: string,
): Promise<{ status: number; body: string; connection?: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: "127.0.0.1", path, agent }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => (body += chunk));
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body, connection: res.headers.connection }),
      );
    });
    req.on("error", reject);
    req.end();
  });
}
