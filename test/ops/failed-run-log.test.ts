/**
 * A failed run leaves a warn line naming the agent, the run, the error as its caller saw it and
 * the internal detail; with internals hidden (the default once authentication is on) callers see
 * the error without file paths or upstream URLs, and a reference to that line.
 */
import { resolve } from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { parseConfig } from "../../src/config/load.js";
import { AgentRegistry, agentIdFor } from "../../src/config/registry.js";
import { DEFAULT_SETTINGS, mergeSettings, type SettingsLayer } from "../../src/config/settings.js";
import { createStorage } from "../../src/storage/index.js";
import { createLogger } from "../../src/util/logging.js";

const KEY = "a-key-long-enough-for-the-server-1234";
const thrower = resolve(import.meta.dirname, "../fixtures/modules/throwing-agent.mjs");
const agents = [
  {
    name: "thrower",
    version: "1.0.0",
    description: "throws after its start",
    adapter: { type: "module", path: thrower },
  },
  {
    name: "unreachable",
    version: "1.0.0",
    description: "an AG-UI agent nobody serves",
    adapter: { type: "agui-http", url: "http://127.0.0.1:1/internal/agents/unreachable" },
  },
];

async function serve(server: SettingsLayer) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const config = await parseConfig(JSON.stringify({ agents }), { filename: "failures.json" });
  const storage = createStorage(":memory:");
  await storage.open();
  const app = await buildApp({
    settings: mergeSettings(DEFAULT_SETTINGS, config.server, server),
    registry: new AgentRegistry(config),
    storage,
    logger: createLogger("info", destination),
  });
  const fail = async (name: string) => {
    const reply = await app.inject({
      method: "POST",
      url: "/runs/wait",
      headers: { authorization: `Bearer ${KEY}` },
      payload: { agent_id: agentIdFor(name, "1.0.0"), input: {} },
    });
    const body = reply.json() as {
      run: { run_id: string; status: string };
      output: { description: string };
    };
    expect(body.run.status).toBe("error");
    const line = lines.find((l) => l.msg === "run failed" && l.run_id === body.run.run_id);
    return { shown: body.output.description, line, runId: body.run.run_id };
  };
  return {
    fail,
    close: async () => {
      await app.close();
      await storage.close();
    },
  };
}

describe("a failed run", () => {
  it("leaves a warn line with the agent, the run and the error its caller saw", async () => {
    const server = await serve({});
    const { shown, line, runId } = await server.fail("thrower");
    expect(shown).toBe("agent failed: the agent broke on purpose");
    expect(line).toMatchObject({ level: 40, agent: "thrower", run_id: runId, error: shown });
    expect(line).not.toHaveProperty("detail");
    await server.close();
  });

  it("without authentication, callers see the whole error, upstream URL included", async () => {
    const server = await serve({});
    const { shown, line } = await server.fail("unreachable");
    expect(shown).toContain("http://127.0.0.1:1/internal/agents/unreachable");
    expect(line).toMatchObject({ agent: "unreachable", error: shown });
    await server.close();
  });

  it("with authentication on, callers see no upstream URL but a reference; the log has it", async () => {
    const server = await serve({ auth: { keys: [{ key: KEY, name: "backend" }] } });
    const { shown, line, runId } = await server.fail("unreachable");
    expect(shown).not.toContain("127.0.0.1");
    expect(shown).not.toContain("/internal/agents");
    expect(shown).toContain("[internal address]");
    expect(shown).toContain(`reference: run ${runId}`);
    expect(line).toMatchObject({ agent: "unreachable", run_id: runId, error: shown });
    expect(line?.detail).toContain("http://127.0.0.1:1/internal/agents/unreachable");
    // The agent's own words stay.
    expect((await server.fail("thrower")).shown).toContain("the agent broke on purpose");
    await server.close();
  });

  it("hideInternals: false shows the whole error even with authentication on", async () => {
    const server = await serve({
      auth: { keys: [{ key: KEY, name: "backend" }] },
      hideInternals: false,
    });
    const { shown } = await server.fail("unreachable");
    expect(shown).toContain("http://127.0.0.1:1/internal/agents/unreachable");
    await server.close();
  });
});
