/**
 * The log a person reads: on a terminal one short line per request (probes and the inspector's
 * files at debug), and at start one summary of what is served where.
 */
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { parseConfig } from "../../src/config/load.js";
import { AgentRegistry } from "../../src/config/registry.js";
import { DEFAULT_SETTINGS, mergeSettings } from "../../src/config/settings.js";
import { createStorage } from "../../src/storage/index.js";
import { createLogger } from "../../src/util/logging.js";
import { killAll, startCli, workspace } from "../crash/cli.js";
import { SAMPLE_AGENTS_YAML } from "../helpers/app.js";

async function appWithLog(level: string, compactRequestLog: boolean) {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  const config = await parseConfig(SAMPLE_AGENTS_YAML, { filename: "log.yaml" });
  const storage = createStorage(":memory:");
  await storage.open();
  const app = await buildApp({
    settings: mergeSettings(DEFAULT_SETTINGS, config.server),
    registry: new AgentRegistry(config),
    storage,
    logger: createLogger(level, destination),
    compactRequestLog,
  });
  return {
    app,
    lines,
    close: async () => {
      await app.close();
      await storage.close();
    },
  };
}

describe("the request log on a terminal", () => {
  it("is one line per request with a rounded time; probes and inspector files only at debug", async () => {
    const { app, lines, close } = await appWithLog("info", true);
    await app.inject({ method: "GET", url: "/healthz" });
    await app.inject({ method: "GET", url: "/readyz" });
    await app.inject({ method: "GET", url: "/ui/" });
    await app.inject({ method: "POST", url: "/agents/search", payload: {} });
    await app.inject({ method: "GET", url: "/nowhere" });
    const requestLines = lines.filter((l) => typeof l.request_id === "string");
    expect(requestLines.map((l) => String(l.msg).replace(/ \d+ ms$/, " N ms"))).toEqual([
      "POST /agents/search 200 N ms",
      "GET /nowhere 404 N ms",
    ]);
    expect(lines.some((l) => l.msg === "incoming request" || "responseTime" in l)).toBe(false);
    await close();
  });

  it("logs the quiet requests too at debug", async () => {
    const { app, lines, close } = await appWithLog("debug", true);
    await app.inject({ method: "GET", url: "/healthz" });
    expect(lines.find((l) => String(l.msg).startsWith("GET /healthz 200"))).toMatchObject({
      level: 20,
    });
    await close();
  });

  it("for a log collector (not a terminal) stays Fastify's request and response lines", async () => {
    const { app, lines, close } = await appWithLog("info", false);
    await app.inject({ method: "POST", url: "/agents/search", payload: {} });
    expect(lines.map((l) => l.msg)).toEqual(["incoming request", "request completed"]);
    await close();
  });
});

describe("the start-up line", () => {
  it("is one line naming the agents, the faces and their paths, the inspector and the database", async () => {
    const { configPath, db } = workspace({
      agents: [
        { name: "echo", version: "1.0.0", description: "e", adapter: { type: "echo" } },
        { name: "other", version: "1.0.0", description: "o", adapter: { type: "echo" } },
      ],
    });
    const cli = startCli(["serve", "--config", configPath, "--port", "0", "--db", db]);
    try {
      const url = await cli.listening;
      const startLines = cli.logs().filter((l) => l.level === 30);
      expect(startLines).toHaveLength(1);
      expect(startLines[0]).toMatchObject({
        msg: "acp-agui listening",
        url,
        agents: "echo, other",
        faces:
          "ACP /, AG-UI /ag-ui/{agent}, CopilotKit /copilotkit, A2A /a2a/{agent}, LangGraph /langgraph, MCP /mcp",
        inspector: `${url}/ui`,
        database: db,
      });
      expect(startLines[0]!.replica).toMatch(/^replica-/);
    } finally {
      killAll();
    }
  });
});
