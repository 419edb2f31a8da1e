import { resolve } from "node:path";
import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { buildApp } from "../../src/app.js";
import { parseConfig } from "../../src/config/load.js";
import { AgentRegistry, agentIdFor } from "../../src/config/registry.js";
import { DEFAULT_SETTINGS, mergeSettings } from "../../src/config/settings.js";
import { createStorage } from "../../src/storage/index.js";
import { createLogger } from "../../src/util/logging.js";
import { until } from "../runs/helpers.js";

const KEY = "very-secret-key-0123456789";
const garbage = resolve(import.meta.dirname, "../fixtures/misbehaving/garbage.mjs");

/** A logger writing JSON lines into memory, with the CLI's options (redaction included). */
function memoryLogger(level = "debug") {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  return { logger: createLogger(level, destination), lines };
}

describe("logs", () => {
  it("carry request_id on request lines and run_id, thread_id and agent on run lines; keys never appear", async () => {
    const { logger, lines } = memoryLogger();
    const config = await parseConfig(
      JSON.stringify({
        server: { auth: { keys: [{ key: KEY, name: "ops" }] } },
        agents: [
          {
            name: "sprinkled",
            version: "1.0.0",
            description: "logs warnings for the garbage it yields",
            adapter: { type: "module", path: garbage, export: "sprinkled" },
          },
        ],
      }),
      { filename: "logging.json" },
    );
    const storage = createStorage(":memory:");
    await storage.open();
    const app = await buildApp({
      settings: mergeSettings(DEFAULT_SETTINGS, config.server),
      registry: new AgentRegistry(config),
      storage,
      logger,
    });
    try {
      const ok = await app.inject({
        method: "POST",
        url: "/runs/wait",
        payload: { agent_id: agentIdFor("sprinkled", "1.0.0"), input: {} },
        headers: { authorization: `Bearer ${KEY}` },
      });
      expect(ok.statusCode).toBe(200);
      const refused = await app.inject({
        method: "POST",
        url: "/threads",
        payload: {},
        headers: { "x-api-key": `${KEY}-wrong` },
      });
      expect(refused.statusCode).toBe(401);
      const run = JSON.parse(ok.body).run as { run_id: string };

      const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
      const requests = parsed.filter((l) => l.msg === "incoming request");
      expect(requests.length).toBeGreaterThanOrEqual(2);
      for (const line of requests) expect(line.request_id).toMatch(/^req-/);
      expect(parsed.some((l) => "reqId" in l)).toBe(false);

      await until(
        async () => parsed.some((l) => l.run_id === run.run_id),
        (found) => found,
      );
      const runLines = parsed.filter((l) => l.run_id === run.run_id);
      const dropped = runLines.find((l) => String(l.msg).includes("dropped"));
      expect(dropped).toMatchObject({ run_id: run.run_id, agent: "sprinkled", level: 40 });
      expect(typeof dropped!.thread_id).toBe("string");

      expect(lines.join("\n")).not.toContain(KEY);
    } finally {
      await app.close();
      await storage.close();
    }
  });

  it("redact the API key headers wherever a request or headers object is logged", () => {
    const { logger, lines } = memoryLogger("info");
    logger.info({ req: { headers: { authorization: `Bearer ${KEY}`, "x-api-key": KEY } } }, "a");
    logger.info({ headers: { authorization: `Bearer ${KEY}` } }, "b");
    logger.info({ upstream: { headers: { "x-api-key": KEY } } }, "c");
    const text = lines.join("\n");
    expect(text).not.toContain(KEY);
    expect(text.match(/\[redacted\]/g)).toHaveLength(4);
  });
});
